package auth

import (
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBearerChallenge(t *testing.T) {
	cases := []struct {
		header []string
		want   map[string]string
	}{
		{[]string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`},
			map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "a b"}},
		{[]string{`Basic realm="x", Bearer error="insufficient_scope", scope="files:write", error_description="need \"write\""`},
			map[string]string{"error": "insufficient_scope", "scope": "files:write", "error_description": `need "write"`}},
		{[]string{`Basic realm="x"`, `bearer Error=invalid_token`}, map[string]string{"error": "invalid_token"}},
		{[]string{`Bearer`}, map[string]string{}},
		{[]string{`Bearer realm="unterminated`}, map[string]string{}},
	}
	for _, c := range cases {
		h := http.Header{"Www-Authenticate": c.header}
		got, _ := BearerChallenge(h)
		if !reflect.DeepEqual(got.Params, c.want) {
			t.Errorf("%q: got %v, want %v", c.header, got.Params, c.want)
		}
	}
	if _, ok := BearerChallenge(http.Header{"Www-Authenticate": {`Basic realm="x"`}}); ok {
		t.Error("a Basic challenge was taken for Bearer")
	}
}

func TestResourceCovers(t *testing.T) {
	cases := []struct {
		resource, server string
		want             bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},      // a root PRM names the origin
		{"https://MCP.example.com:443/", "https://mcp.example.com/mcp", true}, // case and default port
		{"https://mcp.example.com/mcp/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/m", "https://mcp.example.com/mcp", false}, // not a whole segment
		{"https://evil.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/other", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp", false},
	}
	for _, c := range cases {
		if got := resourceCovers(c.resource, c.server); got != c.want {
			t.Errorf("resourceCovers(%q, %q) = %v", c.resource, c.server, got)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	got, _ := metadataURLs("https://auth.example.com/tenant1")
	want := []string{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://auth.example.com/.well-known/openid-configuration/tenant1",
		"https://auth.example.com/tenant1/.well-known/openid-configuration"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with a path: %v", got)
	}
	got, _ = metadataURLs("https://auth.example.com")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("without a path: %v", got)
	}
}

func TestCheckIss(t *testing.T) {
	d := func(advertised bool) *Discovery {
		return &Discovery{Issuer: "https://as.example.com", AS: &ServerMetadata{IssParameterSupported: advertised}}
	}
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	cases := []struct {
		query      string
		advertised bool
		ok         bool
	}{
		{"code=c&iss=https%3A%2F%2Fas.example.com", true, true},
		{"code=c", true, false},
		{"code=c", false, true},
		{"code=c&iss=https%3A%2F%2Fas.example.com%2F", true, false}, // no trailing-slash normalisation
		{"code=c&iss=https%3A%2F%2FAS.example.com", false, false},   // no case folding
		{"error=access_denied&iss=https%3A%2F%2Fevil.example", false, false},
	}
	for _, c := range cases {
		err := checkIss(q(c.query), d(c.advertised))
		if (err == nil) != c.ok {
			t.Errorf("%s (advertised %v): %v", c.query, c.advertised, err)
		}
		if err != nil && (ReasonOf(err) != ReasonIssMismatch || strings.Contains(err.Error(), "access_denied")) {
			t.Errorf("%s: %v", c.query, err)
		}
	}
}

func TestCredentialExpiring(t *testing.T) {
	now := time.Now()
	c := &Credential{AccessToken: "x", IssuedAt: now, ExpiresAt: now.Add(10 * time.Second)}
	if c.expiring(now) {
		t.Error("a fresh 10 s token counts as expiring")
	}
	if !c.expiring(now.Add(8500 * time.Millisecond)) {
		t.Error("a token with 1.5 s of 10 left does not count as expiring")
	}
	c = &Credential{AccessToken: "x", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
	if c.expiring(now.Add(58*time.Minute)) || !c.expiring(now.Add(59*time.Minute+30*time.Second)) {
		t.Error("an hour token is refreshed a minute before it expires")
	}
}

// TestKeychainThatHangsFallsBackToFile points the keychain at a D-Bus socket that accepts
// connections and never answers: the store gives up after its timeout and uses the file.
func TestKeychainThatHangsFallsBackToFile(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+sock)
	var warnings []string
	st := &Store{Dir: t.TempDir(), Mode: StoreAuto, Timeout: 300 * time.Millisecond, Warn: func(s string) { warnings = append(warnings, s) }}
	start := time.Now()
	c := &Credential{ServerURL: "https://mcp.example.com/mcp", Resource: "https://mcp.example.com/mcp", Issuer: "https://as.example.com", AccessToken: "at", UpdatedAt: time.Now()}
	if err := st.Put(c); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Put took %s", took)
	}
	got, err := st.Get(c.Key())
	if err != nil || got == nil || got.AccessToken != "at" {
		t.Fatalf("Get = %v, %v", got, err)
	}
	entries, _ := st.List()
	if len(entries) != 1 || entries[0].Backend != StoreFile {
		t.Fatalf("index = %+v", entries)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "did not answer") {
		t.Fatalf("warnings = %q", warnings)
	}
}
