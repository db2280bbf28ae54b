package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
	"golang.org/x/oauth2"
)

// tokenResponse is an RFC 6749 §5.1 access token response.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// TokenError is an RFC 6749 §5.2 error answer of a token endpoint.
type TokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("the token endpoint answered HTTP %d", e.Status)
	if e.Code != "" {
		s += " " + termsafe.Line(e.Code)
	}
	if e.Description != "" {
		s += " (" + termsafe.Line(e.Description) + ")"
	}
	return s
}

// invalidGrant reports whether err says the grant (refresh token, code) is no longer valid.
func invalidGrant(err error) bool {
	var te *TokenError
	if errors.As(err, &te) {
		return te.Code == "invalid_grant" || te.Code == "invalid_client" || te.Code == "unauthorized_client"
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client"
	}
	return false
}

// ClientAuth authenticates the client at the token endpoint.
type ClientAuth struct {
	Client Client
	// Key signs private_key_jwt assertions.
	Key crypto.Signer
	// Audience is the assertion's aud: the authorization server's issuer.
	Audience string
}

// apply adds the client authentication of RFC 6749 §2.3 / RFC 7523 §2.2 to a token request.
func (ca ClientAuth) apply(form url.Values, req *http.Request) error {
	c := ca.Client
	switch c.AuthMethod {
	case MethodSecretBasic:
		// RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding.
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	case MethodSecretPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case MethodPrivateKeyJWT:
		if ca.Key == nil {
			return errors.New("private_key_jwt needs a key (--client-key-file)")
		}
		a, err := clientAssertion(ca.Key, c.ID, ca.Audience, time.Now())
		if err != nil {
			return err
		}
		form.Set("client_id", c.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	default:
		form.Set("client_id", c.ID)
	}
	return nil
}

// clientPost builds a form POST to an authorization server's endpoint (token, revocation)
// that carries the client's authentication (ClientAuth.apply: basic, post or a signed
// assertion) and asks for JSON.
func clientPost(ctx context.Context, endpoint string, form url.Values, ca ClientAuth) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, err
	}
	if err := ca.apply(form, req); err != nil {
		return nil, err
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// postToken sends one token request (refresh_token or client_credentials grant) and reads
// the answer. The form is written here rather than by golang.org/x/oauth2's TokenSource
// because a refresh must carry the resource parameter (RFC 8707 §2), which that cannot add.
func postToken(ctx context.Context, hc *http.Client, endpoint string, form url.Values, ca ClientAuth) (*tokenResponse, error) {
	if err := checkEndpoint(endpoint, "token_endpoint"); err != nil {
		return nil, err
	}
	req, err := clientPost(ctx, endpoint, form, ca)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		return nil, &TokenError{Status: resp.StatusCode, Code: e.Error, Description: e.Description}
	}
	var tr tokenResponse
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("the token endpoint answered something that is not a JSON token response: %v", err)
	}
	if err := checkTokenType(tr.AccessToken, tr.TokenType); err != nil {
		return nil, err
	}
	return &tr, nil
}

func checkTokenType(access, typ string) error {
	if access == "" {
		return errors.New("the token response has no access_token")
	}
	if typ != "" && !strings.EqualFold(typ, "bearer") {
		return fmt.Errorf("the token endpoint issued a %q token; mcptask sends Bearer tokens only", termsafe.Line(typ))
	}
	return nil
}

// apply stores a token response in c: expiry made absolute, a rotated refresh token kept,
// the old one kept when the server did not send a new one (RFC 6749 §6).
func (c *Credential) apply(tr *tokenResponse, requested []string, now time.Time) {
	c.AccessToken = tr.AccessToken
	c.TokenType = "Bearer"
	if tr.RefreshToken != "" {
		c.RefreshToken = tr.RefreshToken
	}
	c.IssuedAt = now
	c.ExpiresAt = time.Time{}
	if tr.ExpiresIn > 0 {
		c.ExpiresAt = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if requested != nil {
		c.RequestedScopes = requested
	}
	if tr.Scope != "" {
		c.Scopes = strings.Fields(tr.Scope)
	} else {
		c.Scopes = c.RequestedScopes
	}
	c.UpdatedAt = now
}

// fromOAuth2 converts golang.org/x/oauth2's token to a token response.
func fromOAuth2(t *oauth2.Token, now time.Time) (*tokenResponse, error) {
	if err := checkTokenType(t.AccessToken, t.TokenType); err != nil {
		return nil, err
	}
	tr := &tokenResponse{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken}
	if !t.Expiry.IsZero() {
		tr.ExpiresIn = int64(t.Expiry.Sub(now).Round(time.Second) / time.Second)
		if tr.ExpiresIn <= 0 {
			tr.ExpiresIn = 1
		}
	}
	if s, ok := t.Extra("scope").(string); ok {
		tr.Scope = s
	}
	return tr, nil
}

// authStyle maps a token endpoint auth method to golang.org/x/oauth2's AuthStyle, always
// explicitly: its auto-detection would try one style, then the other, sending the secret
// where the server did not ask for it.
func authStyle(method string) oauth2.AuthStyle {
	if method == MethodSecretBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// ParseClientKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1 RSA) for
// private_key_jwt.
func ParseClientKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM file")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported key type %T (want an EC or RSA private key)", key)
}

// clientAssertion builds the RFC 7523 §2.2 JWT a private_key_jwt client authenticates with:
// iss = sub = client_id, aud = the authorization server, a short life and a unique jti.
func clientAssertion(key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	var alg string
	var h crypto.Hash
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			alg, h = "ES256", crypto.SHA256
		case elliptic.P384():
			alg, h = "ES384", crypto.SHA384
		case elliptic.P521():
			alg, h = "ES512", crypto.SHA512
		default:
			return "", errors.New("unsupported EC curve")
		}
	case *rsa.PublicKey:
		alg, h = "RS256", crypto.SHA256
	default:
		return "", fmt.Errorf("unsupported key type %T", k)
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	var digest []byte
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256([]byte(signing))
		digest = d[:]
	case crypto.SHA384:
		d := sha512.Sum384([]byte(signing))
		digest = d[:]
	default:
		d := sha512.Sum512([]byte(signing))
		digest = d[:]
	}
	sig, err := key.Sign(rand.Reader, digest, h)
	if err != nil {
		return "", err
	}
	if ek, ok := key.Public().(*ecdsa.PublicKey); ok {
		// JWS (RFC 7518 §3.4) wants the raw r || s, not the ASN.1 the signer returns.
		sig, err = ecdsaRaw(sig, (ek.Curve.Params().BitSize+7)/8)
		if err != nil {
			return "", err
		}
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func ecdsaRaw(der []byte, size int) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &sig); err != nil {
		return nil, err
	}
	out := make([]byte, 2*size)
	sig.R.FillBytes(out[:size])
	sig.S.FillBytes(out[size:])
	return out, nil
}
