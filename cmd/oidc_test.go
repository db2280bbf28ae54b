package cmd

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
)

// oidcProvider is testdata/oidc/server.mjs running: oidc-provider, a certified OpenID
// provider, in front of an MCP server on the official TypeScript SDK that checks JWT access
// tokens against the provider's keys and its own URL as audience. Its login signs in a fixed
// account without a form (see server.mjs for why), so --browser follow logs in as a browser
// would: keeping the provider's cookies and following its redirects, nothing more.
type oidcProvider struct {
	Issuer, MCP string

	mu     sync.Mutex
	events []map[string]any
	stderr lockedBuffer
	// stop ends the provider and its MCP server before the test does.
	stop func()
}

// startOIDC starts the provider and its MCP server on loopback ports. Outside CI it skips with
// a message when node or the packages are missing; in CI (which installs them) it must run.
func startOIDC(t *testing.T) *oidcProvider {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("oidc: %s (CI must run the OpenID provider tests; .ci/run installs them)", msg)
		}
		t.Skipf("oidc: %s; install it with: npm ci --prefix testdata/oidc", msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	dir, _ := filepath.Abs("../testdata/oidc")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider")); err != nil {
		skip("oidc-provider not found in %s/node_modules", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, "node", "server.mjs")
	c.Dir = dir
	p := &oidcProvider{}
	c.Stderr = &p.stderr
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	p.stop = func() { once.Do(func() { cancel(); _ = c.Wait() }) }
	t.Cleanup(p.stop)
	up := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if !sc.Scan() {
			up <- fmt.Errorf("server.mjs ended before it listened")
			return
		}
		var first struct{ Issuer, MCP string }
		if err := json.Unmarshal(sc.Bytes(), &first); err != nil || first.Issuer == "" {
			up <- fmt.Errorf("server.mjs said %q", sc.Text())
			return
		}
		p.Issuer, p.MCP = first.Issuer, first.MCP
		up <- nil
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				p.mu.Lock()
				p.events = append(p.events, e)
				p.mu.Unlock()
			}
		}
	}()
	select {
	case err := <-up:
		if err != nil {
			t.Fatalf("%v\nstderr: %s", err, p.errText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server.mjs did not start within 30s\nstderr: %s", p.errText())
	}
	return p
}

func (p *oidcProvider) errText() string { return p.stderr.String() }

// count returns how many events named event were reported whose fields include match.
func (p *oidcProvider) count(event string, match map[string]string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
next:
	for _, e := range p.events {
		if e["event"] != event {
			continue
		}
		for k, v := range match {
			if e[k] != v {
				continue next
			}
		}
		n++
	}
	return n
}

// find returns the events named event.
func (p *oidcProvider) find(event string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, e := range p.events {
		if e["event"] == event {
			out = append(out, e)
		}
	}
	return out
}

// noCookies fails the test when a cookie reached the token, revocation or registration
// endpoint or the MCP server: the jar of --browser follow belongs to the login's redirects.
func (p *oidcProvider) noCookies(t *testing.T) {
	t.Helper()
	if c := p.find("cookie"); len(c) > 0 {
		t.Fatalf("the login's cookies reached %v", c)
	}
}

// waitEvents waits until the provider reported n events named event (its stdout is read by
// another goroutine, so a CLI run that ended may not be counted yet).
func (p *oidcProvider) waitEvents(t *testing.T, event string, match map[string]string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d %s events", n, event), 10*time.Second, func() bool { return p.count(event, match) >= n })
}

// jwtClaims decodes the claims of a JWT access token, unverified (the MCP server verifies it).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("the access token is not a JWT")
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// refreshWith plays a thief holding a copy of refresh token rt: it asks the provider's token
// endpoint for new tokens and returns the OAuth error code ("" when it got tokens).
func refreshWith(t *testing.T, p *oidcProvider, c *auth.Credential, rt string) string {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.Client.ID}, "resource": {c.Resource}}
	resp, err := http.PostForm(c.TokenEndpoint, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error       string `json:"error"`
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode == http.StatusOK && body.AccessToken != "" {
		return ""
	}
	return fmt.Sprintf("HTTP %d %s", resp.StatusCode, body.Error)
}

