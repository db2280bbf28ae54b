package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPickIssuer: among the authorization servers a PRM lists, the one given with --issuer is
// chosen wherever it stands; one not listed is refused; a client secret without an issuer is
// refused; without either, the first listed is taken (RFC 9728 §7.6 leaves it to the client).
func TestPickIssuer(t *testing.T) {
	listed := []string{"https://a.example", "https://b.example"}
	for _, c := range []struct {
		cfg    Config
		want   string
		reason Reason
	}{
		{Config{}, "https://a.example", ""},
		{Config{ClientID: "public"}, "https://a.example", ""},
		{Config{ClientIssuer: "https://b.example"}, "https://b.example", ""},
		{Config{ClientID: "ci", ClientSecret: "s", ClientIssuer: "https://b.example"}, "https://b.example", ""},
		{Config{ClientID: "ci", ClientSecret: "s", ClientIssuer: "https://c.example"}, "", ReasonIssuerNotAllowed},
		{Config{ClientID: "ci", ClientSecret: "s"}, "", ReasonIssuerRequired},
		// Issuers are compared as strings (RFC 8414 §3.3): a trailing slash is another issuer.
		{Config{ClientIssuer: "https://b.example/"}, "", ReasonIssuerNotAllowed},
	} {
		s := &Session{cfg: c.cfg}
		got, err := s.pickIssuer(listed)
		if got != c.want || ReasonOf(err) != c.reason {
			t.Errorf("%+v: %q, %v; want %q, reason %q", c.cfg, got, err, c.want, c.reason)
		}
	}
}

// TestBoundClientAsksOnlyConfiguredScopes: a server's challenge names another resource's
// scope at the issuer of the user's pre-registered client. The bound client asks for no
// scope it was not configured with (so it cannot be made to fetch a token for that
// resource), and for exactly the configured ones when there are some; a step-up to the
// server's scope is refused with the flag that would allow it.
func TestBoundClientAsksOnlyConfiguredScopes(t *testing.T) {
	const foreign = "https://management.azure.com/.default"
	for _, c := range []struct {
		scopes []string
		want   string
	}{{nil, ""}, {[]string{"tasks"}, "tasks"}} {
		srv := newMachineServer(t)
		srv.scope = foreign
		env := fileEnv(t, time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC))
		s := NewSession(Config{ServerURL: srv.URL + "/mcp", Login: LoginNever, Grant: GrantClientCredentials,
			ClientID: "cid", ClientSecret: "csecret", ClientIssuer: srv.URL, Scopes: c.scopes}, env)
		if _, err := s.Unauthorized(t.Context(), "", bearerChallenge(t, srv)); err != nil {
			t.Fatalf("scopes %v: %v", c.scopes, err)
		}
		tokens, _, _ := srv.requests()
		if len(tokens) != 1 || strings.Join(tokens[0]["scope"], " ") != c.want {
			t.Fatalf("configured scopes %v: token requests %v, want scope %q", c.scopes, tokens, c.want)
		}
		if c.scopes == nil {
			_, err := s.StepUp(t.Context(), "AT-machine", bearerChallenge(t, srv))
			if ReasonOf(err) != ReasonInsufficientScope || !strings.Contains(err.Error(), "--scopes") {
				t.Fatalf("step-up to the server's scope: %v", err)
			}
			if tokens, _, _ := srv.requests(); len(tokens) != 1 {
				t.Fatalf("the step-up asked for a token: %v", tokens)
			}
		}
	}
}

// TestStoredOnlySessionRunsNothing: the session of an unsigned ledger record, built from a
// run whose settings hold a pre-registered client with its secret and issuer, answers a 401
// with an error naming `mcptask auth login`, and sends nothing to the authorization server;
// a credential already stored for that URL is used as it stands.
func TestStoredOnlySessionRunsNothing(t *testing.T) {
	srv := newMachineServer(t)
	srv.scope = "https://management.azure.com/.default"
	env := fileEnv(t, time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC))
	s := NewSession(Config{ServerURL: srv.URL + "/mcp", Grant: GrantClientCredentials, Interactive: true,
		ClientID: "cid", ClientSecret: "csecret", ClientIssuer: srv.URL, StoredOnly: true}, env)
	_, err := s.Unauthorized(t.Context(), "", bearerChallenge(t, srv))
	if ReasonOf(err) != ReasonLoginRequired || !strings.Contains(err.Error(), "mcptask auth login --server") {
		t.Fatalf("Unauthorized: %v", err)
	}
	if _, err := s.StepUp(t.Context(), "", bearerChallenge(t, srv)); ReasonOf(err) != ReasonLoginRequired {
		t.Fatalf("StepUp: %v", err)
	}
	if tokens, _, _ := srv.requests(); len(tokens) != 0 {
		t.Fatalf("token requests for a stored-only session: %v", tokens)
	}
	// The user logs in for that server; the stored-only session then sends that credential.
	own := NewSession(Config{ServerURL: srv.URL + "/mcp", Login: LoginNever, Grant: GrantClientCredentials,
		ClientID: "cid", ClientSecret: "csecret", ClientIssuer: srv.URL, Scopes: []string{"tasks"}}, env)
	if _, err := LogIn(t.Context(), own); err != nil {
		t.Fatal(err)
	}
	s = NewSession(Config{ServerURL: srv.URL + "/mcp", StoredOnly: true}, env)
	if tok, err := s.Token(t.Context()); err != nil || tok != "AT-machine" {
		t.Fatalf("Token = %q, %v; want the stored one", tok, err)
	}
}

// bearerChallenge is the challenge srv's MCP endpoint answers with.
func bearerChallenge(t *testing.T, srv *machineServer) Challenge {
	t.Helper()
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	ch, ok := BearerChallenge(resp.Header)
	if !ok {
		t.Fatal("no challenge")
	}
	return ch
}

// TestAuthorizationURLReachesNoTerminalRaw: an authorization server whose
// authorization_endpoint holds a bidirectional override and C1 controls (an OSC introducer
// among them) has the URL printed with those bytes percent-encoded, in --browser print and
// open alike, and the issuer shown beside it cleaned.
func TestAuthorizationURLReachesNoTerminalRaw(t *testing.T) {
	const evil = "https://as.example/authorize\u202egnp.exe\u009d0;pwned\u009c\u0085"
	for _, browser := range []string{BrowserPrint, BrowserOpen} {
		var out strings.Builder
		env := &Env{Stderr: &out, OpenBrowser: func(string) error { return nil }}
		s := NewSession(Config{ServerURL: "https://mcp.example/mcp", Browser: browser}, env)
		results := make(chan callbackResult, 1)
		results <- callbackResult{}
		d := &Discovery{Issuer: "https://as.example\u202e"}
		if _, err := s.awaitCallback(t.Context(), d, evil+"?state=x", "", results); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if strings.ContainsAny(got, "\u202e\u009d\u009c\u0085") || !strings.Contains(got, "https://as.example/authorize%E2%80%AEgnp.exe%C2%9D0;pwned%C2%9C%C2%85?state=x") {
			t.Errorf("--browser %s printed %q", browser, got)
		}
	}
}
