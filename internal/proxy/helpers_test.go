package proxy

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/demo/demotest"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// events collects what a proxy reports.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }

func (e *events) of(kind EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) rules() []string {
	var out []string
	for _, ev := range e.of(EventViolation) {
		out = append(out, ev.Violation.Rule+"/"+ev.Violation.Peer)
	}
	return out
}

// lockedBuffer is a record file the test can read while the proxy writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// rig is a proxy in front of an upstream, with its ledger, record and events.
type rig struct {
	p      *Proxy
	url    string // the proxy's endpoint
	up     string // the server's endpoint
	store  *state.Store
	ledger *ledger.Writer
	rec    *lockedBuffer
	trace  *lockedBuffer
	ev     *events
}

// newRig starts a proxy in front of upstream on loopback.
func newRig(t *testing.T, upstream string) *rig {
	t.Helper()
	r := &rig{up: upstream, rec: &lockedBuffer{}, trace: &lockedBuffer{}, ev: &events{}}
	r.store = state.Open(filepath.Join(t.TempDir(), "tasks.json"))
	r.ledger = ledger.New(r.store, ledger.Options{Every: 10 * time.Millisecond})
	r.p = New(Options{Server: state.Server{URL: upstream}, Ledger: r.ledger, Record: r.rec, Trace: r.trace, OnEvent: r.ev.add})
	h, err := r.p.Handler(HTTPOptions{Upstream: upstream})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); r.p.Close() })
	r.url = hs.URL + "/mcp"
	return r
}

// demoUpstream runs the demo server on loopback behind a schema-validating recorder: every
// message the host and the demo server send through the proxy is checked against the spec
// when the test ends.
func demoUpstream(t *testing.T, opts demo.Options) string {
	t.Helper()
	return checkedDemoUpstream(t, opts, false)
}

// checkedDemoUpstream is demoUpstream; serverOnly checks only what the demo server sends, for
// tests whose host breaks the rules on purpose.
func checkedDemoUpstream(t *testing.T, opts demo.Options, serverOnly bool) string {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	url, _ := demotest.Start(t, opts, serverOnly)
	return url
}

// client connects mcptask's own client to url in era ("auto" detects).
func client(t *testing.T, url, era string) *rpc.Client {
	t.Helper()
	tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClient(tr, rpc.ClientOptions{Protocol: era, Info: rpc.Implementation{Name: "proxy-test", Version: "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
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

func record(t *testing.T, st *state.Store, id string) *state.Record {
	t.Helper()
	recs, err := st.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		return nil
	}
	return &recs[0]
}

var _ = http.MethodPost
