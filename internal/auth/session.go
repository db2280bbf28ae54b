// Package auth is mcptask's OAuth 2.1 client for MCP servers that require authorization
// (MCP 2025-11-25 and 2026-07-28, basic/authorization): discovery from a 401, client
// identity, PKCE, resource indicators, scopes and step-up, RFC 9207 iss checks, token storage
// with refresh, and the client-credentials extension for machines. It is its own package
// because it is a protocol of its own, spoken to other servers (the authorization server),
// with state of its own (the credential store) that must never reach the task ledger.
//
// The hook into MCP traffic is Transport, an http.RoundTripper: every request to the MCP
// server carries the bearer, and a 401 or a 403 insufficient_scope runs the flow and sends
// the request again.
package auth

import (
	"context"
	"crypto"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// maxAuthRequests bounds the authorization requests one process makes for one server
// (Step-Up Authorization Flow: retry "no more than a few times").
const maxAuthRequests = 3

// Login modes (--login).
const (
	LoginAuto  = "auto"
	LoginNever = "never"
)

// Config is what the user asked for, for one MCP server.
type Config struct {
	ServerURL string
	Profile   string
	// Issuer, when set, picks the stored credential of that issuer (a ledger record's).
	Issuer string
	// Login is auto or never; Interactive says a person is at a terminal (stdin and stderr
	// are terminals and CI is unset). ForceLogin is `mcptask auth login`.
	Login       string
	Interactive bool
	ForceLogin  bool
	Browser     string
	// ClientID and ClientSecret are a pre-registered client (--client-id, --client-secret-env).
	ClientID     string
	ClientSecret string
	// ClientIssuer is the authorization server the pre-registered client belongs to (--issuer,
	// oauth.issuer): the only one discovery may choose, and the only one that ever sees
	// ClientSecret or a ClientKey assertion. A secret or key without it is never sent.
	ClientIssuer string
	// ClientMetadataURL is a Client ID Metadata Document URL (--client-metadata-url).
	ClientMetadataURL string
	CallbackPort      int
	// Scopes replaces the scope selection strategy (auth login --scopes, .mcp.json).
	Scopes []string
	// Grant is "" (authorization code) or client_credentials (--grant client-credentials).
	Grant string
	// ClientKey signs private_key_jwt assertions (--client-key-file).
	ClientKey crypto.Signer
	// StoredOnly is a session for a ledger record that no one signed (it names only a URL,
	// and anyone could have planted it): it sends a credential already stored for ServerURL,
	// refreshed at that credential's own token endpoint, and nothing else. No login, client
	// credentials grant, registration or browser runs for it, whatever the server's 401
	// names, so a planted URL cannot obtain a token meant for another resource.
	StoredOnly bool
}

// Env is what sessions share with the outside world.
type Env struct {
	Store *Store
	// HTTP carries the OAuth traffic (metadata, registration, token requests): never the MCP
	// server's own transport, so no bearer leaks to an authorization server.
	HTTP *http.Client
	// Stderr gets the login prompts (the URL to open).
	Stderr io.Writer
	// OpenBrowser opens a URL in the system browser (--browser open).
	OpenBrowser func(string) error
	// Note, when set, gets one line per authorization step for --trace.
	Note func(string)
	Now  func() time.Time
}

func (e *Env) say(format string, args ...any) {
	if e.Stderr != nil {
		fmt.Fprintf(e.Stderr, format, args...)
	}
}

func (e *Env) note(format string, args ...any) {
	if e.Note != nil {
		e.Note(fmt.Sprintf(format, args...))
	}
}

// Session is the authorization state of one MCP server (and profile) in this process. Every
// connection to that server shares it, so many tasks on one server share one refresh.
type Session struct {
	cfg Config
	env *Env

	mu           sync.Mutex
	cred         *Credential
	loaded       bool
	used         bool
	authRequests int
}

// NewSession returns the session of cfg.ServerURL.
func NewSession(cfg Config, env *Env) *Session {
	if cfg.Browser == "" {
		cfg.Browser = BrowserOpen
	}
	if cfg.Login == "" {
		cfg.Login = LoginAuto
	}
	if cfg.StoredOnly {
		// None of the run's client settings apply to a server the user did not choose.
		cfg = Config{ServerURL: cfg.ServerURL, Profile: cfg.Profile, Issuer: cfg.Issuer, StoredOnly: true,
			Login: LoginNever, Browser: BrowserPrint}
	}
	return &Session{cfg: cfg, env: env}
}

func (s *Session) now() time.Time {
	if s.env.Now != nil {
		return s.env.Now()
	}
	return time.Now()
}

// Used reports whether an OAuth credential was used or obtained in this run, and with which
// issuer and profile: what a ledger record keeps.
func (s *Session) Used() (issuer, profile string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.used || s.cred == nil {
		return "", "", false
	}
	return s.cred.Issuer, s.cfg.Profile, true
}

// Identity names whose credential the session uses, without any secret: the server and the
// profile. A result the server marks private is cached per identity, so two accounts on one
// server (two profiles) never see each other's.
func (s *Session) Identity() string { return s.cfg.ServerURL + "\x00" + s.cfg.Profile }

// canLogin says whether an authorization may run here: asked for (auth login), or --login
// auto with a person at a terminal or --browser follow (which needs none). The client
// credentials grant needs no person either.
func (s *Session) canLogin() bool {
	if s.cfg.ForceLogin || s.cfg.Grant == GrantClientCredentials {
		return true
	}
	return s.cfg.Login != LoginNever && (s.cfg.Interactive || s.cfg.Browser == BrowserFollow)
}

// load reads the stored credential for the server once (the newest for its profile, and the
// record's issuer when one was given).
func (s *Session) load() {
	if s.loaded {
		return
	}
	s.loaded = true
	e, err := s.env.Store.Find(s.cfg.ServerURL, s.cfg.Profile, s.cfg.Issuer)
	if err != nil || e == nil {
		if err != nil {
			s.env.note("auth: reading the credential store: %v", err)
		}
		return
	}
	c, err := s.env.Store.Get(e.Key)
	if err != nil {
		s.env.say("mcptask: warning: %v\n", err)
		return
	}
	s.cred = c
}

// Token returns the access token to send now: the stored one, refreshed first when it is
// about to expire. "" means none is known yet; the server's 401 will start discovery.
func (s *Session) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	c := s.cred
	if c == nil {
		return "", nil
	}
	if c.expiring(s.now()) && c.Refreshable() && c.TokenEndpoint != "" {
		if err := s.renewLocked(ctx, c.AccessToken); err != nil {
			s.env.note("auth: refresh before expiry failed: %v", err)
			if s.cred == nil || s.cred.AccessToken == "" {
				return "", nil
			}
		}
	}
	if s.cred == nil {
		return "", nil
	}
	if s.cred.AccessToken != "" {
		s.used = true
	}
	return s.cred.AccessToken, nil
}

