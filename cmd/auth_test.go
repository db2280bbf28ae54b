package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/state"
)

// authTestEnv is a fresh state directory with the file store and --browser follow (the test
// authorization server approves without a page).
func authTestEnv(t *testing.T) map[string]string {
	return map[string]string{"XDG_STATE_HOME": t.TempDir(), "MCPTASK_AUTH_STORE": "file", "MCPTASK_BROWSER": "follow"}
}

func authStore(env map[string]string) *auth.Store {
	return &auth.Store{Dir: filepath.Join(env["XDG_STATE_HOME"], "mcptask", "auth"), Mode: auth.StoreFile}
}

// storedCred returns the one stored credential for server.
func storedCred(t *testing.T, env map[string]string, server string) *auth.Credential {
	t.Helper()
	return storedCredFor(t, env, server, "")
}

// storedCredFor returns the stored credential for server and profile.
func storedCredFor(t *testing.T, env map[string]string, server, profile string) *auth.Credential {
	t.Helper()
	st := authStore(env)
	e, err := st.Find(server, profile, "")
	if err != nil || e == nil {
		t.Fatalf("no stored credential for %s profile %q (%v)", server, profile, err)
	}
	c, err := st.Get(e.Key)
	if err != nil || c == nil {
		t.Fatalf("read credential: %v", err)
	}
	return c
}

func mustCode(t *testing.T, r cliResult, want int, what string) {
	t.Helper()
	if r.Code != want {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.Code, want, r.Stdout, r.Stderr)
	}
}

// jsonError decodes the --json error line on stderr.
func jsonError(t *testing.T, stderr string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["type"] == "error" {
			return m
		}
	}
	t.Fatalf("no JSON error on stderr:\n%s", stderr)
	return nil
}

func TestAuthLoginEndToEnd(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)

	// Without a terminal and with --browser open, mcptask may not log in by itself: exit 7,
	// reason login_required, and the hint names the command.
	r := runCLI(t, ctx, env, "tools", "--server", o.URL, "--browser", "open", "--json")
	mustCode(t, r, ExitAuth, "tools without a login")
	e := jsonError(t, r.Stderr)
	if e["reason"] != "login_required" || !strings.Contains(e["message"].(string), "mcptask auth login --server "+o.URL) {
		t.Fatalf("error = %v", e)
	}

	r = runCLI(t, ctx, env, "auth", "login", "--server", o.URL)
	mustCode(t, r, ExitOK, "auth login")
	if !strings.Contains(r.Stderr, "Logged in to "+o.URL) || !strings.Contains(r.Stdout, "dynamic") {
		t.Fatalf("login output:\n%s%s", r.Stdout, r.Stderr)
	}
	// A 0600 file in a 0700 directory, under the state directory.
	dir := filepath.Join(env["XDG_STATE_HOME"], "mcptask", "auth", "credentials")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("credential dir: %v %v", fi, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("credential files: %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("credential file mode %v", fi.Mode())
	}

	r = runCLI(t, ctx, env, "auth", "status", "--server", o.URL, "--json")
	mustCode(t, r, ExitOK, "auth status")
	st := decodeJSON(t, r.Stdout)
	creds := st["credentials"].([]any)
	c := creds[0].(map[string]any)
	if c["issuer"] != strings.TrimSuffix(o.URL, "/mcp") || c["registration"] != "dynamic" || c["refreshToken"] != true || c["usable"] != true || c["store"] != "file" {
		t.Fatalf("status = %v", c)
	}
	for _, secret := range o.allSecrets() {
		if strings.Contains(r.Stdout, secret) {
			t.Fatalf("auth status printed a secret")
		}
	}

	// Stored credentials are used with --login never.
	r = runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never")
	mustCode(t, r, ExitOK, "tools with the stored login")
	if !strings.Contains(r.Stdout, "sleep") {
		t.Fatalf("tools output: %s", r.Stdout)
	}

	// Logout forgets the tokens: status and --login never both exit 7.
	mustCode(t, runCLI(t, ctx, env, "auth", "logout", "--server", o.URL), ExitOK, "auth logout")
	mustCode(t, runCLI(t, ctx, env, "auth", "status", "--server", o.URL), ExitAuth, "status after logout")
	r = runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "tools after logout")
	if jsonError(t, r.Stderr)["reason"] != "login_required" {
		t.Fatalf("stderr: %s", r.Stderr)
	}
	// The client registration was kept: an inline login (auto, --browser follow) does not
	// register again.
	clients := len(o.clients)
	r = runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL)
	mustCode(t, r, ExitOK, "call with an inline login")
	if len(o.clients) != clients {
		t.Fatalf("the inline login registered a new client")
	}
}

