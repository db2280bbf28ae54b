package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// TestRedirectMCPToAnotherOriginRefused plays a server that answers the MCP endpoint with a
// redirect to another origin (another port of the same host, or plain http from https).
// net/http would follow it and re-send the user's --header values there, and on those two
// hops even the Authorization header. mcptask refuses: exit 1, a message that names both
// URLs and the fix, and the other origin receives nothing at all.
func TestRedirectMCPToAnotherOriginRefused(t *testing.T) {
	const hdrSecret, bearerSecret = "hdr-secret-4c1d", "bearer-secret-9e7a"
	for _, c := range []struct {
		mode string
		tls  bool
	}{{"redirect-mcp-other-origin", false}, {"redirect-mcp-downgrade", true}} {
		t.Run(c.mode, func(t *testing.T) {
			other := hostile.Start(t, "redirect-target", demo.Options{})
			start := hostile.Start
			if c.tls {
				start = hostile.StartTLS
			}
			s := start(t, c.mode, demo.Options{})
			s.RedirectTo(other.Base)
			env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "MCPTASK_TEST_TOKEN": bearerSecret}
			for _, args := range [][]string{
				{"tools"},
				{"call", "echo", "--arg", "text=hi"},
			} {
				r := runCLI(t, t.Context(), env, append(args, "--server", s.URL, "--insecure", "--json",
					"--header", "X-Api-Key: "+hdrSecret, "--bearer-env", "MCPTASK_TEST_TOKEN")...)
				mustCode(t, r, ExitFailure, strings.Join(args, " "))
				msg, _ := jsonError(t, r.Stderr)["message"].(string)
				for _, want := range []string{"redirected POST " + s.URL, other.URL, "does not follow redirects to another origin", "--server"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
				if strings.Contains(r.Stdout+r.Stderr, hdrSecret) || strings.Contains(r.Stdout+r.Stderr, bearerSecret) {
					t.Error("the output holds a secret")
				}
			}
			if other.Saw(hdrSecret) || other.Saw(bearerSecret) {
				t.Fatal("the other origin received the user's header or bearer")
			}
			if n := len(other.Requests()); n != 0 {
				t.Fatalf("the other origin received %d requests", n)
			}
			if !s.Saw(hdrSecret) {
				t.Fatal("the server named never got the request: the test proves nothing")
			}
		})
	}
}

// TestAuthTokenEndpointRedirectNotFollowed plays an authorization server whose token
// endpoint answers 307 to another origin. net/http re-sends a 307 POST with its body, which
// holds the code and its PKCE verifier, or the refresh token. mcptask does not follow: the
// code exchange and the refresh fail with exit 7, and the other origin receives nothing.
func TestAuthTokenEndpointRedirectNotFollowed(t *testing.T) {
	ctx := t.Context()
	target := hostile.Start(t, "redirect-target", demo.Options{})
	o := newOAuthServer(t)
	env := authTestEnv(t)

	o.configure(func(o *oauthServer) { o.tokenRedirect = target.Base })
	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--json")
	mustCode(t, r, ExitAuth, "a login whose code exchange is redirected")
	if msg, _ := jsonError(t, r.Stderr)["message"].(string); !strings.Contains(msg, "does not follow redirects of OAuth requests") || !strings.Contains(msg, target.Base+"/token") {
		t.Fatalf("message = %q", msg)
	}
	if gt := o.traffic().GrantTypes; len(gt) != 1 || gt[0] != "authorization_code" {
		t.Fatalf("token requests %v: the code exchange never reached the token endpoint, the test proves nothing", gt)
	}

	o.configure(func(o *oauthServer) { o.tokenRedirect = "" })
	mustCode(t, runCLI(t, ctx, env, "auth", "login", "--server", o.URL), ExitOK, "login")
	o.expireAccessTokens()
	o.configure(func(o *oauthServer) { o.tokenRedirect = target.Base })
	r = runCLI(t, ctx, env, "tools", "--server", o.URL, "--login", "never", "--json")
	mustCode(t, r, ExitAuth, "a refresh that is redirected")
	if e := jsonError(t, r.Stderr); e["reason"] != "refresh_failed" || !strings.Contains(e["message"].(string), "does not follow redirects") {
		t.Fatalf("error = %v", e)
	}
	if gt := o.traffic().GrantTypes; gt[len(gt)-1] != "refresh_token" {
		t.Fatalf("token requests %v: no refresh was tried", gt)
	}
	for _, s := range o.allSecrets() {
		if s != "" && target.Saw(s) {
			t.Fatalf("the redirect target received the secret %s…", s[:min(6, len(s))])
		}
	}
	if n := len(target.Requests()); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
}

// TestAuthInsecureHopsRefused: every URL the OAuth client is sent to is https or loopback,
// where it is learnt and at every redirect hop: a token_endpoint on plain http at a name
// that is not loopback, and a protected resource metadata document that redirects there,
// end discovery with exit 7 (reason insecure_transport) before anything is sent to them.
func TestAuthInsecureHopsRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(o *oauthServer)
	}{
		{"http token_endpoint", func(o *oauthServer) { o.tokenEndpoint = "http://as.example/token" }},
		{"PRM redirected to http", func(o *oauthServer) {
			o.prmRedirect = "http://as.example/.well-known/oauth-protected-resource/mcp"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOAuthServer(t)
			o.configure(c.setup)
			env := authTestEnv(t)
			r := runCLI(t, t.Context(), env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--json")
			mustCode(t, r, ExitAuth, "call")
			e := jsonError(t, r.Stderr)
			if e["reason"] != "insecure_transport" || !strings.Contains(e["message"].(string), "http://as.example") {
				t.Fatalf("error = %v", e)
			}
			if tr := o.traffic(); len(tr.GrantTypes)+len(tr.Authorizations)+len(tr.Registrations) != 0 {
				t.Fatalf("OAuth went on after the insecure hop: %+v", tr)
			}
		})
	}
}

// TestAuthNoBearerOverPlainHTTP: a token stored for a server reached over plain http at a
// name that is not loopback is never sent there (anyone on the path could read it), and a
// 401 from such a server ends with exit 7 and a message instead of a login. The server is
// reached through an HTTP proxy on loopback, so the name needs no DNS.
func TestAuthNoBearerOverPlainHTTP(t *testing.T) {
	bin := mcptaskBin(t)
	o := newOAuthServer(t)
	env := authTestEnv(t)
	const server = "http://mcp.example/mcp"
	stored := "at-stored-for-plain-http"
	now := time.Now()
	if err := authStore(env).Put(&auth.Credential{ServerURL: server, Resource: server, Issuer: "https://as.example",
		TokenEndpoint: "https://as.example/token", Grant: auth.GrantAuthorizationCode, AccessToken: stored, TokenType: "Bearer",
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "tools", "--server", server, "--login", "never", "--json", "--state", filepath.Join(t.TempDir(), "tasks.json"))
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+env["XDG_STATE_HOME"], "MCPTASK_AUTH_STORE=file", "CI=",
		"HTTP_PROXY="+o.base, "http_proxy="+o.base, "NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitAuth {
		t.Fatalf("exit %v, want %d\n%s", err, ExitAuth, out)
	}
	// "asks for an OAuth login" follows the server's 401: the request went through the proxy.
	if e := jsonError(t, string(out)); e["reason"] != "insecure_transport" || !strings.Contains(e["message"].(string), "asks for an OAuth login, but it is plain http://") {
		t.Fatalf("error = %v", e)
	}
	if n := o.seen(stored); n != 0 {
		t.Fatalf("the stored token went over plain http %d times", n)
	}
}
