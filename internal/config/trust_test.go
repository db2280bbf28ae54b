package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
)

// TestTrustProjectServers: only project entries can be chosen for trust; trusting one pins
// its present digest, so a Load after it finds the entry trusted, and untrusting takes that
// back.
func TestTrustProjectServers(t *testing.T) {
	home, wd, stateDir := t.TempDir(), t.TempDir(), t.TempDir()
	getenv := env(map[string]string{"HOME": home, "XDG_STATE_HOME": stateDir})
	write(t, filepath.Join(home, ".config", "mcptask", "config.json"), `{"mcpServers":{"mine":{"url":"https://user.example/mcp"}}}`)
	write(t, filepath.Join(wd, ".mcp.json"), `{"mcpServers":{"a":{"url":"https://a.example/mcp"},"b":{"command":"b"}}}`)
	load := func() *Set {
		set, err := Load(Files("", getenv, wd), Trusted(getenv))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	set := load()
	var ue *exitcode.UsageError
	if _, err := set.ChooseProject([]string{"mine"}, false); !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs no trust") {
		t.Fatalf("choosing the user's own server = %v, want a exitcode.UsageError saying it needs no trust", err)
	}
	if _, err := set.ChooseProject([]string{"nosuch"}, false); !errors.As(err, &ue) || !strings.Contains(err.Error(), ".mcp.json") {
		t.Fatalf("choosing an unknown server = %v, want a exitcode.UsageError naming the project files", err)
	}
	all, err := set.ChooseProject(nil, true)
	if err != nil || len(all) != 2 {
		t.Fatalf("--all = %+v, %v; want a and b", all, err)
	}
	chosen, err := set.ChooseProject([]string{"a"}, false)
	if err != nil || len(chosen) != 1 || chosen[0].Name != "a" {
		t.Fatalf("choosing a = %+v, %v", chosen, err)
	}
	if err := SetTrust(getenv, chosen, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	set = load()
	if a, b := set.Entry("a"), set.Entry("b"); !a.Trusted || b.Trusted {
		t.Fatalf("after trusting a: a trusted %v, b trusted %v", a.Trusted, b.Trusted)
	}
	if err := SetTrust(getenv, all, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if set = load(); set.Entry("a").Trusted {
		t.Fatal("a is still trusted after untrust --all")
	}
}

// TestUse resolves a name: unknown is nil, an untrusted project entry is refused before its
// OAuth settings are read, and an HTTP entry fills only the OAuth settings left unset.
func TestUse(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	getenv := env(map[string]string{"HOME": home, "TOKEN": "t0k"})
	write(t, filepath.Join(home, ".config", "mcptask", "config.json"), `{"mcpServers":{"web":{"url":"https://user.example/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"oauth":{"clientId":"cid","issuer":"https://issuer.example"}}}}`)
	write(t, filepath.Join(wd, ".mcp.json"), `{"mcpServers":{"web":{"url":"https://evil.example/mcp"},"p":{"url":"https://p.example/mcp","oauth":{"clientId":"evil"}}}}`)
	set, err := Load(Files("", getenv, wd), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _, err := set.Use("nosuch", getenv, &OAuthSettings{}, nil); s != nil || err != nil {
		t.Fatalf("Use of an unknown name = %+v, %v", s, err)
	}
	var o OAuthSettings
	if _, _, _, err := set.Use("p", getenv, &o, nil); !errors.As(err, new(*UntrustedError)) || o.ClientID != "" {
		t.Fatalf("Use of an untrusted entry = %v (client id %q), want UntrustedError and nothing filled", err, o.ClientID)
	}
	o = OAuthSettings{Issuer: "https://flag.example"}
	s, ignored, r, err := set.Use("web", getenv, &o, nil)
	if err != nil || s.Scope != User || len(ignored) != 1 {
		t.Fatalf("Use(web) = %+v, ignored %+v, %v; want the user's entry, the project's ignored", s, ignored, err)
	}
	if r.URL != "https://user.example/mcp" || len(r.Headers) != 1 || r.Headers[0] != "Authorization: Bearer t0k" {
		t.Fatalf("resolved %+v", r)
	}
	if o.ClientID != "cid" || o.Issuer != "https://flag.example" {
		t.Fatalf("OAuth settings %+v: want the entry's client id, the flag's issuer kept", o)
	}
}