func TestAuthRefreshWithRotation(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	c1 := storedCred(t, env, o.URL)

	// Refresh before expiry: the stored expires_at has passed, so the token is renewed before
	// the request is sent.
	c1.ExpiresAt = time.Now().Add(-time.Minute)
	if err := authStore(env).Put(c1); err != nil {
		t.Fatal(err)
	}
	mustCode(t, runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never"), ExitOK, "tools after expiry")
	c2 := storedCred(t, env, o.URL)
	if n, _ := o.stats(); n != 1 || c2.RefreshToken == c1.RefreshToken || c2.AccessToken == c1.AccessToken || !c2.ExpiresAt.After(time.Now()) {
		t.Fatalf("refreshes=%d; refresh token rotated: %v; expiry %v", n, c2.RefreshToken != c1.RefreshToken, c2.ExpiresAt)
	}

	// Refresh on 401: the server stopped accepting a token that is not expired by the clock.
	o.expireAccessTokens()
	mustCode(t, runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never"), ExitOK, "tools after a 401")
	c3 := storedCred(t, env, o.URL)
	if n, refused := o.stats(); n != 2 || refused != 0 || c3.RefreshToken == c2.RefreshToken {
		t.Fatalf("refreshes=%d refused=%d rotated=%v", n, refused, c3.RefreshToken != c2.RefreshToken)
	}
	for _, res := range o.resources {
		if res != o.URL {
			t.Fatalf("a token request carried resource %q", res)
		}
	}
}

func TestAuthExpiredRefreshToken(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	o.revokeRefreshTokens()
	o.expireAccessTokens()
	r := runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "tools with a dead refresh token")
	e := jsonError(t, r.Stderr)
	msg, _ := e["message"].(string)
	if e["reason"] != "refresh_failed" || !strings.Contains(msg, "invalid_grant") || !strings.Contains(msg, "mcptask auth login --server "+o.URL) {
		t.Fatalf("error = %v", e)
	}
	// The refused credential was dropped (its client kept): status says log in again.
	r = runCLI(t, ctx, env, "auth", "status", "--server", o.URL)
	mustCode(t, r, ExitAuth, "status")
	if !strings.Contains(r.Stdout, "log in again") {
		t.Fatalf("status:\n%s", r.Stdout)
	}
}

func TestAuthKeychainUnavailableFallsBackToFile(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	delete(env, "MCPTASK_AUTH_STORE") // auto
	// A session bus address that leads nowhere, in mcptask's view and in the keychain
	// library's (which reads the process environment).
	env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + filepath.Join(t.TempDir(), "no-bus")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", env["DBUS_SESSION_BUS_ADDRESS"])
	r := runCLI(t, ctx, env, "auth", "login", "--server", o.URL)
	mustCode(t, r, ExitOK, "login")
	if strings.Count(r.Stderr, "warning:") != 1 || !strings.Contains(r.Stderr, "keychain") {
		t.Fatalf("want one keychain warning:\n%s", r.Stderr)
	}
	o.expireAccessTokens()
	r = runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never")
	mustCode(t, r, ExitOK, "tools")
	if strings.Contains(r.Stderr, "warning:") {
		t.Fatalf("the warning came again:\n%s", r.Stderr)
	}
	r = runCLI(t, ctx, env, "auth", "status", "--json")
	if c := decodeJSON(t, r.Stdout)["credentials"].([]any)[0].(map[string]any); c["store"] != "file" {
		t.Fatalf("store = %v", c["store"])
	}
}

func TestAuthResumeAfterTokenExpired(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	var ids []string
	for range 3 {
		r := runCLI(t, ctx, env, "call", "sleep", "--arg", "seconds=5", "--detach", "--server", o.URL)
		mustCode(t, r, ExitOK, "call --detach (logs in inline)")
		ids = append(ids, strings.TrimSpace(r.Stdout))
	}
	// The ledger names the issuer and profile, nothing more.
	data, err := os.ReadFile(testLedger(t))
	if err != nil {
		t.Fatal(err)
	}
	f, err := state.Open(testLedger(t)).Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range f.Tasks {
		if rec.Server.OAuth == nil || rec.Server.OAuth.Issuer != strings.TrimSuffix(o.URL, "/mcp") {
			t.Fatalf("record server = %+v", rec.Server)
		}
	}
	for _, s := range o.allSecrets() {
		if strings.Contains(string(data), s) {
			t.Fatalf("the ledger holds a secret")
		}
	}
	o.expireAccessTokens()
	before, _ := o.stats()
	r := runCLI(t, ctx, env, "resume", "--login", "never", "--json")
	mustCode(t, r, ExitOK, "resume after the access token expired")
	for _, id := range ids {
		if !strings.Contains(r.Stdout, id) {
			t.Fatalf("resume output lacks %s:\n%s", id, r.Stdout)
		}
	}
	// Three tasks, one server: one refresh.
	if after, _ := o.stats(); after != before+1 {
		t.Fatalf("refreshes: %d before, %d after", before, after)
	}
}

// TestAuthNoSecretInLedgerTraceOrRecord logs in inline, refreshes, and calls with --trace and
// --record, then looks for every code, verifier, token and client secret the server issued
// or received in the ledger, the trace and the record.
func TestAuthNoSecretInLedgerTraceOrRecord(t *testing.T) {
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	rec := filepath.Join(t.TempDir(), "record.ndjson")
	r1 := runCLI(t, ctx, env, "call", "sleep", "--arg", "seconds=1", "--server", o.URL, "--trace", "--record", rec)
	mustCode(t, r1, ExitOK, "call with an inline login")
	o.expireAccessTokens()
	r2 := runCLI(t, ctx, env, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", o.URL, "--trace", "--record", rec)
	mustCode(t, r2, ExitOK, "call with a refresh")
	c := storedCred(t, env, o.URL)
	secrets := append(o.allSecrets(), c.AccessToken, c.RefreshToken, c.Client.Secret)
	record, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := os.ReadFile(testLedger(t))
	trace := r1.Stderr + r2.Stderr
	// The trace and record did see the OAuth traffic, redacted.
	for _, want := range []string{"/token", "refresh_token=[redacted]", "code_verifier=[redacted]"} {
		if !strings.Contains(trace, want) || !strings.Contains(string(record), want) {
			t.Fatalf("trace or record lacks %q", want)
		}
	}
	if len(secrets) < 8 {
		t.Fatalf("only %d secrets issued", len(secrets))
	}
	for _, s := range secrets {
		for name, text := range map[string]string{"ledger": string(ledger), "trace": trace, "record": string(record), "stdout": r1.Stdout + r2.Stdout} {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("the %s holds the secret %s…", name, s[:min(6, len(s))])
			}
		}
	}
}

// mcptaskBin builds the mcptask binary for a test that needs real processes.
func mcptaskBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcptask")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestAuthSixteenProcessesRefreshOnce starts 16 mcptask processes at once on a credential
// whose access token has expired and whose refresh token works exactly once: every process
// must end with a valid token (exit 0), through one refresh.
func TestAuthSixteenProcessesRefreshOnce(t *testing.T) {
	bin := mcptaskBin(t)
	ctx := context.Background()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	o.expireAccessTokens()
	var wg sync.WaitGroup
	errs := make([]string, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "tools", "--server", o.URL, "--login", "never", "--state", filepath.Join(env["XDG_STATE_HOME"], fmt.Sprintf("tasks-%d.json", i)))
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+env["XDG_STATE_HOME"], "MCPTASK_AUTH_STORE=file", "CI=")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("process %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if n, refused := o.stats(); n != 1 || refused != 0 {
		t.Fatalf("refreshes=%d refused=%d, want one refresh and no refused one", n, refused)
	}
}