// Unauthorized handles a 401 to a request that carried failed ("" for none): discovery runs
// again (an authorization server that moved is followed, and its predecessor's client and
// tokens are not reused), then the stored credential is refreshed, or a login runs where one
// may, or the error says what to do.
func (s *Session) Unauthorized(ctx context.Context, failed string, ch Challenge) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	if s.cred != nil && s.cred.AccessToken != "" && s.cred.AccessToken != failed {
		return s.cred.AccessToken, nil // another request of this process already renewed it
	}
	if s.cfg.StoredOnly {
		return s.storedOnlyRenew(ctx, failed)
	}
	s.env.note("auth: %s answered 401; discovering its authorization server", s.cfg.ServerURL)
	d, err := discover(ctx, s.env.HTTP, s.cfg.ServerURL, ch, s.pickIssuer)
	if err != nil {
		return "", s.fill(err)
	}
	prev := s.cred
	if prev != nil && (prev.Issuer != d.Issuer || prev.Resource != d.Resource) {
		s.env.note("auth: the authorization server is now %s (was %s); not reusing the old client or tokens", d.Issuer, prev.Issuer)
		prev = nil
	}
	if prev == nil {
		if c, err := s.env.Store.Get(credentialKey(d.Resource, d.Issuer, s.cfg.Profile)); err == nil && c != nil {
			prev = c
		}
	}
	s.cred = prev
	if prev != nil {
		if prev.AccessToken != "" && prev.AccessToken != failed && !prev.expiring(s.now()) {
			s.used = true
			return prev.AccessToken, nil // another process renewed it
		}
		if prev.Refreshable() {
			err := s.renewLocked(ctx, failed)
			if err == nil && s.cred != nil && s.cred.AccessToken != "" && s.cred.AccessToken != failed {
				s.used = true
				return s.cred.AccessToken, nil
			}
			if err != nil {
				s.env.note("auth: refresh failed: %v", err)
				if !s.canLogin() {
					return "", &Error{Reason: ReasonRefreshFailed, Server: s.cfg.ServerURL,
						Msg: "the stored login for " + s.cfg.ServerURL + " could not be renewed", Err: err, Hint: loginHint(s.cfg.ServerURL, s.cfg.Profile)}
				}
			}
		}
	}
	return s.obtain(ctx, d, s.initialScopes(d))
}

