package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// chooseClient picks the client identity for an authorization at d's server, in the order
// of Client Registration §(priority): pre-registered (--client-id), a Client ID Metadata
// Document when the server supports them, a registration this store already holds for the
// same issuer (Authorization Server Binding: never one from another issuer), Dynamic Client
// Registration, else an error naming the flag to give.
func (s *Session) chooseClient(ctx context.Context, d *Discovery, prev *Credential, redirectURI string) (Client, error) {
	cfg := s.cfg
	switch {
	case cfg.ClientID != "":
		if err := s.checkBound(d.Issuer); err != nil {
			return Client{}, err
		}
		c := Client{ID: cfg.ClientID, Secret: cfg.ClientSecret, Registration: RegPreRegistered, RedirectURI: redirectURI}
		c.AuthMethod = pickSecretMethod(cfg.ClientSecret != "", d.AS.TokenEndpointAuthMethodsSupported)
		return c, nil
	case cfg.ClientMetadataURL != "" && d.AS.ClientIDMetadataDocumentSupported:
		return Client{ID: cfg.ClientMetadataURL, AuthMethod: MethodNone, Registration: RegMetadataDocument, RedirectURI: redirectURI}, nil
	case prev != nil && prev.Issuer == d.Issuer && prev.Client.Registration == RegDynamic && prev.Client.ID != "" &&
		(prev.Client.SecretExpiresAt.IsZero() || s.now().Before(prev.Client.SecretExpiresAt)):
		c := prev.Client
		return c, nil
	case d.AS.RegistrationEndpoint != "":
		return s.register(ctx, d, redirectURI)
	}
	hint := "give --client-id (and --client-secret-env) of a client registered at " + d.Issuer
	if d.AS.ClientIDMetadataDocumentSupported {
		hint += ", or --client-metadata-url with the URL of mcptask's client metadata document"
	}
	return Client{}, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL,
		Msg: fmt.Sprintf("the authorization server %s offers no dynamic client registration and no client is configured for it", d.Issuer), Hint: hint}
}

// pickSecretMethod chooses how a pre-registered client authenticates: without a secret, as a
// public client; with one, client_secret_basic unless the server lists only
// client_secret_post (RFC 8414 §2: an absent list means client_secret_basic).
func pickSecretMethod(hasSecret bool, supported []string) string {
	if !hasSecret {
		return MethodNone
	}
	if len(supported) == 0 || slices.Contains(supported, MethodSecretBasic) {
		return MethodSecretBasic
	}
	if slices.Contains(supported, MethodSecretPost) {
		return MethodSecretPost
	}
	return MethodSecretBasic
}

// register performs RFC 7591 Dynamic Client Registration as a native public client
// (Client Registration §Application Type: MUST specify application_type), then uses the auth
// method the server actually registered.
func (s *Session) register(ctx context.Context, d *Discovery, redirectURI string) (Client, error) {
	data, err := s.postRegistration(ctx, d, redirectURI)
	if err != nil {
		return Client{}, err
	}
	var r struct {
		ClientID              string `json:"client_id"`
		ClientSecret          string `json:"client_secret"`
		ClientSecretExpiresAt int64  `json:"client_secret_expires_at"`
		AuthMethod            string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ClientID == "" {
		return Client{}, errorf(ReasonFailed, "the registration response of %s has no client_id", d.AS.RegistrationEndpoint)
	}
	c := Client{ID: r.ClientID, Secret: r.ClientSecret, Registration: RegDynamic, RedirectURI: redirectURI, AuthMethod: r.AuthMethod}
	if r.ClientSecretExpiresAt > 0 {
		c.SecretExpiresAt = time.Unix(r.ClientSecretExpiresAt, 0)
	}
	if c.AuthMethod == "" {
		// The server did not say; a secret it issued is used the way its metadata allows.
		c.AuthMethod = MethodNone
		if c.Secret != "" {
			sup := d.AS.TokenEndpointAuthMethodsSupported
			switch {
			case len(sup) == 0 || slices.Contains(sup, MethodSecretBasic):
				c.AuthMethod = MethodSecretBasic
			case slices.Contains(sup, MethodSecretPost):
				c.AuthMethod = MethodSecretPost
			}
		}
	}
	switch c.AuthMethod {
	case MethodNone, MethodSecretBasic, MethodSecretPost:
	default:
		return Client{}, errorf(ReasonFailed, "the authorization server registered mcptask with token_endpoint_auth_method %q, which mcptask cannot use", termsafe.Line(c.AuthMethod))
	}
	return c, nil
}

// postRegistration sends the registration request to d's registration endpoint and returns
// the body of its success response (bounded by maxMetadataBytes).
func (s *Session) postRegistration(ctx context.Context, d *Discovery, redirectURI string) ([]byte, error) {
	body, _ := json.Marshal(map[string]any{
		"client_name":                "mcptask",
		"client_uri":                 "https://github.com/mcptask/mcptask",
		"application_type":           "native",
		"redirect_uris":              []string{redirectURI},
		"grant_types":                []string{GrantAuthorizationCode, "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": MethodNone,
	})
	if err := checkEndpoint(d.AS.RegistrationEndpoint, "registration_endpoint"); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.AS.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.env.HTTP.Do(req)
	if err != nil {
		return nil, errorf(ReasonFailed, "register with %s", d.AS.RegistrationEndpoint).wrap(unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		return nil, &Error{Reason: ReasonFailed, Server: s.cfg.ServerURL,
			Msg:  fmt.Sprintf("the authorization server refused the client registration: HTTP %d %s %s", resp.StatusCode, termsafe.Line(e.Error), termsafe.Line(e.Description)),
			Hint: "register mcptask there by hand and give --client-id"}
	}
	return data, nil
}
