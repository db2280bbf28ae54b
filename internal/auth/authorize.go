package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/oauth2"
)

// Browser modes (--browser).
const (
	BrowserOpen   = "open"
	BrowserPrint  = "print"
	BrowserFollow = "follow"
)

// callbackResult is what arrived at the loopback redirect URI.
type callbackResult struct {
	query url.Values
}

// authorizeCode runs the authorization code grant with PKCE against d's server for scopes and
// returns the credential it produced. prev, when it belongs to the same issuer, lends its
// client registration.
func (s *Session) authorizeCode(ctx context.Context, d *Discovery, prev *Credential, scopes []string) (*Credential, error) {
	if err := s.checkAuthorizable(d); err != nil {
		return nil, err
	}
	ln, err := s.listenCallback(d, prev)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	redirectURI := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)

	client, err := s.chooseClient(ctx, d, prev, redirectURI)
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	cfg := codeConfig(d, client, redirectURI, scopes)
	// RFC 8707 §2: the resource, exactly as the PRM states it, on the authorization request
	// and on the token request.
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource)}
	if promptConsent(d.AS, scopes) {
		s.env.note("auth: %s is an OpenID provider; asking for offline_access with prompt=consent (OpenID Connect Core §11)", d.Issuer)
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	authURL := cfg.AuthCodeURL(state, opts...)

	results := make(chan callbackResult, 1)
	srv := callbackServer(state, results)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	s.authRequests++
	res, err := s.awaitCallback(ctx, d, authURL, redirectURI, results)
	if err != nil {
		return nil, err
	}
	if err := checkIss(res.query, d); err != nil {
		return nil, err
	}
	if e := res.query.Get("error"); e != "" {
		return nil, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL,
			Msg: fmt.Sprintf("the authorization server refused the login: %s %s", termsafe.Line(e), termsafe.Line(res.query.Get("error_description")))}
	}
	code := res.query.Get("code")
	if code == "" {
		return nil, errorf(ReasonFailed, "the authorization response carries no code")
	}
	return s.exchangeCode(ctx, d, &cfg, client, code, verifier, scopes)
}

// checkAuthorizable refuses an authorization request d's server cannot serve safely, and one
// more after maxAuthRequests in this session.
func (s *Session) checkAuthorizable(d *Discovery) error {
	// Security Considerations §Authorization Code Protection: MUST verify PKCE support and
	// refuse to proceed without S256.
	if !slices.Contains(d.AS.CodeChallengeMethodsSupported, "S256") {
		return &Error{Reason: ReasonFailed, Server: s.cfg.ServerURL,
			Msg: fmt.Sprintf("the authorization server %s does not advertise PKCE with S256 (code_challenge_methods_supported); refusing to authorize without it", d.Issuer)}
	}
	if d.AS.AuthorizationEndpoint == "" {
		return errorf(ReasonFailed, "the authorization server %s has no authorization_endpoint", d.Issuer)
	}
	if s.authRequests >= maxAuthRequests {
		return &Error{Reason: ReasonInsufficientScope, Server: s.cfg.ServerURL,
			Msg: fmt.Sprintf("gave up after %d authorization requests to %s", s.authRequests, d.Issuer), Hint: "check the scopes your account may have"}
	}
	return nil
}

// listenCallback opens the loopback listener for the redirect: the port asked for, else the
// one the stored registration names (an exact redirect URI match), else any free one
// (RFC 8252 §7.3).
func (s *Session) listenCallback(d *Discovery, prev *Credential) (net.Listener, error) {
	port := s.cfg.CallbackPort
	if port == 0 && prev != nil && prev.Issuer == d.Issuer {
		if u, err := url.Parse(prev.Client.RedirectURI); err == nil {
			port, _ = strconv.Atoi(u.Port())
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil && port != 0 && s.cfg.CallbackPort == 0 {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, errorf(ReasonFailed, "listen for the OAuth redirect on 127.0.0.1:%d", port).wrap(err)
	}
	return ln, nil
}

// codeConfig is the oauth2 configuration of one authorization code grant by client.
func codeConfig(d *Discovery, client Client, redirectURI string, scopes []string) oauth2.Config {
	cfg := oauth2.Config{
		ClientID:     client.ID,
		ClientSecret: client.Secret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   d.AS.AuthorizationEndpoint,
			TokenURL:  d.AS.TokenEndpoint,
			AuthStyle: authStyle(client.AuthMethod),
		},
		RedirectURL: redirectURI,
		Scopes:      scopes,
	}
	if client.AuthMethod == MethodNone {
		cfg.ClientSecret = ""
	}
	return cfg
}

// callbackServer serves the loopback redirect URI: the first response that carries state goes
// to results; anything else is refused.
func callbackServer(state string, results chan<- callbackResult) *http.Server {
	return &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q.Get("state") != state {
			// Not the answer to this request (a stale tab, another program): ignore it.
			http.Error(w, "mcptask: this authorization response does not belong to the login in progress", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>mcptask</title><p>%s</p>", html.EscapeString("mcptask received the authorization response. You can close this window."))
		select {
		case results <- callbackResult{query: q}:
		default:
		}
	})}
}