// TestOIDCFollowKeepsTheProvidersCookies: oidc-provider keeps each login's state in cookies
// it sets on its first answer and checks on every later hop (its interaction and resume
// cookies). --browser follow keeps them for the length of the login, as a browser does, so
// the login completes; before, it dropped them and the provider answered 400. The cookies go
// nowhere else (not to the token endpoint, not to the MCP server) and are never stored.
func TestOIDCFollowKeepsTheProvidersCookies(t *testing.T) {
	p := startOIDC(t)
	env := authTestEnv(t)
	ctx := t.Context()

	record := filepath.Join(t.TempDir(), "login.ndjson")
	r := runCLI(t, ctx, env, "auth", "login", "--server", p.MCP, "--json", "--record", record)
	mustCode(t, r, ExitOK, "auth login --browser follow against oidc-provider")
	// The cookies are the provider's login session: the record shows that they went back and
	// forth, never what they were.
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Headers map[string][]string `json:"headers"`
		}
		_ = json.Unmarshal([]byte(line), &l)
		for k, vs := range l.Headers {
			if strings.EqualFold(k, "Cookie") || strings.EqualFold(k, "Set-Cookie") {
				sent++
				for _, v := range vs {
					if v != "[redacted]" {
						t.Fatalf("the record holds a cookie: %s: %.20s…", k, v)
					}
				}
			}
		}
	}
	if sent == 0 {
		t.Fatal("the record shows no cookie: the login did not go through the provider's cookies")
	}
	if n := p.count("authorization.success", nil); n != 1 {
		t.Fatalf("%d successful authorizations, want 1", n)
	}
	r = runCLI(t, ctx, env, "call", "whoami", "--server", p.MCP, "--login", "never")
	mustCode(t, r, ExitOK, "call with the stored login")
	if !strings.Contains(r.Stdout, "sub=test-user") {
		t.Fatalf("whoami: %s", r.Stdout)
	}
	p.noCookies(t)
	// Nothing of the login's cookies was stored: the provider names its cookies _session and
	// _interaction*, and no file under the state directory holds either name.
	_ = filepath.WalkDir(env["XDG_STATE_HOME"], func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(path)
		for _, name := range []string{"_session", "_interaction"} {
			if strings.Contains(string(data), name) {
				t.Errorf("%s holds the provider's cookie %s", path, name)
			}
		}
		return nil
	})
}