// StepUp handles a 403 insufficient_scope to a request that carried failed: it authorizes
// again with the union of the scopes asked for before and the scopes challenged (Step-Up
// Authorization Flow), a bounded number of times.
func (s *Session) StepUp(ctx context.Context, failed string, ch Challenge) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	if s.cred != nil && s.cred.AccessToken != "" && s.cred.AccessToken != failed {
		return s.cred.AccessToken, nil
	}
	if s.cfg.StoredOnly {
		return "", s.storedOnlyError("more scope (" + termsafe.Line(ch.Params["scope"]) + ")")
	}
	if s.boundClient() && len(s.cfg.Scopes) == 0 {
		// A bound client asks only for the scopes the user configured: a server's choice could
		// name another resource's scope at the client's own issuer.
		return "", &Error{Reason: ReasonInsufficientScope, Server: s.cfg.ServerURL,
			Msg:  fmt.Sprintf("%s asks for the scopes %q, and the pre-registered client --client-id %s asks only for scopes you configure", s.cfg.ServerURL, termsafe.Line(joinScopes(ch.Scopes())), termsafe.Line(s.cfg.ClientID)),
			Hint: "if that scope is meant for this server, give it with --scopes (or \"scopes\" in the server's oauth settings)"}
	}
	s.env.note("auth: %s answered 403 insufficient_scope (scope %q); stepping up", s.cfg.ServerURL, ch.Params["scope"])
	d, err := discover(ctx, s.env.HTTP, s.cfg.ServerURL, ch, s.pickIssuer)
	if err != nil {
		return "", s.fill(err)
	}
	var had []string
	if s.cred != nil && s.cred.Issuer == d.Issuer {
		had = s.cred.RequestedScopes
		if had == nil {
			had = s.cred.Scopes
		}
	} else {
		s.cred = nil
	}
	scopes := union(had, ch.Scopes())
	scopes = s.withOfflineAccess(d, scopes)
	if !s.canLogin() {
		return "", &Error{Reason: ReasonInsufficientScope, Server: s.cfg.ServerURL,
			Msg:  fmt.Sprintf("%s needs the scopes %q for this request", s.cfg.ServerURL, joinScopes(ch.Scopes())),
			Hint: loginHint(s.cfg.ServerURL, s.cfg.Profile) + " with --scopes " + shellQuote(joinScopes(scopes))}
	}
	if s.authRequests >= maxAuthRequests {
		return "", &Error{Reason: ReasonInsufficientScope, Server: s.cfg.ServerURL,
			Msg: fmt.Sprintf("%s still refuses the request for want of scope %q after %d authorizations", s.cfg.ServerURL, joinScopes(ch.Scopes()), s.authRequests)}
	}
	return s.obtain(ctx, d, scopes)
}

