package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// machineServer is an MCP server that answers 401 and is its own authorization server: it
// grants client_credentials to the client "cid" with the secret "csecret" (a 1 h token) and
// revokes what it is asked to, recording every token and revocation request.
type machineServer struct {
	*httptest.Server
	mu      sync.Mutex
	tokens  []map[string][]string
	revokes []map[string][]string
	basic   []string
	// scope, when set, is named in the 401's challenge and the PRM's scopes_supported.
	scope string
}

func newMachineServer(t *testing.T) *machineServer {
	t.Helper()
	s := &machineServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		ch := `Bearer resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`
		if s.scope != "" {
			ch += `, scope="` + s.scope + `"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		prm := map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}
		if s.scope != "" {
			prm["scopes_supported"] = []string{s.scope}
		}
		_ = json.NewEncoder(w).Encode(prm)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": s.URL, "token_endpoint": s.URL + "/token",
			"revocation_endpoint": s.URL + "/revoke", "grant_types_supported": []string{"client_credentials"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, _ := r.BasicAuth()
		s.mu.Lock()
		s.tokens = append(s.tokens, r.PostForm)
		s.mu.Unlock()
		if r.PostForm.Get("grant_type") != GrantClientCredentials || id != "cid" || secret != "csecret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "AT-machine", "token_type": "Bearer", "expires_in": 3600, "scope": "tasks"})
	})
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, _ := r.BasicAuth()
		s.mu.Lock()
		s.revokes = append(s.revokes, r.PostForm)
		s.basic = append(s.basic, id+":"+secret)
		s.mu.Unlock()
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *machineServer) requests() (tokens, revokes []map[string][]string, basic []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens, s.revokes, s.basic
}

// fileEnv is an Env whose store is real files in a temporary directory, at a fixed time.
func fileEnv(t *testing.T, now time.Time) *Env {
	t.Helper()
	return &Env{Store: &Store{Dir: t.TempDir(), Mode: StoreFile}, HTTP: NewHTTPClient(http.DefaultTransport, 10*time.Second),
		Now: func() time.Time { return now }}
}

// TestLogInStatusLogOut plays `auth login`, `auth status` and `auth logout` of a machine
// client against a real loopback server: the login stores the granted token and describes it
// as the store holds it, status finds it again (and only for its own server), and logout
// revokes the token with the client's secret and forgets a pre-registered client entirely.
func TestLogInStatusLogOut(t *testing.T) {
	srv := newMachineServer(t)
	now := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	env := fileEnv(t, now)
	s := NewSession(Config{ServerURL: srv.URL + "/mcp", Login: LoginNever, Grant: GrantClientCredentials,
		ClientID: "cid", ClientSecret: "csecret", ClientIssuer: srv.URL}, env)

	got, err := LogIn(t.Context(), s)
	if err != nil {
		t.Fatalf("LogIn: %v", err)
	}
	want := Status{Server: srv.URL + "/mcp", Resource: srv.URL + "/mcp", Issuer: srv.URL, Grant: GrantClientCredentials,
		Registration: RegPreRegistered, ClientID: "cid", Scopes: []string{"tasks"}, ExpiresAt: now.Add(time.Hour),
		Usable: true, Refreshable: true, Store: StoreFile}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LogIn status:\n got %+v\nwant %+v", got, want)
	}
	if tokens, _, _ := srv.requests(); len(tokens) != 1 {
		t.Fatalf("%d token requests, want 1 (a login even with --login never)", len(tokens))
	}

	r, err := Statuses(env.Store, "", "", now)
	if err != nil || !r.OK || len(r.Unreadable) != 0 || len(r.Credentials) != 1 || !reflect.DeepEqual(r.Credentials[0], want) {
		t.Fatalf("Statuses (all) = %+v, %v", r, err)
	}
	if r, _ := Statuses(env.Store, srv.URL+"/mcp", "alice", now); r.OK || r.Credentials == nil || len(r.Credentials) != 0 {
		t.Fatalf("Statuses of another profile = %+v, want none (and not OK)", r)
	}
	later := now.Add(2 * time.Hour)
	r, _ = Statuses(env.Store, srv.URL+"/mcp", "", later)
	if !r.OK || len(r.Credentials) != 1 || r.Credentials[0].Usable || r.Credentials[0].State() != "expired, refreshable" {
		t.Fatalf("Statuses two hours later = %+v, want expired but refreshable (client credentials)", r)
	}

	results, err := LogOut(t.Context(), env, srv.URL+"/mcp", "", LogoutOptions{ClientID: "cid", ClientSecret: "csecret"})
	if err != nil {
		t.Fatalf("LogOut: %v", err)
	}
	if len(results) != 1 || results[0] != (LogoutResult{Server: srv.URL + "/mcp", Issuer: srv.URL, Revocation: RevocationRevoked}) {
		t.Fatalf("LogOut = %+v", results)
	}
	_, revokes, basic := srv.requests()
	if len(revokes) != 1 || revokes[0]["token"][0] != "AT-machine" || revokes[0]["token_type_hint"][0] != "access_token" || basic[0] != "cid:csecret" {
		t.Fatalf("revocation requests %v (basic %v)", revokes, basic)
	}
	if entries, _ := env.Store.List(); len(entries) != 0 {
		t.Fatalf("a pre-registered client's credential was kept: %+v", entries)
	}
	if files, _ := filepath.Glob(filepath.Join(env.Store.Dir, "credentials", "*.json")); len(files) != 0 {
		t.Fatalf("credential files left: %v", files)
	}
}

// storeCred puts a dynamically registered public client's credential for issuer into st.
func storeCred(t *testing.T, st *Store, issuer, profile string) *Credential {
	t.Helper()
	c := testCredential(issuer, Client{ID: "dyn", AuthMethod: MethodNone, Registration: RegDynamic})
	c.Profile, c.UpdatedAt = profile, time.Now()
	if err := st.Put(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLogOutSaysWhatHappened: a server without revocation, one that refuses and a credential
// without tokens each get their own outcome; the tokens are forgotten in every case, a
// dynamic registration is kept unless ForgetClient, and a profile is logged out alone.
func TestLogOutSaysWhatHappened(t *testing.T) {
	none := newRevocationServer(t, "", nil)
	busy := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	env := fileEnv(t, time.Now())
	bob := storeCred(t, env.Store, none.URL, "bob")
	alice := storeCred(t, env.Store, none.URL, "alice")

	results, err := LogOut(t.Context(), env, bob.ServerURL, "alice", LogoutOptions{})
	if err != nil || len(results) != 1 || results[0].Profile != "alice" || results[0].Revocation != RevocationUnsupported {
		t.Fatalf("LogOut alice = %+v, %v", results, err)
	}
	kept, _ := env.Store.Get(alice.Key())
	if kept == nil || kept.AccessToken != "" || kept.RefreshToken != "" || kept.Client.ID != "dyn" {
		t.Fatalf("alice after logout: %+v, want the registration without tokens", kept)
	}
	if b, _ := env.Store.Get(bob.Key()); b == nil || b.RefreshToken != "RT-secret" {
		t.Fatalf("bob's credential was touched: %+v", b)
	}

	results, err = LogOut(t.Context(), env, "", "", LogoutOptions{})
	if err != nil || len(results) != 2 {
		t.Fatalf("LogOut all = %+v, %v", results, err)
	}
	outcomes := map[string]Revocation{}
	for _, r := range results {
		outcomes[r.Profile] = r.Revocation
	}
	if outcomes["bob"] != RevocationUnsupported || outcomes["alice"] != RevocationNone {
		t.Fatalf("outcomes %v, want bob unsupported and alice none (no token left)", outcomes)
	}

	c := storeCred(t, env.Store, busy.URL, "")
	results, err = LogOut(t.Context(), env, c.ServerURL, "", LogoutOptions{ForgetClient: true})
	if err != nil {
		t.Fatal(err)
	}
	var failed *LogoutResult
	for i := range results {
		if results[i].Issuer == busy.URL {
			failed = &results[i]
		}
	}
	if failed == nil || failed.Revocation != RevocationFailed || !strings.Contains(failed.Error, "HTTP 503") {
		t.Fatalf("LogOut at a refusing server = %+v", results)
	}
	if got, _ := env.Store.Get(c.Key()); got != nil {
		t.Fatalf("ForgetClient kept %+v", got)
	}
}

// TestLogOutSecretOnlyForItsClient: the secret of the client the user named authenticates the
// revocation of that very pre-registered client's credential only; another client's
// credential (another authorization server's, under --all) never gets it, so its revocation
// fails without a request and its tokens are forgotten all the same.
func TestLogOutSecretOnlyForItsClient(t *testing.T) {
	o := LogoutOptions{ClientID: "mine", ClientSecret: "s3cret"}
	for _, tc := range []struct {
		client Client
		want   string
	}{
		{Client{ID: "mine", Registration: RegPreRegistered}, "s3cret"},
		{Client{ID: "theirs", Registration: RegPreRegistered}, ""},
		{Client{ID: "mine", Registration: RegDynamic}, ""},
	} {
		if got := o.revokeOptions(&Credential{Client: tc.client}).ClientSecret; got != tc.want {
			t.Errorf("client %s (%s): secret %q, want %q", tc.client.ID, tc.client.Registration, got, tc.want)
		}
	}

	theirs := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {})
	env := fileEnv(t, time.Now())
	c := testCredential(theirs.URL, Client{ID: "theirs", AuthMethod: MethodSecretPost, Registration: RegPreRegistered})
	c.UpdatedAt = time.Now()
	if err := env.Store.Put(c); err != nil {
		t.Fatal(err)
	}
	results, err := LogOut(t.Context(), env, "", "", o)
	if err != nil || len(results) != 1 || results[0].Revocation != RevocationFailed || !strings.Contains(results[0].Error, "--client-secret-env") {
		t.Fatalf("LogOut = %+v, %v", results, err)
	}
	if reqs, _ := theirs.got(); len(reqs) != 0 {
		t.Fatalf("%d revocation requests reached another client's server", len(reqs))
	}
	if entries, _ := env.Store.List(); len(entries) != 0 {
		t.Fatalf("the tokens were kept after a failed revocation: %+v", entries)
	}
}

// TestStatusesUnreadable: a credential the index lists whose file is gone or corrupt is
// reported as unreadable, next to the readable ones, and the report is not OK.
func TestStatusesUnreadable(t *testing.T) {
	env := fileEnv(t, time.Now())
	gone := storeCred(t, env.Store, "http://127.0.0.1:2", "gone")
	bad := storeCred(t, env.Store, "http://127.0.0.1:3", "bad")
	good := storeCred(t, env.Store, "http://127.0.0.1:4", "good")
	if err := os.Remove(env.Store.filePath(gone.Key())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.Store.filePath(bad.Key()), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Statuses(env.Store, "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Credentials) != 1 || r.Credentials[0].Issuer != good.Issuer || len(r.Unreadable) != 2 {
		t.Fatalf("Statuses = %+v", r)
	}
	if r.Unreadable[0].Err != nil || r.Unreadable[1].Err == nil || !strings.Contains(r.Unreadable[1].Err.Error(), "corrupt") {
		t.Fatalf("unreadable: %+v", r.Unreadable)
	}
}

// TestReportedReason: the --json "reason" of an authorization failure is its own; an MCP
// server's bare 401 (a credential the user gave) is login_required; nothing else has one.
func TestReportedReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Reason
	}{
		{fmt.Errorf("call: %w", &Error{Reason: ReasonIssMismatch}), ReasonIssMismatch},
		{fmt.Errorf("call: %w", &rpc.HTTPError{Status: http.StatusUnauthorized}), ReasonLoginRequired},
		{&rpc.HTTPError{Status: http.StatusForbidden}, ""},
		{errors.New("connection refused"), ""},
	} {
		if got := ReportedReason(tc.err); got != tc.want {
			t.Errorf("ReportedReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