// TestAuthLoginBrowserPrint: with --browser print mcptask shows the authorization URL and
// waits at its loopback listener; the test plays the person's browser.
func TestAuthLoginBrowserPrint(t *testing.T) {
	o := newOAuthServer(t)
	env := authTestEnv(t)
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	f.Getenv = func(k string) string { return env[k] }
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), f, []string{"auth", "login", "--server", o.URL, "--browser", "print"})
	}()
	var authURL string
	waitFor(t, "the authorization URL on stderr", 10*time.Second, func() bool {
		for _, l := range strings.Split(errOut.String(), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, strings.TrimSuffix(o.URL, "/mcp")+"/authorize?") {
				authURL = l
				return true
			}
		}
		return false
	})
	resp, err := http.Get(authURL) // the browser: follows the redirect to mcptask's listener
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the callback page answered %d", resp.StatusCode)
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("auth login exited %d\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("auth login did not finish after the callback")
	}
	if c := storedCred(t, env, o.URL); c.AccessToken == "" || c.RefreshToken == "" {
		t.Fatal("no tokens stored")
	}
}

func TestAuthFlagErrors(t *testing.T) {
	ctx := context.Background()
	env := authTestEnv(t)
	bad := filepath.Join(t.TempDir(), "key.pem")
	_ = os.WriteFile(bad, []byte("not a key"), 0o600)
	for _, args := range [][]string{
		{"--login", "sometimes"},
		{"--browser", "lynx"},
		{"--auth-store", "cloud"},
		{"--grant", "password"},
		{"--grant", "client-credentials"},
		{"--grant", "client-credentials", "--client-id", "ci"},
		{"--client-secret-env", "MCPTASK_TEST_UNSET_SECRET"},
		{"--client-id", "ci", "--client-key-file", bad},
		{"--client-metadata-url", "http://example.com/client.json"},
	} {
		r := runCLI(t, ctx, env, append([]string{"tools", "--server", "http://127.0.0.1:1/mcp"}, args...)...)
		if r.Code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, r.Code, ExitUsage, r.Stderr)
		}
	}
}