// Login runs an authorization now (`mcptask auth login`): it asks the server for its
// challenge first, so that a server that names its metadata only in WWW-Authenticate is
// found too.
func (s *Session) Login(ctx context.Context) (*Credential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	if u, err := url.Parse(s.cfg.ServerURL); err != nil || !secureURL(u) {
		return nil, insecureServer(s.cfg.ServerURL)
	}
	ch, status, err := probe(ctx, s.env.HTTP, s.cfg.ServerURL)
	if err != nil {
		return nil, errorf(ReasonFailed, "reach %s", s.cfg.ServerURL).wrap(err)
	}
	d, err := discover(ctx, s.env.HTTP, s.cfg.ServerURL, ch, s.pickIssuer)
	if err != nil {
		if status != http.StatusUnauthorized && ReasonOf(err) == ReasonFailed {
			return nil, fmt.Errorf("%s did not ask for a login (it answered HTTP %d) and publishes no protected resource metadata: it does not use OAuth", s.cfg.ServerURL, status)
		}
		return nil, s.fill(err)
	}
	prev := s.cred
	if prev == nil || prev.Issuer != d.Issuer {
		prev, _ = s.env.Store.Get(credentialKey(d.Resource, d.Issuer, s.cfg.Profile))
	}
	s.cred = prev
	if _, err := s.obtain(ctx, d, s.initialScopes(d)); err != nil {
		return nil, err
	}
	return s.cred, nil
}

// storedOnlyRenew answers a 401 in a StoredOnly session: the stored credential for the server,
// refreshed at its own token endpoint, or an error saying how the user can log in.
func (s *Session) storedOnlyRenew(ctx context.Context, failed string) (string, error) {
	if s.cred != nil && s.cred.Refreshable() && s.cred.TokenEndpoint != "" {
		err := s.renewLocked(ctx, failed)
		if err == nil && s.cred != nil && s.cred.AccessToken != "" && s.cred.AccessToken != failed {
			s.used = true
			return s.cred.AccessToken, nil
		}
		if err != nil {
			s.env.note("auth: refresh failed: %v", err)
		}
	}
	return "", s.storedOnlyError("a login")
}

// storedOnlyError says why a StoredOnly session does not authorize, and what to do.
func (s *Session) storedOnlyError(what string) error {
	return &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL,
		Msg: fmt.Sprintf("%s asks for %s, but the task's ledger record names only its URL and carries no signature of this user's mcptask, so no login, client credentials grant or browser runs for it",
			s.cfg.ServerURL, what),
		Hint: "if you trust that server, " + loginHint(s.cfg.ServerURL, s.cfg.Profile) + " and try again"}
}

// initialScopes is the Scope Selection Strategy: the configured scopes, else (unless the
// client is bound to its issuer) the challenge's scope, else all of the PRM's
// scopes_supported, else none; plus offline_access when the authorization server lists it.
func (s *Session) initialScopes(d *Discovery) []string {
	var scopes []string
	switch {
	case len(s.cfg.Scopes) > 0:
		scopes = s.cfg.Scopes
	case s.boundClient():
		// A client bound to its issuer asks only for what the user configured: a scope the
		// server chose could be another resource's at that issuer (and many authorization
		// servers do not bind a token to the resource parameter).
	case len(d.Challenge.Scopes()) > 0:
		scopes = d.Challenge.Scopes()
	case d.PRM != nil && len(d.PRM.ScopesSupported) > 0:
		scopes = d.PRM.ScopesSupported
	}
	return s.withOfflineAccess(d, scopes)
}

