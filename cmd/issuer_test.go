package cmd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// writeECKey writes a fresh P-256 private key as PKCS #8 PEM, for --client-key-file.
func writeECKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClientCredentialsBoundToIssuer plays a server whose protected resource metadata names
// an authorization server of its own (prm-foreign-issuer) to a user whose pre-registered
// client, with a secret or a private key, belongs to another one. Whether the issuer is given
// (--issuer, $MCPTASK_ISSUER, "issuer" in a named server's oauth settings) or not at all,
// mcptask exits 7 with a message naming the issuers and the fix, and the attacker's token
// endpoint never hears from it.
func TestClientCredentialsBoundToIssuer(t *testing.T) {
	ctx := t.Context()
	s := hostile.Start(t, "prm-foreign-issuer", demo.Options{})
	real := newOAuthServer(t)
	realIssuer := strings.TrimSuffix(real.URL, "/mcp")
	const secret = "cs-bound-to-its-issuer-5b2e"
	env := withEnv(authTestEnv(t), "MCPTASK_TEST_CLIENT_SECRET", secret)
	key := writeECKey(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"hostile": map[string]any{"url": s.URL,
		"oauth": map[string]any{"clientId": "ci", "clientSecret": "${MCPTASK_TEST_CLIENT_SECRET}", "issuer": realIssuer}}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	withSecret := []string{"--server", s.URL, "--client-id", "ci", "--client-secret-env", "MCPTASK_TEST_CLIENT_SECRET"}
	withKey := []string{"--server", s.URL, "--client-id", "ci", "--client-key-file", key}
	cc := []string{"--grant", "client-credentials"}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for _, c := range []struct {
		name   string
		env    map[string]string
		args   []string
		reason string
	}{
		{"secret, client credentials, --issuer", env, cat(withSecret, cc, []string{"--issuer", realIssuer}), "issuer_not_allowed"},
		{"secret, client credentials, MCPTASK_ISSUER", withEnv(env, "MCPTASK_ISSUER", realIssuer), cat(withSecret, cc), "issuer_not_allowed"},
		{"secret, client credentials, no issuer", env, cat(withSecret, cc), "issuer_required"},
		{"key, client credentials, --issuer", env, cat(withKey, cc, []string{"--issuer", realIssuer}), "issuer_not_allowed"},
		{"key, client credentials, no issuer", env, cat(withKey, cc), "issuer_required"},
		{"secret, browser login, --issuer", env, cat(withSecret, []string{"--issuer", realIssuer}), "issuer_not_allowed"},
		{"secret, browser login, no issuer", env, withSecret, "issuer_required"},
		{"named server with oauth.issuer", env, []string{"--server", "hostile", "--config", cfg}, "issuer_not_allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, ctx, c.env, cat([]string{"call", "echo", "--arg", "text=hi", "--json"}, c.args)...)
			mustCode(t, r, ExitAuth, c.name)
			e := jsonError(t, r.Stderr)
			msg, _ := e["message"].(string)
			if e["reason"] != c.reason {
				t.Fatalf("reason %v, want %s: %s", e["reason"], c.reason, msg)
			}
			want := []string{s.Base, "--issuer"}
			if c.reason == "issuer_not_allowed" {
				want = append(want, realIssuer)
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(r.Stdout+r.Stderr, secret) {
				t.Error("the output holds the client secret")
			}
		})
	}
	if s.Saw(secret) {
		t.Fatal("the foreign authorization server received the client secret")
	}
	for _, r := range s.Requests() {
		if r.Path == "/token" || r.Path == "/authorize" {
			t.Fatalf("the foreign authorization server received %s %s", r.Method, r.Path)
		}
	}
	if len(s.Requests()) == 0 {
		t.Fatal("the server was never asked: the test proves nothing")
	}
}

// TestClientSecretWithItsIssuer: the pre-registered client with its secret and the issuer it
// was registered at logs in and calls as before, and stores no secret.
func TestClientSecretWithItsIssuer(t *testing.T) {
	ctx := t.Context()
	o := newOAuthServer(t)
	secret := o.preRegister("mcptask-ci", false)
	env := withEnv(authTestEnv(t), "MCPTASK_TEST_CLIENT_SECRET", secret)
	r := runCLI(t, ctx, env, "call", "echo", "--arg", "text=hi", "--server", o.URL, "--client-id", "mcptask-ci",
		"--client-secret-env", "MCPTASK_TEST_CLIENT_SECRET", "--issuer", strings.TrimSuffix(o.URL, "/mcp"))
	mustCode(t, r, ExitOK, "call with the client's own issuer")
	if tr := o.traffic(); len(tr.Registrations) != 0 || len(tr.Authorizations) != 1 || tr.Authorizations[0].client != "mcptask-ci" {
		t.Fatalf("traffic %+v", tr)
	}
	noSecretIn(t, o, "output", r.Stdout+r.Stderr)
	// A refresh later, with the issuer from the environment this time, sends the secret to
	// the same token endpoint.
	o.expireAccessTokens()
	r = runCLI(t, ctx, withEnv(env, "MCPTASK_ISSUER", strings.TrimSuffix(o.URL, "/mcp")), "tools", "--server", o.URL, "--login", "never",
		"--client-id", "mcptask-ci", "--client-secret-env", "MCPTASK_TEST_CLIENT_SECRET")
	mustCode(t, r, ExitOK, "refresh with the client's own issuer")
	if n, _ := o.stats(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
}

// TestIssuerFlagErrors: --issuer is an https URL (or loopback http), like every endpoint.
func TestIssuerFlagErrors(t *testing.T) {
	for _, v := range []string{"as.example", "http://as.example", "ftp://as.example"} {
		r := runCLI(t, t.Context(), authTestEnv(t), "tools", "--server", "http://127.0.0.1:1/mcp", "--issuer", v)
		mustCode(t, r, ExitUsage, "--issuer "+v)
	}
}