// withEnv returns env with the extra variables added, env itself left alone.
func withEnv(env map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(env)+len(kv)/2)
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// noSecretIn fails when text holds any secret the server issued or received.
func noSecretIn(t *testing.T, o *oauthServer, what, text string) {
	t.Helper()
	for _, s := range o.allSecrets() {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s holds the secret %s…", what, s[:min(6, len(s))])
		}
	}
}

// TestAuthExplicitAuthorizationWins: --bearer-env and an explicit Authorization --header
// are sent as given, even with a stored login for the server, and a 401 to them starts no
// OAuth flow of mcptask's own.
func TestAuthExplicitAuthorizationWins(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	stored := storedCred(t, env, o.URL)
	// Past its expiry by the clock: a run that used the stored login would refresh it first.
	stored.ExpiresAt = time.Now().Add(-time.Minute)
	if err := authStore(env).Put(stored); err != nil {
		t.Fatal(err)
	}
	before := o.traffic()
	given := o.issueAccessToken()
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"--bearer-env", withEnv(env, "MCPTASK_TEST_GIVEN_TOKEN", given), []string{"--bearer-env", "MCPTASK_TEST_GIVEN_TOKEN"}},
		{"--header", env, []string{"--header", "authorization: Bearer " + given}},
	} {
		n := o.seen(given)
		r := runCLI(t, ctx, c.env, append([]string{"call", "echo", "--arg", "text=hi", "--server", o.URL}, c.args...)...)
		mustCode(t, r, ExitOK, "call with "+c.name)
		if o.seen(given) == n {
			t.Fatalf("%s: the server never saw the token given", c.name)
		}
		noSecretIn(t, o, c.name+" output", r.Stdout+r.Stderr)
	}
	if n := o.seen(stored.AccessToken); n != 0 {
		t.Fatalf("the stored access token was sent %d times though the user gave one", n)
	}
	if refreshes, _ := o.stats(); refreshes != 0 {
		t.Fatalf("the stored login was refreshed %d times though the user gave a token", refreshes)
	}

	// A given token the server refuses is the user's to fix: exit 7, and mcptask neither falls
	// back to the stored login nor refreshes it nor logs in.
	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--header", "Authorization: Bearer not-a-token-the-server-knows", "--json")
	mustCode(t, r, ExitAuth, "call with a refused --header")
	jsonError(t, r.Stderr)
	after := o.traffic()
	if len(after.GrantTypes) != len(before.GrantTypes) || len(after.Authorizations) != len(before.Authorizations) || len(after.Registrations) != len(before.Registrations) {
		t.Fatalf("a 401 to the user's token started OAuth: token requests %d→%d, authorizations %d→%d, registrations %d→%d",
			len(before.GrantTypes), len(after.GrantTypes), len(before.Authorizations), len(after.Authorizations), len(before.Registrations), len(after.Registrations))
	}
	if o.seen(stored.AccessToken) != 0 {
		t.Fatal("after the user's token was refused, the stored one was sent")
	}
	if now := storedCred(t, env, o.URL); now.RefreshToken != stored.RefreshToken || now.AccessToken != stored.AccessToken {
		t.Fatal("the stored credential changed")
	}
}

