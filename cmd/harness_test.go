package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/demo/demotest"
	"github.com/mcptask/mcptask/internal/spectest"
)

// cliResult is what one in-process mcptask run produced.
type cliResult struct {
	Stdout, Stderr string
	Code           int
}

// lockedBuffer lets a test read stderr while the command is still writing it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runCLI runs mcptask in-process with args and the given extra environment, no TTY.
func runCLI(t *testing.T, ctx context.Context, env map[string]string, args ...string) cliResult {
	t.Helper()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	code := runOn(t, ctx, &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, env, args...)
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// runOn runs mcptask in-process on ios (whose TTY answers the caller sets) with the given
// extra environment, and returns its exit code.
func runOn(t *testing.T, ctx context.Context, ios *IOStreams, env map[string]string, args ...string) int {
	t.Helper()
	f := NewFactory(ios)
	f.Getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "MCPTASK_STATE" {
			// Never the user's real ledger: one per test, shared by its runs.
			return testLedger(t)
		}
		if k == "XDG_STATE_HOME" {
			// Nor the user's state directory (the ledger key, trusted project servers).
			return testStateHome(t)
		}
		return ""
	}
	code := Run(ctx, f, args)
	noteExit(args, code) // for the check that help lists it (exitlog_test.go)
	return code
}

var ledgers sync.Map // *testing.T -> ledger path

// testLedger returns the ledger file of test t (created lazily, removed with the test). It is
// keyed by the test itself, not its name, so -count=N runs never share a ledger.
func testLedger(t *testing.T) string {
	t.Helper()
	if p, ok := ledgers.Load(t); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "state", "tasks.json")
	actual, loaded := ledgers.LoadOrStore(t, p)
	if !loaded {
		t.Cleanup(func() { ledgers.Delete(t) })
	}
	return actual.(string)
}

// testStateHome is the $XDG_STATE_HOME of test t, beside its ledger: the user's state
// directory, where the ledger key and the trust list live, shared by the test's runs.
func testStateHome(t *testing.T) string {
	return filepath.Join(filepath.Dir(filepath.Dir(testLedger(t))), "xdg-state")
}

// demoServer starts the demo server on loopback behind a schema-validating recorder. Every
// message mcptask sends to it is checked against the spec when the test ends.
func demoServer(t *testing.T, opts demo.Options) (string, *spectest.Recorder) {
	t.Helper()
	return demotest.Start(t, opts, false)
}

// decodeJSON decodes the single JSON document a --json run printed on stdout.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, s)
	}
	return m
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// methodsOf filters a recorder's methods for one name.
func countMethod(rec *spectest.Recorder, method string) int {
	n := 0
	for _, m := range rec.Methods() {
		if m == method {
			n++
		}
	}
	return n
}

var _ = http.MethodPost
