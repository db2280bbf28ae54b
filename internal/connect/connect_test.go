package connect

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// newTest returns a Connector over a private state directory and environment env.
func newTest(t *testing.T, env map[string]string, opts Options) (*Connector, *strings.Builder) {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["XDG_STATE_HOME"] = t.TempDir()
	env["HOME"] = t.TempDir()
	if opts.StatePath == "" {
		opts.StatePath = filepath.Join(t.TempDir(), "tasks.json")
	}
	warn := &strings.Builder{}
	c := New(Env{
		Getenv:   func(k string) string { return env[k] },
		Now:      time.Now,
		Stderr:   func() io.Writer { return io.Discard },
		Warn:     func(msg string) { warn.WriteString(msg + "\n") },
		Redactor: redact.New(nil),
		Info:     rpc.Implementation{Name: "mcptask-test", Version: "0"},
	}, func() Options { return opts })
	t.Cleanup(c.Close)
	return c, warn
}

// TestRecordUnsignedStartsNothing plays a planted ledger: a record that would start a
// command is refused before anything runs, unless this user's key signed it.
func TestRecordUnsignedStartsNothing(t *testing.T) {
	c, _ := newTest(t, nil, Options{ConnectTimeout: 5 * time.Second})
	marker := filepath.Join(t.TempDir(), "ran")
	rec := &state.Record{TaskID: "t1", Era: string(rpc.EraModern),
		Server: state.Server{Command: []string{"sh", "-c", "touch " + marker}}}
	_, _, err := c.Record(context.Background(), rec, rpc.ClientOptions{})
	var ur *UntrustedRecordError
	if !errors.As(err, &ur) {
		t.Fatalf("Record of an unsigned stdio record = %v, want UntrustedRecordError", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Fatal("the planted record's command ran")
	}
	// Signed by this user's key, the same record passes the check.
	c.Sign(rec)
	if err := c.Check(*rec); err != nil {
		t.Fatalf("a record this user signed is refused: %v", err)
	}
	// And a change after signing (another command) breaks the signature.
	rec.Server.Command = []string{"sh", "-c", "touch " + marker + ".2"}
	if err := c.Check(*rec); !errors.As(err, &ur) {
		t.Fatalf("an edited record passes the check: %v", err)
	}
}

// TestRecordSecretsFromNow: a record keeps header names and a variable's name, never values;
// reaching it again asks for them now, and a redacted URL needs the full URL again.
func TestRecordSecretsFromNow(t *testing.T) {
	c, _ := newTest(t, nil, Options{})
	rec := &state.Record{TaskID: "t1", Server: state.Server{URL: "http://127.0.0.1:1/mcp", HeaderNames: []string{"X-Api-Key"}}}
	c.Sign(rec)
	_, _, err := c.Record(context.Background(), rec, rpc.ClientOptions{})
	var ue *exitcode.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "X-Api-Key") {
		t.Fatalf("a record with a header, none given: %v, want a usage error naming it", err)
	}
	rec = &state.Record{TaskID: "t2", Server: state.Server{URL: "http://127.0.0.1:1/mcp?token=[redacted]"}}
	if _, _, err := c.Record(context.Background(), rec, rpc.ClientOptions{}); !errors.As(err, &ue) {
		t.Fatalf("a record with a redacted URL: %v, want a usage error", err)
	}
}

// TestDialNoAnswer: a server that accepts the connection and never answers is given up on
// after ConnectTimeout, with an error naming it.
func TestDialNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	c, _ := newTest(t, nil, Options{ConnectTimeout: 300 * time.Millisecond, MaxConns: 4, Auth: AuthOptions{Login: "never"}})
	ref, hdr, err := NewRef(Target{Server: "http://" + ln.Addr().String() + "/mcp"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = c.Dial(context.Background(), ref, hdr, rpc.ClientOptions{})
	var na *NoAnswerError
	if !errors.As(err, &na) {
		t.Fatalf("Dial to a silent server = %v, want NoAnswerError", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}

// TestNewRefRefuses: credentials in the URL, a header that would split the request, and a
// malformed header whose value would be echoed are refused before anything is sent.
func TestNewRefRefuses(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		name string
		t    Target
		leak string
	}{
		{"userinfo", Target{Server: "https://user:s3cret@example.com/mcp"}, "s3cret"},
		{"header-crlf", Target{Server: "https://example.com/mcp", Headers: []string{"X-Key: a\r\nHost: evil"}}, ""},
		{"header-malformed", Target{Server: "https://example.com/mcp", Headers: []string{"Authorization Bearer s3cret"}}, "s3cret"},
		{"bearer-unset", Target{Server: "https://example.com/mcp", BearerEnv: "NOPE"}, ""},
		{"stdio-header", Target{Stdio: "srv", Headers: []string{"X-Key: s3cret"}}, "s3cret"},
		{"both", Target{Server: "https://example.com/mcp", Stdio: "srv"}, ""},
	} {
		_, _, err := NewRef(tc.t, none)
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a exitcode.UsageError", tc.name, err)
			continue
		}
		if tc.leak != "" && strings.Contains(err.Error(), tc.leak) {
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
	}
}

// TestPoolsShared: every connection to one host shares one pool; another host has its own.
func TestPoolsShared(t *testing.T) {
	c, _ := newTest(t, nil, Options{MaxConns: 2})
	a, b := c.HTTPClient("http://127.0.0.1:1/mcp"), c.HTTPClient("http://127.0.0.1:1/other")
	if a == nil || a != b {
		t.Fatal("two URLs of one host got two pools")
	}
	if c.HTTPClient("http://127.0.0.1:2/mcp") == a {
		t.Fatal("two hosts share a pool")
	}
}

// TestFingerprintKeepsNoSecret: the cache key of a credential tells credentials apart and
// contains none of them.
func TestFingerprintKeepsNoSecret(t *testing.T) {
	h1 := http.Header{"Authorization": {"Bearer s3cret"}}
	h2 := http.Header{"Authorization": {"Bearer other"}}
	f1, f2 := CredentialFingerprint(h1), CredentialFingerprint(h2)
	if f1 == f2 || strings.Contains(f1, "s3cret") {
		t.Fatalf("fingerprints %q %q", f1, f2)
	}
}

// TestRecorderFile: the --record file is private (0600) and opened once per run.
func TestRecorderFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rec.ndjson")
	c, _ := newTest(t, nil, Options{Record: p})
	r1, err := c.Recorder()
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := c.Recorder()
	if r1 != r2 {
		t.Fatal("the record file was opened twice")
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file mode %v, want 0600", fi.Mode().Perm())
	}
}
