// Package demotest is test support: it starts the demo server on loopback behind the
// spec-validating recorder (internal/spectest), so that every test that talks to the demo
// checks what both sides send against the official schemas. The engine's, the commands' and
// the proxy's tests all need exactly this, and it lives here so that they share one copy.
package demotest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/spectest"
)

// Start runs the demo with opts (a task step of 20 ms and a poll interval of 100 ms unless
// set) and returns its MCP endpoint and the recorder in front of it. When the test ends the
// server stops and the test fails with every message that did not match the schemas; with
// serverOnly, only what the demo sent is checked (for tests that send bad requests on purpose).
func Start(t testing.TB, opts demo.Options, serverOnly bool) (string, *spectest.Recorder) {
	t.Helper()
	if opts.StepDelay == 0 {
		opts.StepDelay = 20 * time.Millisecond
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	srv, err := demo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := &spectest.Recorder{V: spectest.Load(t), Next: srv.Handler(), ServerOnly: serverOnly}
	hs := httptest.NewServer(rec)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		rec.Check(t)
	})
	return hs.URL + "/mcp", rec
}
