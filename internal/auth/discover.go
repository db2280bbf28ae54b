package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// ResourceMetadata is the part of an OAuth 2.0 Protected Resource Metadata document (RFC
// 9728 §2) a client uses.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is the part of an authorization server's metadata (RFC 8414 §2, OpenID
// Connect Discovery) a client uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	// IssParameterSupported is authorization_response_iss_parameter_supported (RFC 9207 §3).
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`

	// RevocationEndpoint is where `auth logout` revokes the refresh token (RFC 7009, RFC 8414 §2).
	RevocationEndpoint string `json:"revocation_endpoint"`
	// The OpenID Connect Discovery 1.0 §3 members that tell an OpenID provider (oidc.go).
	SubjectTypesSupported            []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
	PromptValuesSupported            []string `json:"prompt_values_supported"`
}

// Discovery is what the discovery steps found for one MCP server.
type Discovery struct {
	// ServerURL is the MCP endpoint the client asked for.
	ServerURL string
	// Challenge is the WWW-Authenticate challenge that started it (may be empty).
	Challenge Challenge
	PRM       *ResourceMetadata
	// Resource is the canonical resource URI, exactly as the PRM states it (the value of
	// every resource parameter).
	Resource string
	// Issuer is the chosen authorization server's issuer identifier, as the PRM names it and
	// as its metadata confirmed it.
	Issuer string
	AS     *ServerMetadata
}

// maxMetadataBytes caps a metadata document.
const maxMetadataBytes = 1 << 20

// discover runs the discovery steps for serverURL: protected resource metadata (from the
// challenge's resource_metadata, else the path-inserted then the root well-known URI), the
// resource check, the choice of an authorization server among those the metadata lists
// (pick), then its metadata with its issuer check.
func discover(ctx context.Context, hc *http.Client, serverURL string, ch Challenge, pick func(listed []string) (string, error)) (*Discovery, error) {
	d := &Discovery{ServerURL: serverURL, Challenge: ch}
	if u, err := url.Parse(serverURL); err != nil || !secureURL(u) {
		return nil, insecureServer(serverURL)
	}
	prm, err := fetchResourceMetadata(ctx, hc, serverURL, ch)
	if err != nil {
		return nil, err
	}
	d.PRM = prm
	// RFC 9728 §3.3 and §7.3: the resource the metadata describes must be the one asked for,
	// or nothing in it may be used (auth/resource-mismatch).
	if !resourceCovers(prm.Resource, serverURL) {
		return nil, &Error{Reason: ReasonResourceMismatch, Server: serverURL,
			Msg: fmt.Sprintf("the protected resource metadata of %s names the resource %q, not this server; refusing to authorize (RFC 9728 §3.3)", serverURL, termsafe.Line(prm.Resource))}
	}
	d.Resource = prm.Resource
	if len(prm.AuthorizationServers) == 0 {
		return nil, errorf(ReasonFailed, "the protected resource metadata of %s lists no authorization_servers", serverURL)
	}
	// RFC 9728 §7.6 leaves the choice to the client (Session.pickIssuer).
	if d.Issuer, err = pick(prm.AuthorizationServers); err != nil {
		return nil, err
	}
	if err := checkEndpoint(d.Issuer, "authorization server"); err != nil {
		return nil, err
	}
	as, err := fetchServerMetadata(ctx, hc, d.Issuer)
	if err != nil {
		return nil, err
	}
	d.AS = as
	return d, nil
}

// fetchResourceMetadata finds the PRM document. Authorization Server Discovery §Protected
// Resource Metadata Discovery Requirements: the challenge's resource_metadata when present,
// otherwise the well-known URI at the endpoint's path, then at the root.
func fetchResourceMetadata(ctx context.Context, hc *http.Client, serverURL string, ch Challenge) (*ResourceMetadata, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, errorf(ReasonFailed, "server URL %q: %v", serverURL, err)
	}
	var candidates []string
	if rm := ch.ResourceMetadata(); rm != "" {
		if err := checkEndpoint(rm, "resource_metadata"); err != nil {
			return nil, err
		}
		candidates = append(candidates, rm)
	}
	origin := u.Scheme + "://" + u.Host
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	var tried []string
	for _, c := range slices.Compact(candidates) {
		var prm ResourceMetadata
		status, err := getJSON(ctx, hc, c, &prm)
		if ae := (*Error)(nil); errors.As(err, &ae) {
			return nil, ae // a hop the redirect policy refused
		}
		if err != nil {
			return nil, errorf(ReasonFailed, "protected resource metadata %s", c).wrap(err)
		}
		if status == http.StatusOK {
			return &prm, nil
		}
		tried = append(tried, fmt.Sprintf("%s (HTTP %d)", c, status))
	}
	return nil, errorf(ReasonFailed, "%s asked for authorization but publishes no protected resource metadata (tried %s)", serverURL, strings.Join(tried, ", "))
}

// metadataURLs lists the well-known URLs of an issuer in the order Authorization Server
// Discovery §Authorization Server Metadata Discovery requires.
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not a URL", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}, nil
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}, nil
}

// fetchServerMetadata reads the issuer's metadata from the first well-known URL that has it
// and checks that its issuer is identical to the one the URL was built from (RFC 8414 §3.3;
// 2026-07-28 Authorization Server Discovery: "If they differ, the client MUST NOT use the
// metadata").
func fetchServerMetadata(ctx context.Context, hc *http.Client, issuer string) (*ServerMetadata, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, errorf(ReasonFailed, "%v", err)
	}
	var tried []string
	for _, mu := range urls {
		var md ServerMetadata
		status, err := getJSON(ctx, hc, mu, &md)
		if ae := (*Error)(nil); errors.As(err, &ae) {
			return nil, ae // a hop the redirect policy refused
		}
		if err != nil {
			return nil, errorf(ReasonFailed, "authorization server metadata %s", mu).wrap(err)
		}
		if status != http.StatusOK {
			tried = append(tried, fmt.Sprintf("%s (HTTP %d)", mu, status))
			continue
		}
		if md.Issuer != issuer {
			return nil, &Error{Reason: ReasonIssuerMismatch, Msg: fmt.Sprintf("the authorization server metadata at %s says its issuer is %q, not %q; refusing to use it (RFC 8414 §3.3)", mu, termsafe.Line(md.Issuer), issuer)}
		}
		for _, e := range []struct{ v, what string }{{md.AuthorizationEndpoint, "authorization_endpoint"}, {md.TokenEndpoint, "token_endpoint"}, {md.RegistrationEndpoint, "registration_endpoint"}} {
			if e.v == "" {
				continue
			}
			if err := checkEndpoint(e.v, e.what); err != nil {
				return nil, err
			}
		}
		if md.TokenEndpoint == "" {
			return nil, errorf(ReasonFailed, "the authorization server metadata at %s has no token_endpoint", mu)
		}
		return &md, nil
	}
	return nil, errorf(ReasonFailed, "no authorization server metadata for %s (tried %s)", issuer, strings.Join(tried, ", "))
}

// getJSON GETs u and decodes a 200 answer into v. Any other status is returned without a
// decode; only transport failures and undecodable 200 answers are errors.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) (int, error) {
	if err := checkEndpoint(u, "metadata document"); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, unwrapURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return resp.StatusCode, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return 0, err
	}
	if len(data) > maxMetadataBytes {
		return 0, errors.New("document larger than 1 MiB")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return 0, fmt.Errorf("not a JSON metadata document: %v", err)
	}
	return resp.StatusCode, nil
}

func (e *Error) wrap(err error) *Error { e.Err = err; return e }

// resourceCovers reports whether the protected resource named resource covers the MCP
// endpoint serverURL: the same origin (scheme and host compared case-insensitively, default
// port ignored) and a path that is the endpoint's path or a whole-segment prefix of it. A
// root PRM names the origin; a path-specific one names the endpoint itself.
func resourceCovers(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Fragment != "" || r.Host == "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || canonicalHost(r) != canonicalHost(s) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

func canonicalHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port == "" {
		return host
	}
	return net.JoinHostPort(host, port)
}

// checkEndpoint enforces Security Considerations §Communication Security: authorization
// server endpoints are HTTPS, loopback hosts excepted (local development and tests). It runs
// where a URL is learnt (discovery) and again where it is used, since a stored credential's
// token endpoint was learnt by an earlier run.
func checkEndpoint(raw, what string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errorf(ReasonFailed, "%s %q is not a URL", what, termsafe.Line(raw))
	}
	if secureURL(u) {
		return nil
	}
	return errorf(ReasonInsecure, "%s %s is not an https:// URL; refusing to send credentials there", what, termsafe.Line(raw))
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