// TestAuthNamedServerOAuthSettings: the "oauth" object of a named server in an MCP config
// file gives the client id, the secret's ${VAR}, the issuer the client belongs to, the scopes
// (list or string), the Client ID Metadata Document URL and the callback port; flags win
// over it.
func TestAuthNamedServerOAuthSettings(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	o.configure(func(o *oauthServer) { o.cimd = true })
	secret := o.preRegister("mcptask-work", false)
	const docURL = "https://client.example/mcptask.json"
	o.preRegister(docURL, true)
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), ".mcp.json")
	conf := map[string]any{"mcpServers": map[string]any{
		"work": map[string]any{"url": o.URL, "oauth": map[string]any{
			"clientId": "mcptask-work", "clientSecret": "${WORK_CLIENT_SECRET}", "scopes": []string{"tasks", "files:read"}, "callbackPort": port,
			"issuer": strings.TrimSuffix(o.URL, "/mcp")}},
		"doc": map[string]any{"url": o.URL, "oauth": map[string]any{"clientMetadataUrl": docURL, "scopes": "tasks files:write"}},
	}}
	data, _ := json.Marshal(conf)
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := withEnv(authTestEnv(t), "WORK_CLIENT_SECRET", secret)

	// An inline login (--browser follow) for the named server: the pre-registered client, its
	// secret from the variable (the token endpoint refuses the client without it), the
	// scopes and the port of the file; no dynamic registration.
	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", "work", "--config", cfg)
	mustCode(t, r, ExitOK, "call --server work")
	tr := o.traffic()
	if len(tr.Registrations) != 0 {
		t.Fatalf("registered a client dynamically though the file names one")
	}
	if len(tr.Authorizations) != 1 {
		t.Fatalf("%d authorization requests, want 1", len(tr.Authorizations))
	}
	a := tr.Authorizations[0]
	wantRedirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	if a.client != "mcptask-work" || a.redirect != wantRedirect || !hasScopes(a.scope, "tasks", "files:read") {
		t.Fatalf("authorization request: client %q, redirect %q, scope %q; want mcptask-work, %s, tasks files:read", a.client, a.redirect, a.scope, wantRedirect)
	}
	c := storedCred(t, env, o.URL)
	if c.Client.Registration != auth.RegPreRegistered || c.Client.Secret != "" {
		t.Fatalf("stored client: registration %q, secret stored: %v", c.Client.Registration, c.Client.Secret != "")
	}
	files, _ := filepath.Glob(filepath.Join(env["XDG_STATE_HOME"], "mcptask", "auth", "credentials", "*.json"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), secret) {
			t.Fatal("the pre-registered client secret was stored")
		}
	}

	// A flag wins over the file.
	other := freePort(t)
	r = runCLI(t, ctx, env, "auth", "login", "--server", "work", "--config", cfg, "--callback-port", strconv.Itoa(other))
	mustCode(t, r, ExitOK, "auth login --server work --callback-port")
	tr = o.traffic()
	if a := tr.Authorizations[len(tr.Authorizations)-1]; a.redirect != fmt.Sprintf("http://127.0.0.1:%d/callback", other) || a.client != "mcptask-work" {
		t.Fatalf("with --callback-port %d: client %q, redirect %q", other, a.client, a.redirect)
	}

	// The Client ID Metadata Document URL, and scopes written as one string.
	r = runCLI(t, ctx, env, "auth", "login", "--server", "doc", "--config", cfg)
	mustCode(t, r, ExitOK, "auth login --server doc")
	tr = o.traffic()
	if a := tr.Authorizations[len(tr.Authorizations)-1]; a.client != docURL || !hasScopes(a.scope, "tasks", "files:write") {
		t.Fatalf("authorization request: client %q, scope %q; want %s and tasks files:write", a.client, a.scope, docURL)
	}
	if len(tr.Registrations) != 0 {
		t.Fatal("registered a client dynamically though the file names a metadata document")
	}
	if c := storedCred(t, env, o.URL); c.Client.Registration != auth.RegMetadataDocument || c.Client.ID != docURL {
		t.Fatalf("stored client: %q (%s)", c.Client.ID, c.Client.Registration)
	}
	noSecretIn(t, o, "output", r.Stdout+r.Stderr)
}

