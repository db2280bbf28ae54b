package cmd

// Every message the demo server sends, in every test, is checked against the spec's schemas
// (issue 16), and so is every message mcptask sends it: demoServer does it for the usual
// loopback server; the helpers here do it for the others (a demo handler inside a bigger
// server, a demo child process on stdio, a demo child process on HTTP).

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcptask/mcptask/internal/spectest"
)

// specChecked wraps h (the demo server's handler) in a schema-validating recorder; when the
// test ends, every message that broke the spec fails it. serverOnly checks only what the
// server sends, for tests whose client breaks the rules on purpose. Register it before the
// server's own cleanup, so that it runs after the server closed (and its streams ended).
func specChecked(t *testing.T, h http.Handler, serverOnly bool) *spectest.Recorder {
	t.Helper()
	rec := &spectest.Recorder{V: spectest.Load(t), Next: h, ServerOnly: serverOnly}
	t.Cleanup(func() { rec.Check(t) })
	return rec
}

// specProxy puts a validating reverse proxy in front of the server at endpoint (a demo child
// process): the returned endpoint forwards everything unchanged (Host, Origin, SSE streams
// flushed as they come) and checks every message with specChecked.
func specProxy(t *testing.T, endpoint string, serverOnly bool) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client that hangs up is no news
	rec := specChecked(t, rp, serverOnly)
	hs := httptest.NewServer(rec)
	t.Cleanup(hs.Close)
	return hs.URL + u.Path
}

// The first arguments of a test binary started by demoStdioArgv: the word, the schema
// directory, the failure log, then mcptask's own arguments.
const (
	specStdioArg           = "spectest-stdio"
	specStdioServerOnlyArg = "spectest-stdio-server-only"
)

// demoStdioArgv returns the argv that runs this test binary as `mcptask demo serve --stdio
// args...` with every frame it reads and writes checked against the spec (only those it
// writes when serverOnly). The child logs each failure at once (it may be killed at any
// moment); when the test ends, t fails with what it logged. The child needs
// MCPTASK_TEST_MAIN=1 in its environment, as every mcptask child of these tests does. A
// command recorded from it (a ledger's) starts a validating child again.
func demoStdioArgv(t *testing.T, serverOnly bool, args ...string) []string {
	t.Helper()
	dir, err := spectest.SpecDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("spectest: %v", err)
		}
		t.Skipf("spectest: %v", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "spec-errors.log")
	t.Cleanup(func() { spectest.CheckLog(t, logFile) })
	word := specStdioArg
	if serverOnly {
		word = specStdioServerOnlyArg
	}
	return append([]string{os.Args[0], word, dir, logFile, "demo", "serve", "--stdio"}, args...)
}

// demoStdio is demoStdioArgv (both directions checked) as one command line, for --stdio.
func demoStdio(t *testing.T, args ...string) string {
	t.Helper()
	return strings.Join(quoteAll(demoStdioArgv(t, false, args...)), " ")
}

// specStdioMain runs mcptask with its stdin and stdout checked, when demoStdioArgv started
// this binary; ok is false otherwise.
func specStdioMain() (code int, ok bool) {
	if len(os.Args) < 4 || (os.Args[1] != specStdioArg && os.Args[1] != specStdioServerOnlyArg) {
		return 0, false
	}
	s := spectest.ChildStream(os.Args[2], os.Args[3], os.Args[1] == specStdioServerOnlyArg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := &IOStreams{In: s.ClientReader(os.Stdin), Out: s.ServerWriter(os.Stdout), ErrOut: os.Stderr}
	return Run(ctx, NewFactory(streams), os.Args[4:]), true
}
