package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/demo/demotest"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
	"github.com/mcptask/mcptask/internal/state"
)

var eras = []string{rpc.VersionModern, rpc.VersionLegacy}

// step is one scripted answer to a tasks/get: a task, or a failure.
type step struct {
	status   rpc.TaskStatus
	interval time.Duration
	message  string
	fail     error // a transport failure
	unknown  bool  // -32602: the server does not know the task
}

// memServer is an in-memory 2026-07-28 server for tests of cadence inside a synctest bubble,
// where real sockets would never count as durably blocked. It answers tasks/get from a script
// per task (the last step repeats) and records when each poll came and how many were in flight.
type memServer struct {
	mu       sync.Mutex
	script   map[string][]step
	polls    map[string][]time.Time
	inFlight map[string]int
	maxInFl  map[string]int
	onGet    func(id string, n int)
	h        rpc.Handler
}

func newMemServer() *memServer {
	return &memServer{script: map[string][]step{}, polls: map[string][]time.Time{}, inFlight: map[string]int{}, maxInFl: map[string]int{}}
}

func (m *memServer) SetHandler(h rpc.Handler) { m.h = h }
func (m *memServer) Close() error             { return nil }
func (m *memServer) Send(context.Context, *rpc.Message, http.Header) error {
	return nil
}

func (m *memServer) RoundTrip(ctx context.Context, req *rpc.Message, _ http.Header) (*rpc.Message, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if req.Method != "tasks/get" {
		return &rpc.Message{JSONRPC: "2.0", ID: req.ID, Error: &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "not here"}}, nil
	}
	m.mu.Lock()
	m.polls[p.TaskID] = append(m.polls[p.TaskID], time.Now())
	n := len(m.polls[p.TaskID])
	m.inFlight[p.TaskID]++
	m.maxInFl[p.TaskID] = max(m.maxInFl[p.TaskID], m.inFlight[p.TaskID])
	hook := m.onGet
	list := m.script[p.TaskID]
	var s step
	if len(list) > 0 {
		s = list[0]
		if len(list) > 1 {
			m.script[p.TaskID] = list[1:]
		}
	}
	m.mu.Unlock()
	if hook != nil {
		hook(p.TaskID, n)
	}
	defer func() { m.mu.Lock(); m.inFlight[p.TaskID]--; m.mu.Unlock() }()
	switch {
	case s.fail != nil:
		return nil, s.fail
	case s.unknown:
		return &rpc.Message{JSONRPC: "2.0", ID: req.ID, Error: &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown task"}}, nil
	case s.status == "":
		return nil, errors.New("no script")
	}
	return &rpc.Message{JSONRPC: "2.0", ID: req.ID, Result: taskJSON(p.TaskID, s)}, nil
}

// taskJSON is a 2026-07-28 DetailedTask for a step.
func taskJSON(id string, s step) json.RawMessage {
	obj := map[string]any{"taskId": id, "status": s.status, "createdAt": "2000-01-01T00:00:00Z", "ttlMs": nil}
	if s.interval > 0 {
		obj["pollIntervalMs"] = s.interval.Milliseconds()
	}
	if s.message != "" {
		obj["statusMessage"] = s.message
	}
	switch s.status {
	case rpc.StatusCompleted:
		obj["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "done " + id}}}
	case rpc.StatusFailed:
		obj["error"] = map[string]any{"code": -32603, "message": "it broke"}
	}
	b, _ := json.Marshal(obj)
	return b
}

// pollTimes returns when task id was polled.
func (m *memServer) pollTimes(id string) []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.polls[id])
}

// memClient is a client on m, in 2026-07-28.
func memClient(m rpc.Transport) *rpc.Client {
	c := rpc.NewClient(m, rpc.ClientOptions{Protocol: rpc.VersionModern})
	c.Assume(rpc.EraModern, "")
	return c
}

// recorder is a sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
	on     func(Event)
}

func (r *recorder) Event(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	on := r.on
	r.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

// kinds lists the kinds of task id's events, in order, without repeats in a row.
func (r *recorder) kinds(id string) []Kind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Kind
	for _, ev := range r.events {
		if ev.TaskID == id && (len(out) == 0 || out[len(out)-1] != ev.Kind) {
			out = append(out, ev.Kind)
		}
	}
	return out
}

func (r *recorder) count(kind Kind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// demoServer starts the demo server on loopback behind a schema-validating recorder (every
// message the engine sends is checked against the spec when the test ends).
func demoServer(t *testing.T, opts demo.Options) (string, *spectest.Recorder) {
	t.Helper()
	return demotest.Start(t, opts, false)
}

// connect opens a client to url in era, with the hooks of s when given.
func connect(t *testing.T, url, era string, s *Server) *rpc.Client {
	t.Helper()
	tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := rpc.ClientOptions{Protocol: era, Info: rpc.Implementation{Name: "follow-test", Version: "1"}}
	if s != nil {
		opts = s.ClientOptions(opts)
	}
	c := rpc.NewClient(tr, opts)
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// create calls tool on c and returns its task, recorded in the ledger at path.
func create(t *testing.T, c *rpc.Client, url, tool string, args map[string]any, path string) *rpc.Task {
	t.Helper()
	res, err := c.CallTool(t.Context(), rpc.CallParams{Name: tool, Arguments: args})
	if err != nil || res.Task == nil {
		t.Fatalf("call %s: %v (%+v)", tool, err, res)
	}
	if path != "" {
		r := state.Record{TaskID: res.Task.TaskID, Server: state.Server{URL: url}, Era: string(c.Era()), SessionID: c.SessionID(), Tool: tool, CreatedAt: res.Task.CreatedAt}
		ledger.ApplyTask(&r, res.Task)
		if err := state.Open(path).Put(r); err != nil {
			t.Fatal(err)
		}
	}
	return res.Task
}

func ledgerPath(t *testing.T) string { return filepath.Join(t.TempDir(), "tasks.json") }

func records(t *testing.T, path string) []state.Record {
	t.Helper()
	f, err := state.Open(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	return f.Tasks
}

// text is the first text content of a result.
func text(o Outcome) string {
	if o.Result == nil {
		if o.RPCError != nil {
			return "error: " + o.RPCError.Message
		}
		return fmt.Sprintf("<no result: end %d, err %v>", o.End, o.Err)
	}
	var b strings.Builder
	for _, c := range o.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