// PrintableURL is u as it can be shown on a terminal: the authorization server chose its
// authorization_endpoint, so every byte that is not visible ASCII (C1 controls, bidirectional
// overrides, spaces) is percent-encoded, which a browser reads as the same URL (WHATWG URL
// §percent-decode), instead of reaching the terminal.
func PrintableURL(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		if c := u[i]; c > 0x20 && c < 0x7f {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// awaitCallback sends the person (or, with --browser follow, mcptask itself) to authURL and
// waits for the redirect to arrive at redirectURI, within a bound of its own.
func (s *Session) awaitCallback(ctx context.Context, d *Discovery, authURL, redirectURI string, results chan callbackResult) (callbackResult, error) {
	wait := 5 * time.Minute
	if s.cfg.Browser != BrowserFollow {
		// The wait below is the person's, at the browser: it has its own bound (wait), and a
		// caller's bound on the server's first answer stops counting meanwhile.
		defer pauseClock(ctx)()
	}
	switch s.cfg.Browser {
	case BrowserFollow:
		wait = 30 * time.Second
		if err := s.follow(ctx, authURL, results); err != nil {
			return callbackResult{}, err
		}
	case BrowserPrint:
		s.env.say("Open this URL in a browser to log in to %s:\n\n  %s\n", termsafe.Line(s.cfg.ServerURL), PrintableURL(authURL))
	default:
		s.env.say("Opening the browser to log in to %s (%s).\nIf it does not open, visit:\n\n  %s\n", termsafe.Line(s.cfg.ServerURL), termsafe.Line(d.Issuer), PrintableURL(authURL))
		if s.env.OpenBrowser != nil {
			if err := s.env.OpenBrowser(authURL); err != nil {
				s.env.say("(the browser could not be opened: %v)\n", err)
			}
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case res := <-results:
		return res, nil
	case <-ctx.Done():
		return callbackResult{}, ctx.Err()
	case <-timer.C:
		return callbackResult{}, &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL, Msg: fmt.Sprintf("no authorization response arrived at %s within %s", redirectURI, wait),
			Hint: loginHint(s.cfg.ServerURL, s.cfg.Profile)}
	}
}

// exchangeCode trades code for tokens at d's token endpoint and builds the credential.
func (s *Session) exchangeCode(ctx context.Context, d *Discovery, cfg *oauth2.Config, client Client, code, verifier string, scopes []string) (*Credential, error) {
	hctx := context.WithValue(ctx, oauth2.HTTPClient, s.env.HTTP)
	tok, err := cfg.Exchange(hctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource))
	if err != nil {
		return nil, &Error{Reason: ReasonFailed, Server: s.cfg.ServerURL, Msg: "the code exchange at " + d.AS.TokenEndpoint + " failed", Err: describeOAuth2Err(err)}
	}
	now := s.now()
	tr, err := fromOAuth2(tok, now)
	if err != nil {
		return nil, errorf(ReasonFailed, "the token endpoint %s", d.AS.TokenEndpoint).wrap(err)
	}
	c := &Credential{ServerURL: s.cfg.ServerURL, Resource: d.Resource, Issuer: d.Issuer, Profile: s.cfg.Profile,
		TokenEndpoint: d.AS.TokenEndpoint, Grant: GrantAuthorizationCode, Client: client}
	if client.Registration == RegPreRegistered {
		c.Client.Secret = "" // read from the environment each time, never stored
	}
	c.apply(tr, scopes, now)
	if c.RequestedScopes == nil {
		c.RequestedScopes = []string{}
	}
	return c, nil
}

// checkIss applies RFC 9207 §2.4 as the 2026-07-28 Authorization Response Validation table
// says: a present iss must equal the recorded issuer by simple string comparison, whether or
// not the server advertised it; an advertised iss must be present. On a mismatch nothing of
// the response, its error fields included, is used or shown.
func checkIss(q url.Values, d *Discovery) error {
	iss, present := q.Get("iss"), q.Has("iss")
	switch {
	case present && iss != d.Issuer:
		return &Error{Reason: ReasonIssMismatch, Msg: fmt.Sprintf("the authorization response names the issuer %q, not %q; rejected it unread (RFC 9207 mix-up protection)", termsafe.Line(iss), d.Issuer)}
	case !present && d.AS.IssParameterSupported:
		return &Error{Reason: ReasonIssMismatch, Msg: fmt.Sprintf("the authorization server %s promises an iss parameter but its authorization response has none; rejected it (RFC 9207 §2.4)", d.Issuer)}
	}
	return nil
}

// follow requests the authorization URL itself and follows its redirects until one reaches the
// loopback listener: for authorization servers that approve without a page (test servers,
// pre-approved clients, single sign-on that knows the user). A page that wants a person is an
// error naming the other modes.
//
// Like a browser, it keeps the cookies the authorization server sets while it redirects: an
// OpenID provider keeps its login and consent state in cookies between its hops, and answers
// 400 to a client that drops them. The jar is new for each login, lives in memory only, and
// serves these redirects alone: never the token request, never an MCP request.
func (s *Session) follow(ctx context.Context, authURL string, results chan callbackResult) error {
	hc := *s.env.HTTP
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return err
	}
	hc.Jar = jar
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return errorf(ReasonFailed, "follow the authorization URL").wrap(err)
	}
	defer resp.Body.Close()
	if len(results) > 0 {
		return nil
	}
	return &Error{Reason: ReasonLoginRequired, Server: s.cfg.ServerURL,
		Msg:  fmt.Sprintf("--browser follow: the authorization server answered HTTP %d (%s) instead of redirecting back to mcptask; it wants a person", resp.StatusCode, termsafe.Line(resp.Header.Get("Content-Type"))),
		Hint: "use --browser open or --browser print"}
}

func randomString() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// describeOAuth2Err turns golang.org/x/oauth2's error into a TokenError with the server's
// error code, without the raw body (it may echo a secret).
func describeOAuth2Err(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return &TokenError{Status: status, Code: re.ErrorCode, Description: re.ErrorDescription}
	}
	return err
}

// union returns a ∪ b in order, without duplicates.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func joinScopes(s []string) string { return strings.Join(s, " ") }
