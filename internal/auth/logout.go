package auth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
)

// Revocation says what a logout did about one credential's tokens at its authorization
// server: the "revocation" of `mcptask auth logout --json`, a contract (only ever added to).
type Revocation string

// The revocation outcomes of a logout.
const (
	RevocationRevoked     Revocation = "revoked"     // the authorization server confirmed it
	RevocationUnsupported Revocation = "unsupported" // it offers no revocation endpoint
	RevocationFailed      Revocation = "failed"      // it could not be asked, or refused
	RevocationNone        Revocation = "none"        // no token was stored
)

// LogoutResult is what a logout did with one credential: never a secret. Its JSON is one of
// the "credentials" of `mcptask auth logout --json`.
type LogoutResult struct {
	Server     string     `json:"server"`
	Issuer     string     `json:"issuer"`
	Profile    string     `json:"profile,omitempty"`
	Revocation Revocation `json:"revocation"`
	Error      string     `json:"error,omitempty"`
}

// LogoutOptions say how far a logout goes, and which client secrets its revocations may use.
type LogoutOptions struct {
	// ForgetClient forgets the client registration too (--forget-client); otherwise a
	// dynamic registration is kept so that the next login skips registering again.
	ForgetClient bool
	// ClientID, ClientSecret and ClientKey are the pre-registered client the user named
	// (--client-id, --client-secret-env, --client-key-file): its secret or key authenticates
	// the revocation of that very client's credentials, and of no other's.
	ClientID     string
	ClientSecret string
	ClientKey    crypto.Signer
}

// LogOut is `mcptask auth logout`: for each credential of server and profile in env's store
// (every credential when server is ""), the tokens are revoked at its authorization server
// where it can (Revoke), then forgotten here whether or not that worked. It returns what it
// did with each, in the index's order; on an error, the results so far and the error.
func LogOut(ctx context.Context, env *Env, server, profile string, o LogoutOptions) ([]LogoutResult, error) {
	entries, err := env.Store.Select(server, profile)
	if err != nil {
		return nil, err
	}
	results := []LogoutResult{}
	for _, e := range entries {
		res, err := logOutOne(ctx, env, e, o)
		if err != nil {
			return results, fmt.Errorf("log out of %s: %w", e.ServerURL, err)
		}
		results = append(results, res)
	}
	return results, nil
}

// logOutOne revokes and forgets the tokens of one stored credential, and the client
// registration too with ForgetClient (a registration that is not dynamic is not worth
// keeping). It holds the credential's lock throughout, so that no other process rotates the
// refresh token in between.
func logOutOne(ctx context.Context, env *Env, e IndexEntry, o LogoutOptions) (LogoutResult, error) {
	st := env.Store
	res := LogoutResult{Server: e.ServerURL, Issuer: e.Issuer, Profile: e.Profile, Revocation: RevocationNone}
	unlock, err := st.Lock(ctx, e.Key)
	if err != nil {
		return res, err
	}
	defer unlock()
	cred, err := st.Get(e.Key)
	if err != nil {
		return res, err
	}
	if cred == nil {
		return res, st.Delete(e.Key)
	}
	if cred.RefreshToken != "" || cred.AccessToken != "" {
		_, err := Revoke(ctx, env.HTTP, cred, o.revokeOptions(cred))
		switch {
		case err == nil:
			res.Revocation = RevocationRevoked
		case errors.Is(err, ErrNoRevocationEndpoint):
			res.Revocation = RevocationUnsupported
		default:
			res.Revocation, res.Error = RevocationFailed, err.Error()
		}
	}
	if o.ForgetClient || cred.Client.Registration != RegDynamic {
		return res, st.Delete(e.Key)
	}
	cred.DropTokens()
	return res, st.Put(cred)
}

// revokeOptions are the client secrets the revocation of cred may use: those of o's client
// only, and only for a credential of that very pre-registered client, so that a secret never
// goes to another client's authorization server.
func (o LogoutOptions) revokeOptions(cred *Credential) RevokeOptions {
	if cred.Client.Registration != RegPreRegistered || o.ClientID == "" || o.ClientID != cred.Client.ID {
		return RevokeOptions{}
	}
	return RevokeOptions{ClientSecret: o.ClientSecret, ClientKey: o.ClientKey}
}