// withOfflineAccess adds offline_access when, and only when, the authorization server's
// scopes_supported lists it (2026-07-28 §Refresh Tokens); never for client credentials.
func (s *Session) withOfflineAccess(d *Discovery, scopes []string) []string {
	if s.cfg.Grant == GrantClientCredentials || !slices.Contains(d.AS.ScopesSupported, "offline_access") || slices.Contains(scopes, "offline_access") {
		return scopes
	}
	return append(slices.Clone(scopes), "offline_access")
}

// obtain gets a new credential for d: the client credentials grant, or an authorization
// where one may run. It stores the result.
func (s *Session) obtain(ctx context.Context, d *Discovery, scopes []string) (string, error) {
	var c *Credential
	var err error
	switch {
	case s.cfg.Grant == GrantClientCredentials:
		c, err = s.clientCredentials(ctx, d, scopes)
	case !s.canLogin():
		reason := ReasonLoginRequired
		msg := s.cfg.ServerURL + " requires a login"
		if s.cfg.Login == LoginNever {
			msg += " (--login never)"
		} else {
			msg += " and no one is at a terminal to log in (use --browser follow for servers that approve without a page)"
		}
		return "", &Error{Reason: reason, Server: s.cfg.ServerURL, Msg: msg, Hint: loginHint(s.cfg.ServerURL, s.cfg.Profile)}
	default:
		s.env.note("auth: authorizing at %s with scope %q", d.Issuer, joinScopes(scopes))
		c, err = s.authorizeCode(ctx, d, s.cred, scopes)
	}
	if err != nil {
		return "", s.fill(err)
	}
	if err := s.save(ctx, c); err != nil {
		return "", err
	}
	s.cred = c
	s.used = true
	return c.AccessToken, nil
}

// clientCredentials runs the client credentials grant (the MCP client-credentials
// extension): client_secret_basic/post with --client-secret-env, private_key_jwt with
// --client-key-file.
func (s *Session) clientCredentials(ctx context.Context, d *Discovery, scopes []string) (*Credential, error) {
	if s.cfg.ClientID == "" {
		return nil, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL, Msg: "--grant client-credentials needs --client-id"}
	}
	if err := s.checkBound(d.Issuer); err != nil {
		return nil, err
	}
	client := Client{ID: s.cfg.ClientID, Registration: RegPreRegistered}
	switch {
	case s.cfg.ClientKey != nil:
		client.AuthMethod = MethodPrivateKeyJWT
	case s.cfg.ClientSecret != "":
		client.Secret = s.cfg.ClientSecret
		client.AuthMethod = pickSecretMethod(true, d.AS.TokenEndpointAuthMethodsSupported)
	default:
		return nil, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL, Msg: "--grant client-credentials needs --client-secret-env or --client-key-file"}
	}
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {d.Resource}}
	if len(scopes) > 0 {
		form.Set("scope", joinScopes(scopes))
	}
	s.env.note("auth: client credentials grant at %s", d.AS.TokenEndpoint)
	tr, err := postToken(ctx, s.env.HTTP, d.AS.TokenEndpoint, form, ClientAuth{Client: client, Key: s.cfg.ClientKey, Audience: d.Issuer})
	if err != nil {
		return nil, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL, Msg: "the client credentials grant at " + d.AS.TokenEndpoint + " failed", Err: err}
	}
	client.Secret = ""
	c := &Credential{ServerURL: s.cfg.ServerURL, Resource: d.Resource, Issuer: d.Issuer, Profile: s.cfg.Profile,
		TokenEndpoint: d.AS.TokenEndpoint, Grant: GrantClientCredentials, Client: client}
	c.apply(tr, scopes, s.now())
	return c, nil
}