// hasScopes reports whether the space-separated scope holds every one of want.
func hasScopes(scope string, want ...string) bool {
	have := strings.Fields(scope)
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestAuthLogoutAllAndForgetClient: logout --forget-client removes the server's credential,
// registration and all, and only that server's; logout --all forgets every server's tokens
// and keeps their registrations; --all --forget-client leaves nothing.
func TestAuthLogoutAllAndForgetClient(t *testing.T) {
	ctx := t.Context()
	o1, o2 := newOAuthServer(t), newOAuthServer(t)
	env := authTestEnv(t)
	st := authStore(env)
	for _, o := range []*oauthServer{o1, o2} {
		mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login to "+o.URL)
	}
	c1 := storedCred(t, env, o1.URL)
	credFile := func(c *auth.Credential) string {
		return filepath.Join(env["XDG_STATE_HOME"], "mcptask", "auth", "credentials", c.Key()+".json")
	}

	r := runCLI(t, ctx, env, "auth", "logout", "--server", o1.URL, "--forget-client", "--json")
	mustCode(t, r, ExitOK, "logout --forget-client")
	if n := decodeJSON(t, r.Stdout)["count"]; n != 1.0 {
		t.Fatalf("logout count = %v, want 1", n)
	}
	if e, _ := st.Find(o1.URL, "", ""); e != nil {
		t.Fatal("--forget-client left the credential in the index")
	}
	if _, err := os.Stat(credFile(c1)); !os.IsNotExist(err) {
		t.Fatalf("--forget-client left the credential file (%v)", err)
	}
	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o2.URL, "--login", "never"), ExitOK, "the other server after logout --server")
	mustCode(t, runCLI(t, ctx, env, "auth", "status", "--server", o2.URL), ExitOK, "status of the other server")
	// The client was forgotten: the next login registers again.
	regs := len(o1.traffic().Registrations)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o1.URL), ExitOK, "login again")
	if got := len(o1.traffic().Registrations); got != regs+1 {
		t.Fatalf("registrations %d → %d: the login after --forget-client did not register a new client", regs, got)
	}
	if c := storedCred(t, env, o1.URL); c.Client.ID == c1.Client.ID {
		t.Fatal("the forgotten client id came back")
	}

	clients := map[string]string{o1.URL: storedCred(t, env, o1.URL).Client.ID, o2.URL: storedCred(t, env, o2.URL).Client.ID}
	r = runCLI(t, ctx, env, "auth", "logout", "--all", "--json")
	mustCode(t, r, ExitOK, "logout --all")
	if n := decodeJSON(t, r.Stdout)["count"]; n != 2.0 {
		t.Fatalf("logout --all count = %v, want 2", n)
	}
	for _, o := range []*oauthServer{o1, o2} {
		c := storedCred(t, env, o.URL)
		if c.AccessToken != "" || c.RefreshToken != "" || c.Client.ID != clients[o.URL] {
			t.Fatalf("%s after logout --all: tokens kept %v, client kept %v", o.URL, c.AccessToken != "" || c.RefreshToken != "", c.Client.ID == clients[o.URL])
		}
		mustCode(t, runCLI(t, ctx, env, "auth", "status", "--server", o.URL), ExitAuth, "status after logout --all")
		r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--login", "never", "--json")
		mustCode(t, r, ExitAuth, "call after logout --all")
		if reason := jsonError(t, r.Stderr)["reason"]; reason != "login_required" {
			t.Fatalf("reason = %v", reason)
		}
	}
	// The registration was kept: logging in again does not register.
	regs = len(o2.traffic().Registrations)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o2.URL), ExitOK, "login after logout --all")
	if got := len(o2.traffic().Registrations); got != regs {
		t.Fatal("the login after logout --all registered a new client")
	}

	mustCode(t, runCLI(t, ctx, env, "auth", "logout", "--all", "--forget-client"), ExitOK, "logout --all --forget-client")
	if list, err := st.List(); err != nil || len(list) != 0 {
		t.Fatalf("after logout --all --forget-client the index lists %d credentials (%v)", len(list), err)
	}
	if files, _ := filepath.Glob(filepath.Join(env["XDG_STATE_HOME"], "mcptask", "auth", "credentials", "*.json")); len(files) != 0 {
		t.Fatalf("after logout --all --forget-client %d credential files remain", len(files))
	}
	mustCode(t, runCLI(t, ctx, env, "auth", "status"), ExitAuth, "status with nothing stored")
}