// TestOIDCOfflineAccessRefreshAndAudience: against an OpenID provider, mcptask asks for
// offline_access with prompt=consent (OpenID Connect Core §11), so the login yields a refresh
// token; later calls refresh without a new login, before expiry and on a 401; every access
// token is a JWT whose audience is the MCP server (RFC 8707), refreshed ones included.
func TestOIDCOfflineAccessRefreshAndAudience(t *testing.T) {
	p := startOIDC(t)
	env := authTestEnv(t)
	ctx := t.Context()

	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", p.MCP), ExitOK, "auth login")
	auths := p.find("authorization.success")
	if len(auths) != 1 || auths[0]["prompt"] != "consent" || !hasScopes(fmt.Sprint(auths[0]["scope"]), "mcp:tools", "offline_access") || auths[0]["resource"] != p.MCP {
		t.Fatalf("authorization request = %v; want prompt consent, scope mcp:tools offline_access, resource %s", auths, p.MCP)
	}
	c1 := storedCred(t, env, p.MCP)
	if c1.RefreshToken == "" {
		t.Fatal("the login at an OpenID provider yielded no refresh token")
	}
	if c1.Issuer != p.Issuer || c1.Resource != p.MCP {
		t.Fatalf("credential issuer %q resource %q", c1.Issuer, c1.Resource)
	}
	audience := func(c *auth.Credential) {
		t.Helper()
		claims := jwtClaims(t, c.AccessToken)
		if claims["aud"] != p.MCP || claims["iss"] != p.Issuer {
			t.Fatalf("access token aud %v iss %v; want aud %s iss %s", claims["aud"], claims["iss"], p.MCP, p.Issuer)
		}
	}
	audience(c1)
	r := runCLI(t, ctx, env, "call", "whoami", "--server", p.MCP, "--login", "never")
	mustCode(t, r, ExitOK, "call")
	if !strings.Contains(r.Stdout, "resource="+p.MCP) {
		t.Fatalf("whoami: %s", r.Stdout)
	}

	// Before expiry: the stored expires_at has passed, so the token is refreshed before the
	// request, with no new login.
	c1.ExpiresAt = time.Now().Add(-time.Minute)
	if err := authStore(env).Put(c1); err != nil {
		t.Fatal(err)
	}
	mustCode(t, runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", p.MCP, "--login", "never"), ExitOK, "call after expiry")
	p.waitEvents(t, "grant.success", map[string]string{"grant_type": "refresh_token"}, 1)
	c2 := storedCred(t, env, p.MCP)
	if c2.AccessToken == c1.AccessToken || c2.RefreshToken == c1.RefreshToken || !c2.ExpiresAt.After(time.Now()) {
		t.Fatalf("after the refresh: new access token %v, rotated refresh token %v, expiry %v", c2.AccessToken != c1.AccessToken, c2.RefreshToken != c1.RefreshToken, c2.ExpiresAt)
	}
	audience(c2)

	// On a 401: the MCP server refuses the stored token (here: a token it cannot verify), the
	// client refreshes and sends the request again.
	c2.AccessToken = "not-a-token"
	if err := authStore(env).Put(c2); err != nil {
		t.Fatal(err)
	}
	mustCode(t, runCLI(t, ctx, env, "tools", "--server", p.MCP, "--login", "never"), ExitOK, "tools after a 401")
	p.waitEvents(t, "grant.success", map[string]string{"grant_type": "refresh_token"}, 2)
	audience(storedCred(t, env, p.MCP))

	for _, g := range p.find("grant.success") {
		if g["grant_type"] == "refresh_token" && g["resource"] != p.MCP {
			t.Fatalf("a refresh request carried resource %v, want %s", g["resource"], p.MCP)
		}
	}
	if n := p.count("authorization.success", nil); n != 1 {
		t.Fatalf("%d authorizations: a refresh ran a new login", n)
	}
	if e := p.find("grant.error"); len(e) > 0 {
		t.Fatalf("the provider refused a grant: %v", e)
	}
	p.noCookies(t)
}

// TestOIDCLogoutRevokes: auth logout revokes the refresh token at the provider's revocation
// endpoint (RFC 7009) and says so; a copy of the refresh token taken before the logout no
// longer works there, and the stored login is gone.
func TestOIDCLogoutRevokes(t *testing.T) {
	p := startOIDC(t)
	env := authTestEnv(t)
	ctx := t.Context()

	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", p.MCP), ExitOK, "auth login")
	c := storedCred(t, env, p.MCP)
	stolen := c.RefreshToken
	if stolen == "" {
		t.Fatal("no refresh token to revoke")
	}
	record := filepath.Join(t.TempDir(), "record.ndjson")
	r := runCLI(t, ctx, env, "auth", "logout", "--server", p.MCP, "--trace", "--record", record)
	mustCode(t, r, ExitOK, "auth logout")
	if !strings.Contains(r.Stderr, "revoked at "+p.Issuer) {
		t.Fatalf("logout output does not say it revoked: %s", r.Stderr)
	}
	p.waitEvents(t, "grant.revoked", nil, 1)
	if got := refreshWith(t, p, c, stolen); got == "" || !strings.Contains(got, "invalid_grant") {
		t.Fatalf("the refresh token after logout: %q, want invalid_grant", got)
	}
	if data, _ := os.ReadFile(record); !strings.Contains(string(data), "token/revocation") || strings.Contains(string(data), stolen) || strings.Contains(r.Stderr, stolen) {
		t.Fatal("the trace or record of the logout lacks the revocation request or holds the refresh token")
	}
	r = runCLI(t, ctx, env, "call", "whoami", "--server", p.MCP, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "call after logout")
	p.noCookies(t)
}

// TestOIDCEightProcessesRefresh: eight mcptask processes start at once on a credential whose
// access token has expired. oidc-provider rotates refresh tokens and treats a second use of
// one as theft (it revokes the whole grant), so all eight end with working tokens only if
// exactly one of them refreshes and the others use its result.
func TestOIDCEightProcessesRefresh(t *testing.T) {
	p := startOIDC(t)
	bin := mcptaskBin(t)
	env := authTestEnv(t)
	ctx := t.Context()
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", p.MCP), ExitOK, "auth login")
	c := storedCred(t, env, p.MCP)
	c.ExpiresAt = time.Now().Add(-time.Minute)
	if err := authStore(env).Put(c); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, bin, "call", "whoami", "--server", p.MCP, "--login", "never", "--state", filepath.Join(env["XDG_STATE_HOME"], fmt.Sprintf("tasks-%d.json", i)))
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+env["XDG_STATE_HOME"], "MCPTASK_AUTH_STORE=file", "CI=")
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "sub=test-user") {
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
	p.waitEvents(t, "grant.success", map[string]string{"grant_type": "refresh_token"}, 1)
	if got := p.count("grant.success", map[string]string{"grant_type": "refresh_token"}); got != 1 {
		t.Errorf("%d refreshes, want 1", got)
	}
	if e := append(p.find("grant.error"), p.find("grant.revoked")...); len(e) > 0 {
		t.Fatalf("the provider refused or revoked a grant: %v", e)
	}
	mustCode(t, runCLI(t, ctx, env, "call", "whoami", "--server", p.MCP, "--login", "never"), ExitOK, "call after the race")
}

