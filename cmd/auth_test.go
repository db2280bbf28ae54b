package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	st := authStore(env)
	e, err := st.Find(server, "", "")
	if err != nil || e == nil {
		t.Fatalf("no stored credential for %s (%v)", server, err)
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
	for _, want := range []string{"/token", "refresh_token=%5Bredacted%5D", "code_verifier=%5Bredacted%5D"} {
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