// TestAuthProfilesKeptApart: two accounts on one server (--profile) have two credentials;
// each run sends its own profile's token, a run without a profile uses neither, and logging
// one out leaves the other.
func TestAuthProfilesKeptApart(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	for _, p := range []string{"alice", "bob"} {
		mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL, "--profile", p), ExitOK, "login --profile "+p)
	}
	alice, bob := storedCredFor(t, env, o.URL, "alice"), storedCredFor(t, env, o.URL, "bob")
	if alice.Key() == bob.Key() || alice.AccessToken == bob.AccessToken || alice.RefreshToken == bob.RefreshToken {
		t.Fatal("the two profiles share a credential")
	}

	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "call without a profile")
	if reason := jsonError(t, r.Stderr)["reason"]; reason != "login_required" {
		t.Fatalf("reason = %v", reason)
	}
	if o.seen(alice.AccessToken)+o.seen(bob.AccessToken) != 0 {
		t.Fatal("a run without --profile sent a profile's token")
	}

	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--profile", "alice", "--login", "never"), ExitOK, "call --profile alice")
	if o.seen(alice.AccessToken) == 0 || o.seen(bob.AccessToken) != 0 {
		t.Fatalf("--profile alice: alice's token sent %d times, bob's %d", o.seen(alice.AccessToken), o.seen(bob.AccessToken))
	}
	a := o.seen(alice.AccessToken)
	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--profile", "bob", "--login", "never"), ExitOK, "call --profile bob")
	if o.seen(bob.AccessToken) == 0 || o.seen(alice.AccessToken) != a {
		t.Fatalf("--profile bob: bob's token sent %d times, alice's %d more", o.seen(bob.AccessToken), o.seen(alice.AccessToken)-a)
	}

	r = runCLI(t, ctx, env, "auth", "status", "--server", o.URL, "--profile", "alice", "--json")
	mustCode(t, r, ExitOK, "status --profile alice")
	creds := decodeJSON(t, r.Stdout)["credentials"].([]any)
	if len(creds) != 1 || creds[0].(map[string]any)["profile"] != "alice" {
		t.Fatalf("status --profile alice shows %v", creds)
	}

	mustCode(t, runCLI(t, ctx, env, "auth", "logout", "--server", o.URL, "--profile", "alice"), ExitOK, "logout --profile alice")
	mustCode(t, runCLI(t, ctx, env, "auth", "status", "--server", o.URL, "--profile", "alice"), ExitAuth, "status of alice after her logout")
	mustCode(t, runCLI(t, ctx, env, "auth", "status", "--server", o.URL, "--profile", "bob"), ExitOK, "status of bob after alice's logout")
	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--profile", "bob", "--login", "never"), ExitOK, "call --profile bob after alice's logout")
	if c := storedCredFor(t, env, o.URL, "bob"); c.RefreshToken != bob.RefreshToken {
		t.Fatal("alice's logout touched bob's credential")
	}
}