// renewLocked renews the current credential under the store's lock for it. Inside the lock
// the store is read again: when another process already rotated the tokens, their result is
// used; otherwise the refresh (or client credentials) request is made and its result saved.
// A refresh token the server refused is dropped only if the store still holds that very one.
func (s *Session) renewLocked(ctx context.Context, failed string) error {
	c := s.cred
	key := c.Key()
	unlock, err := s.env.Store.Lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.env.Store.Get(key)
	if err != nil {
		return err
	}
	if cur == nil {
		cur = c
	}
	now := s.now()
	if cur.AccessToken != "" && cur.AccessToken != failed && !cur.expiring(now) {
		s.cred = cur
		return nil
	}
	if !cur.Refreshable() || cur.TokenEndpoint == "" {
		s.cred = cur
		return fmt.Errorf("no refresh token")
	}
	tr, err := s.renewRequest(ctx, cur)
	if err != nil {
		if invalidGrant(err) {
			cur.DropTokens()
			cur.UpdatedAt = now
			if perr := s.env.Store.Put(cur); perr != nil {
				s.env.note("auth: could not drop the refused credential: %v", perr)
			}
		}
		s.cred = cur
		return err
	}
	cur.apply(tr, nil, now)
	if err := s.env.Store.Put(cur); err != nil {
		return err
	}
	s.cred = cur
	return nil
}

// renewRequest asks cur's token endpoint for new tokens: with its refresh token, or, for a
// client credentials grant that has none, with the client's credentials again.
func (s *Session) renewRequest(ctx context.Context, cur *Credential) (*tokenResponse, error) {
	client := cur.Client
	if client.Registration == RegPreRegistered {
		// The secret and key come from this run's flags: they go only to their own issuer.
		if err := s.checkBound(cur.Issuer); err != nil {
			return nil, err
		}
	}
	if client.Registration == RegPreRegistered && client.Secret == "" {
		client.Secret = s.cfg.ClientSecret
	}
	ca := ClientAuth{Client: client, Key: s.cfg.ClientKey, Audience: cur.Issuer}
	if cur.Grant == GrantClientCredentials && cur.RefreshToken == "" {
		form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {cur.Resource}}
		if len(cur.RequestedScopes) > 0 {
			form.Set("scope", joinScopes(cur.RequestedScopes))
		}
		return postToken(ctx, s.env.HTTP, cur.TokenEndpoint, form, ca)
	}
	s.env.note("auth: refreshing the access token at %s", cur.TokenEndpoint)
	// RFC 6749 §6 with RFC 8707 §2: the resource goes on the refresh request too.
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken}, "resource": {cur.Resource}}
	return postToken(ctx, s.env.HTTP, cur.TokenEndpoint, form, ca)
}

// save stores a new credential under its lock.
func (s *Session) save(ctx context.Context, c *Credential) error {
	unlock, err := s.env.Store.Lock(ctx, c.Key())
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.env.Store.Put(c); err != nil {
		return fmt.Errorf("store the OAuth credential: %w", err)
	}
	return nil
}

// fill completes an *Error with the server and hint.
func (s *Session) fill(err error) error {
	if ae, ok := err.(*Error); ok {
		if ae.Server == "" {
			ae.Server = s.cfg.ServerURL
		}
		return ae
	}
	return err
}

// probe sends one unauthenticated JSON-RPC request to learn the server's challenge.
func probe(ctx context.Context, hc *http.Client, serverURL string) (Challenge, int, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"ping"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, stringsReader(body))
	if err != nil {
		return Challenge{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	// A redirect is not followed (its status is the answer, and discovery goes on from the
	// well-known URIs): the probe carries nothing secret, but its body goes nowhere else.
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := nc.Do(req)
	if err != nil {
		return Challenge{}, 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ch, _ := BearerChallenge(resp.Header)
	return ch, resp.StatusCode, nil
}

// ForceLogin makes the session authorize even without a person at a terminal: the user
// asked for it (`mcptask auth login`).
func (s *Session) ForceLogin() { s.mu.Lock(); s.cfg.ForceLogin = true; s.mu.Unlock() }
