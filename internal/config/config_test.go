package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/state"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestLoadScopesAndShadowing: a project file cannot shadow a name the user's own config
// defines, and a project entry is untrusted until the trust list names its present digest.
func TestLoadScopesAndShadowing(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	getenv := env(map[string]string{"HOME": home})
	write(t, filepath.Join(home, ".config", "mcptask", "config.json"), `{"mcpServers":{"build":{"url":"https://user.example/mcp"}}}`)
	write(t, filepath.Join(wd, ".mcp.json"), `{"mcpServers":{"build":{"url":"https://evil.example/mcp"},"helper":{"command":"helper","args":["--x"]}}}`)
	set, err := Load(Files("", getenv, wd), nil)
	if err != nil {
		t.Fatal(err)
	}
	use, ignored := set.Lookup("build")
	if use == nil || use.URL != "https://user.example/mcp" || use.Scope != User {
		t.Fatalf("build resolves to %+v, want the user's entry", use)
	}
	if len(ignored) != 1 || ignored[0].Scope != Project {
		t.Fatalf("the shadowed project entry is not reported: %+v", ignored)
	}
	helper, _ := set.Lookup("helper")
	if helper == nil || helper.Trusted || helper.TrustLabel() != "untrusted" {
		t.Fatalf("project entry helper = %+v, want untrusted", helper)
	}
	if _, err := helper.Resolve(getenv); !errors.As(err, new(*UntrustedError)) {
		t.Fatalf("Resolve of an untrusted entry = %v, want UntrustedError", err)
	}
	// Trusting the present digest makes it usable; an edit after that does not stay trusted.
	trusted := func() ([]state.TrustedServer, error) {
		return []state.TrustedServer{{File: helper.Source, Name: "helper", SHA256: helper.Digest}}, nil
	}
	set, err = Load(Files("", getenv, wd), trusted)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := set.Lookup("helper"); !h.Trusted {
		t.Fatal("a trusted digest does not make the entry trusted")
	}
	write(t, filepath.Join(wd, ".mcp.json"), `{"mcpServers":{"helper":{"command":"helper","args":["--evil"]}}}`)
	set, err = Load(Files("", getenv, wd), trusted)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := set.Lookup("helper"); h.Trusted {
		t.Fatal("an edited entry kept its trust")
	}
}

// TestLoadErrors: a missing --config file is a usage error; a file that does not parse is an
// error naming it, never skipped.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Load([]File{{filepath.Join(dir, "nope.json"), Explicit}}, nil)
	if !errors.As(err, new(*exitcode.UsageError)) {
		t.Fatalf("missing --config: %v, want a exitcode.UsageError", err)
	}
	bad := filepath.Join(dir, "bad.json")
	write(t, bad, `{"mcpServers":`)
	_, err = Load([]File{{bad, User}}, nil)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("bad JSON: %v, want an error naming %s", err, bad)
	}
}

// TestResolveExpands: ${VAR}s are expanded from the environment, an unset one is named, and
// an OAuth clientSecret must be a reference, never the secret.
func TestResolveExpands(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	write(t, p, `{"servers":{"a":{"url":"https://a.example/mcp","headers":{"Authorization":"Bearer ${TOK}"},
	  "oauth":{"clientId":"${CID}","clientSecret":"${CSEC}","scopes":"x y","issuer":"https://as.example"}},
	  "b":{"command":"b","env":{"K":"${MISSING}"}},
	  "c":{"url":"https://c.example/mcp","oauth":{"clientId":"id","clientSecret":"literal"}}}}`)
	set, err := Load([]File{{p, Explicit}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	getenv := env(map[string]string{"TOK": "t0k", "CID": "client"})
	a, _ := set.Lookup("a")
	r, err := a.Resolve(getenv)
	if err != nil || r.URL != "https://a.example/mcp" || len(r.Headers) != 1 || r.Headers[0] != "Authorization: Bearer t0k" {
		t.Fatalf("Resolve(a) = %+v, %v", r, err)
	}
	var o OAuthSettings
	if err := a.FillOAuth(&o, getenv, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if o.ClientID != "client" || o.ClientSecretEnv != "CSEC" || strings.Join(o.Scopes, ",") != "x,y" || o.Issuer != "https://as.example" {
		t.Fatalf("FillOAuth = %+v", o)
	}
	kept := OAuthSettings{ClientID: "flag"}
	_ = a.FillOAuth(&kept, getenv, nil)
	if kept.ClientID != "flag" || kept.ClientSecretEnv != "" {
		t.Fatalf("a flag's client id was overridden: %+v", kept)
	}
	b, _ := set.Lookup("b")
	if _, err := b.Resolve(getenv); !errors.As(err, new(*exitcode.UsageError)) || !strings.Contains(err.Error(), "${MISSING}") {
		t.Fatalf("unset variable: %v", err)
	}
	c, _ := set.Lookup("c")
	if err := c.FillOAuth(&OAuthSettings{}, getenv, nil); err == nil || strings.Contains(err.Error(), "literal") {
		t.Fatalf("literal clientSecret: %v, want a refusal that does not echo it", err)
	}
}

// TestEntryRaw: the entry is kept as written, so a rewrite needs no second read of the file.
func TestEntryRaw(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	write(t, p, `{"mcpServers":{"a":{"command":"a","cwd":"/x"}}}`)
	set, err := Load([]File{{p, User}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if e := set.Entry("a"); e == nil || !strings.Contains(string(e.Raw), `"cwd"`) {
		t.Fatalf("Entry(a) = %+v", e)
	}
}
