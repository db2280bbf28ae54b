package auth

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// ErrNoRevocationEndpoint says the authorization server offers no token revocation (its
// metadata has no revocation_endpoint): logging out can only forget the tokens locally.
var ErrNoRevocationEndpoint = errors.New("the authorization server offers no revocation endpoint")

// ErrNothingToRevoke says the credential holds no token.
var ErrNothingToRevoke = errors.New("no token is stored")

// RevokeOptions are the client secrets a revocation may need, as the token endpoint would:
// the pre-registered client's secret (--client-secret-env) and private_key_jwt key
// (--client-key-file). A dynamically registered client's secret is in the credential.
type RevokeOptions struct {
	ClientSecret string
	ClientKey    crypto.Signer
}

// Revoke asks c's authorization server to revoke its refresh token (RFC 7009), or its access
// token when it holds no refresh token: the logout a user means, not only forgetting the
// tokens here. The revocation endpoint is read from the issuer's metadata now, with the same
// checks as a login (issuer identity, https except loopback). It returns the endpoint used,
// and nil when the server confirmed the revocation; ErrNoRevocationEndpoint when it offers
// none; ErrNothingToRevoke when c holds no token.
func Revoke(ctx context.Context, hc *http.Client, c *Credential, o RevokeOptions) (string, error) {
	token, hint := c.RefreshToken, "refresh_token"
	if token == "" {
		token, hint = c.AccessToken, "access_token"
	}
	if token == "" {
		return "", ErrNothingToRevoke
	}
	md, err := fetchServerMetadata(ctx, hc, c.Issuer)
	if err != nil {
		return "", err
	}
	if md.RevocationEndpoint == "" {
		return "", ErrNoRevocationEndpoint
	}
	endpoint := md.RevocationEndpoint
	if err := checkEndpoint(endpoint, "revocation_endpoint"); err != nil {
		return endpoint, err
	}
	// RFC 7009 §2.1: "The client also includes its authentication credentials as described in
	// Section 2.3. of [RFC6749]": the same client authentication as at the token endpoint.
	client := c.Client
	if client.Registration == RegPreRegistered && client.Secret == "" {
		client.Secret = o.ClientSecret
	}
	if (client.AuthMethod == MethodSecretBasic || client.AuthMethod == MethodSecretPost) && client.Secret == "" {
		return endpoint, fmt.Errorf("the client secret is needed to authenticate the revocation: give --client-id %s --client-secret-env VAR", termsafe.Line(client.ID))
	}
	ca := ClientAuth{Client: client, Key: o.ClientKey, Audience: c.Issuer}
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	return endpoint, sendRevocation(ctx, hc, endpoint, form, ca)
}

// sendRevocation posts form to the revocation endpoint with the client's authentication and
// returns nil when the server confirmed the revocation.
func sendRevocation(ctx context.Context, hc *http.Client, endpoint string, form url.Values, ca ClientAuth) error {
	req, err := clientPost(ctx, endpoint, form, ca)
	if err != nil {
		return err
	}
	// A redirect is a new party: the token and the client's credentials are never sent on to
	// it. The answer is taken as it is, and a 3xx is a failure.
	noRedirects := *hc
	noRedirects.Jar = nil
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirects.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusOK:
		// RFC 7009 §2.2: "The authorization server responds with HTTP status code 200 if the
		// token has been revoked successfully or if the client submitted an invalid token."
		return nil
	case resp.StatusCode/100 == 3:
		return fmt.Errorf("the revocation endpoint answered HTTP %d, a redirect to %s; not followed, so the token went nowhere else", resp.StatusCode, termsafe.Line(resp.Header.Get("Location")))
	}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(data, &e)
	msg := fmt.Sprintf("the revocation endpoint answered HTTP %d", resp.StatusCode)
	if e.Error != "" {
		msg += " " + termsafe.Line(e.Error)
	}
	if e.Description != "" {
		msg += " (" + termsafe.Line(e.Description) + ")"
	}
	return errors.New(msg)
}