// TestAuthCallbackPort: --callback-port is the port of the redirect URI registered, sent and
// listened on; a port that is taken is an error, never a quiet switch to another port (which
// a client registered with that redirect URI could not use).
func TestAuthCallbackPort(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	env := authTestEnv(t)
	port := freePort(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL, "--callback-port", strconv.Itoa(port)), ExitOK, "login --callback-port")
	want := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	tr := o.traffic()
	if len(tr.Registrations) != 1 || tr.Registrations[0] != want || len(tr.Authorizations) != 1 || tr.Authorizations[0].redirect != want {
		t.Fatalf("registered %v, authorized with %v; want %s", tr.Registrations, tr.Authorizations, want)
	}
	if c := storedCred(t, env, o.URL); c.Client.RedirectURI != want {
		t.Fatalf("stored redirect URI %q, want %s", c.Client.RedirectURI, want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	r := runCLI(t, ctx, env, "auth", "login", "--server", o.URL, "--callback-port", strconv.Itoa(busy), "--json")
	mustCode(t, r, ExitAuth, "login --callback-port with the port taken")
	if msg, _ := jsonError(t, r.Stderr)["message"].(string); !strings.Contains(msg, fmt.Sprintf("127.0.0.1:%d", busy)) {
		t.Fatalf("the error does not name the port: %s", msg)
	}
	if got := o.traffic(); len(got.Authorizations) != 1 {
		t.Fatalf("an authorization request went out with the port taken: %v", got.Authorizations[1:])
	}
}

// TestAuthMisbehavingServers drives mcptask against authorization and resource servers that
// break the rules a client must check: each ends in exit 7 with the --json reason that names
// the broken rule, with no token obtained, nothing stored and no secret shown.
func TestAuthMisbehavingServers(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		setup        func(o *oauthServer)
		// authorizations says whether an authorization request may go out (the iss of its
		// answer is what is wrong); the others are refused before.
		authorizations int
	}{
		// The PRM names a resource that is a prefix of the endpoint, but not a whole path
		// segment of it: /mc is not /mcp.
		{"resource_mismatch", "resource_mismatch", func(o *oauthServer) { o.prmResource = strings.TrimSuffix(o.URL, "p") }, 0},
		{"issuer_mismatch", "issuer_mismatch", func(o *oauthServer) { o.metadataIssuer = "https://issuer.example" }, 0},
		{"iss_wrong", "iss_mismatch", func(o *oauthServer) { o.issParam = "https://issuer.example" }, 1},
		{"iss_missing", "iss_mismatch", func(o *oauthServer) { o.omitIss = true }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOAuthServer(t)
			o.configure(c.setup)
			env := authTestEnv(t)
			for _, args := range [][]string{
				{"call", "echo", "--arg", "text=hi", "--server", o.URL, "--json"},
				{"auth", "login", "--server", o.URL, "--json"},
			} {
				r := runCLI(t, t.Context(), env, args...)
				mustCode(t, r, ExitAuth, strings.Join(args[:2], " "))
				if e := jsonError(t, r.Stderr); e["reason"] != c.reason || e["code"] != float64(ExitAuth) {
					t.Fatalf("%s: reason %v code %v, want %s and %d\n%s", args[0], e["reason"], e["code"], c.reason, ExitAuth, e["message"])
				}
				noSecretIn(t, o, "output", r.Stdout+r.Stderr)
			}
			tr := o.traffic()
			if len(tr.GrantTypes) != 0 {
				t.Fatalf("token requests went out: %v", tr.GrantTypes)
			}
			if len(tr.Authorizations) != 2*c.authorizations {
				t.Fatalf("%d authorization requests, want %d", len(tr.Authorizations), 2*c.authorizations)
			}
			if c.authorizations == 0 && len(tr.Registrations) != 0 {
				t.Fatal("registered a client at a server that failed discovery")
			}
			if list, err := authStore(env).List(); err != nil || len(list) != 0 {
				t.Fatalf("%d credentials stored (%v)", len(list), err)
			}
		})
	}
}

// TestAuthInsufficientScope: a resource server that answers 403 insufficient_scope. With
// --login never, exit 7 at once with a hint naming the scopes to log in with; with a login
// allowed, step-up re-authorizes with the union of the scopes held and asked for, at most
// three times against an authorization server that never grants the scope, then exit 7;
// once it grants it, one step-up succeeds.
func TestAuthInsufficientScope(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	o.configure(func(o *oauthServer) { o.requireScope, o.withholdScope = "admin", "admin" })
	env := authTestEnv(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")

	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "call --login never without the scope")
	e := jsonError(t, r.Stderr)
	msg, _ := e["message"].(string)
	if e["reason"] != "insufficient_scope" || !strings.Contains(msg, "mcptask auth login --server "+o.URL) || !strings.Contains(msg, "--scopes") || !strings.Contains(msg, "admin") {
		t.Fatalf("error = %v", e)
	}
	if n := len(o.traffic().Authorizations); n != 1 {
		t.Fatalf("--login never: %d authorization requests, want only the login's", n)
	}

	r = runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--json")
	mustCode(t, r, ExitAuth, "call with step-up refused")
	if reason := jsonError(t, r.Stderr)["reason"]; reason != "insufficient_scope" {
		t.Fatalf("reason = %v\n%s", reason, r.Stderr)
	}
	stepUps := o.traffic().Authorizations[1:]
	if len(stepUps) < 1 || len(stepUps) > 3 {
		t.Fatalf("%d step-up authorizations, want 1 to 3", len(stepUps))
	}
	for _, a := range stepUps {
		if !hasScopes(a.scope, "tasks", "admin") {
			t.Fatalf("a step-up asked for %q, not the union of tasks and admin", a.scope)
		}
	}

	o.configure(func(o *oauthServer) { o.withholdScope = "" })
	n := len(o.traffic().Authorizations)
	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL), ExitOK, "call with step-up granted")
	tr := o.traffic()
	if len(tr.Authorizations) != n+1 || !hasScopes(tr.Authorizations[n].scope, "tasks", "admin") {
		t.Fatalf("%d step-ups (want 1), the last asking for %q", len(tr.Authorizations)-n, tr.Authorizations[len(tr.Authorizations)-1].scope)
	}
	if c := storedCred(t, env, o.URL); !slices.Contains(c.Scopes, "admin") {
		t.Fatalf("stored scopes %v lack admin", c.Scopes)
	}
}