// TestAuthLogoutSaysWhatHappened: logout forgets the tokens locally whatever the
// authorization server does, and each line says which happened: revoked, not offered (a
// server without a revocation_endpoint), or could not revoke (the provider is down).
func TestAuthLogoutSaysWhatHappened(t *testing.T) {
	ctx := t.Context()
	env := authTestEnv(t)

	o := newOAuthServer(t) // no revocation_endpoint in its metadata
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	r := runCLI(t, ctx, env, "auth", "logout", "--server", o.URL, "--json")
	mustCode(t, r, ExitOK, "logout")
	creds, _ := decodeJSON(t, r.Stdout)["credentials"].([]any)
	if len(creds) != 1 || creds[0].(map[string]any)["revocation"] != "unsupported" {
		t.Fatalf("logout --json: %s", r.Stdout)
	}
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login again")
	r = runCLI(t, ctx, env, "auth", "logout", "--server", o.URL)
	if !strings.Contains(r.Stderr, "offers no token revocation; forgotten locally") {
		t.Fatalf("logout: %s", r.Stderr)
	}

	p := startOIDC(t)
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", p.MCP), ExitOK, "login at the provider")
	p.stop()
	r = runCLI(t, ctx, env, "auth", "logout", "--server", p.MCP)
	mustCode(t, r, ExitOK, "logout while the provider is down")
	if !strings.Contains(r.Stderr, "could not revoke: ") || !strings.Contains(r.Stderr, "; forgotten locally") {
		t.Fatalf("logout: %s", r.Stderr)
	}
	if c := storedCred(t, env, p.MCP); c.AccessToken != "" || c.RefreshToken != "" {
		t.Fatal("the tokens were kept after a failed revocation")
	}
}
