package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Client is the OAuth client mcptask is at one authorization server.
type Client struct {
	ID string `json:"clientId"`
	// Secret is set for a confidential client registered dynamically. A pre-registered
	// secret is read from the environment each time and never stored.
	Secret string `json:"clientSecret,omitempty"`
	// SecretExpiresAt is the registration's client_secret_expires_at (zero: never).
	SecretExpiresAt time.Time `json:"clientSecretExpiresAt,omitzero"`
	// AuthMethod is the token endpoint authentication method: none, client_secret_basic,
	// client_secret_post or private_key_jwt.
	AuthMethod string `json:"authMethod"`
	// Registration says how the client id was obtained: pre-registered, metadata-document
	// (a Client ID Metadata Document URL) or dynamic (RFC 7591).
	Registration string `json:"registration"`
	// RedirectURI is the loopback redirect URI the client was registered with.
	RedirectURI string `json:"redirectUri,omitempty"`
}

// Registration kinds.
const (
	RegPreRegistered    = "pre-registered"
	RegMetadataDocument = "metadata-document"
	RegDynamic          = "dynamic"
)

// Token auth methods.
const (
	MethodNone          = "none"
	MethodSecretBasic   = "client_secret_basic"
	MethodSecretPost    = "client_secret_post"
	MethodPrivateKeyJWT = "private_key_jwt"
)

// Credential is everything stored for one (resource, issuer, profile): the client identity at
// that issuer and the tokens. It lives only in the credential store, never in the ledger.
type Credential struct {
	ServerURL     string `json:"serverUrl"`
	Resource      string `json:"resource"`
	Issuer        string `json:"issuer"`
	Profile       string `json:"profile,omitempty"`
	TokenEndpoint string `json:"tokenEndpoint"`
	// Grant is authorization_code or client_credentials.
	Grant  string `json:"grant"`
	Client Client `json:"client"`

	AccessToken  string    `json:"accessToken,omitempty"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	IssuedAt     time.Time `json:"issuedAt,omitzero"`
	// ExpiresAt is absolute (expires_in counted from the token response); zero when the
	// server gave no lifetime.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Scopes are the scopes granted; RequestedScopes those last asked for (the base of a
	// step-up's union).
	Scopes          []string  `json:"scopes,omitempty"`
	RequestedScopes []string  `json:"requestedScopes,omitempty"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// Grant types.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// Key is the credential's store key: resource, issuer and profile, so two accounts on one
// server (profiles) and one server's two authorization servers never share anything.
func (c *Credential) Key() string { return credentialKey(c.Resource, c.Issuer, c.Profile) }

func credentialKey(resource, issuer, profile string) string {
	h := sha256.Sum256([]byte(resource + "\x00" + issuer + "\x00" + profile))
	return hex.EncodeToString(h[:12])
}

// expiring reports whether the access token is missing, or expires within the refresh
// margin: a minute, or a fifth of its lifetime when that is shorter.
func (c *Credential) expiring(now time.Time) bool {
	if c.AccessToken == "" {
		return true
	}
	if c.ExpiresAt.IsZero() {
		return false
	}
	margin := time.Minute
	if !c.IssuedAt.IsZero() {
		margin = min(margin, c.ExpiresAt.Sub(c.IssuedAt)/5)
	}
	return !now.Add(margin).Before(c.ExpiresAt)
}

// Usable reports whether the access token can be used now.
func (c *Credential) Usable(now time.Time) bool { return !c.expiring(now) }

// Refreshable reports whether a refresh token (or, for client credentials, the grant itself)
// can produce a new access token without a person.
func (c *Credential) Refreshable() bool {
	return c.RefreshToken != "" || c.Grant == GrantClientCredentials
}

// DropTokens forgets the tokens and keeps the client registration.
func (c *Credential) DropTokens() {
	c.AccessToken, c.RefreshToken, c.TokenType = "", "", ""
	c.ExpiresAt, c.IssuedAt = time.Time{}, time.Time{}
	c.Scopes = nil
}
