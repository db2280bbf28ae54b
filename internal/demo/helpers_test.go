package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
)

// specDir is shared/spec seen from this package directory (tests run there).
const specDir = "../../../shared/spec"

const (
	schemaLegacy = "mcp-2025-11-25.schema.json"
	schemaExt    = "tasks-ext-2026-07-28.schema.json"
)

func loadSpec(t *testing.T) *spectest.Validator {
	t.Helper()
	if _, err := os.Stat(specDir); err != nil {
		t.Skipf("schemas not found at %s: %v", specDir, err)
	}
	v, err := spectest.New(specDir)
	if err != nil {
		t.Fatalf("load schemas: %v", err)
	}
	return v
}

func validate(t *testing.T, v *spectest.Validator, file, def string, instance []byte) {
	t.Helper()
	if err := v.Def(file, def, instance); err != nil {
		t.Errorf("%s does not match %s#/$defs/%s: %v", instance, file, def, err)
	}
}

// testStep is the step length used by the tests: short, but long enough that a test can act
// between steps.
const testStep = 20 * time.Millisecond

type env struct {
	t  *testing.T
	s  *Server
	ts *httptest.Server
	id int
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	if opts.StepDelay == 0 {
		opts.StepDelay = testStep
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	opts.Logf = t.Logf
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Every message the server sends is checked against the spec's schemas (the requests of
	// these tests are malformed on purpose at times, so only the server's side is checked).
	rec := &spectest.Recorder{V: loadSpec(t), Next: s.Handler(), ServerOnly: true}
	e := &env{t: t, s: s, ts: httptest.NewServer(rec)}
	t.Cleanup(func() {
		e.ts.Close()
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		rec.Check(t)
	})
	return e
}

// post sends one JSON-RPC message and decodes a JSON answer (nil for an empty body).
func (e *env) post(hdr http.Header, msg any) (*http.Response, *rpc.Message) {
	e.t.Helper()
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.ts.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(data)) == 0 {
		return resp, nil
	}
	m, err := rpc.DecodeMessage(data)
	if err != nil {
		e.t.Fatalf("decode %s: %v", data, err)
	}
	return resp, m
}

func (e *env) nextID() int { e.id++; return e.id }

var (
	capsFull  = map[string]any{"extensions": map[string]any{rpc.TasksExtension: map[string]any{}}, "elicitation": map[string]any{"form": map[string]any{}}}
	capsTasks = map[string]any{"extensions": map[string]any{rpc.TasksExtension: map[string]any{}}}
	capsNone  = map[string]any{}
)

// modernParams adds the per-request _meta to params.
func modernParams(params map[string]any, caps map[string]any) map[string]any {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	p["_meta"] = map[string]any{
		rpc.MetaProtocolVersion:    rpc.VersionModern,
		rpc.MetaClientCapabilities: caps,
		rpc.MetaClientInfo:         map[string]any{"name": "demo-test", "version": "0"},
	}
	return p
}

// modernHeaders returns correct 2026-07-28 routing headers for a request.
func modernHeaders(method string, params map[string]any) http.Header {
	h := http.Header{}
	h.Set("MCP-Protocol-Version", rpc.VersionModern)
	h.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok && method == "tools/call" {
		h.Set("Mcp-Name", n)
	}
	if id, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
		h.Set("Mcp-Name", id)
	}
	return h
}

// modern sends a well-formed modern request.
func (e *env) modern(method string, params map[string]any, caps map[string]any) (int, *rpc.Message) {
	e.t.Helper()
	resp, m := e.post(modernHeaders(method, params), map[string]any{"jsonrpc": "2.0", "id": e.nextID(), "method": method, "params": modernParams(params, caps)})
	if m == nil {
		e.t.Fatalf("%s: empty answer, HTTP %d", method, resp.StatusCode)
	}
	return resp.StatusCode, m
}

// mustResult returns the result of m as a map, failing on an error.
func mustResult(t *testing.T, m *rpc.Message) map[string]any {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("unexpected error %d: %s (data %s)", m.Error.Code, m.Error.Message, m.Error.Data)
	}
	var r map[string]any
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func mustError(t *testing.T, m *rpc.Message, code int64) *rpc.Error {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want error %d, got result %s", code, m.Result)
	}
	if m.Error.Code != code {
		t.Fatalf("want error %d, got %d: %s", code, m.Error.Code, m.Error.Message)
	}
	return m.Error
}

// waitFor re-evaluates cond at every task change until it holds, failing after a deadline.
func waitFor(t *testing.T, s *Server, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		ch := s.waitChange()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// modernGet is tasks/get with the full capabilities.
func (e *env) modernGet(id string) map[string]any {
	e.t.Helper()
	_, m := e.modern("tasks/get", map[string]any{"taskId": id}, capsFull)
	return mustResult(e.t, m)
}

// modernWait polls tasks/get until the status is want.
func (e *env) modernWait(id, want string) map[string]any {
	e.t.Helper()
	var last map[string]any
	waitFor(e.t, e.s, "task "+id+" to be "+want, func() bool {
		last = e.modernGet(id)
		return last["status"] == want
	})
	return last
}

// legacy is a 2025-11-25 session over HTTP.
type legacy struct {
	e   *env
	sid string
}

func (e *env) initialize(caps map[string]any) *legacy {
	e.t.Helper()
	resp, m := e.post(nil, map[string]any{"jsonrpc": "2.0", "id": e.nextID(), "method": "initialize", "params": map[string]any{
		"protocolVersion": rpc.VersionLegacy, "capabilities": caps, "clientInfo": map[string]any{"name": "demo-test", "version": "0"}}})
	mustResult(e.t, m)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		e.t.Fatal("initialize: no Mcp-Session-Id")
	}
	resp, _ = e.post(http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {rpc.VersionLegacy}},
		map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if resp.StatusCode != http.StatusAccepted {
		e.t.Fatalf("notifications/initialized: HTTP %d, want 202", resp.StatusCode)
	}
	return &legacy{e: e, sid: sid}
}

func (l *legacy) headers() http.Header {
	return http.Header{"Mcp-Session-Id": {l.sid}, "Mcp-Protocol-Version": {rpc.VersionLegacy}}
}

func (l *legacy) call(method string, params map[string]any) (int, *rpc.Message) {
	l.e.t.Helper()
	resp, m := l.e.post(l.headers(), map[string]any{"jsonrpc": "2.0", "id": l.e.nextID(), "method": method, "params": params})
	if m == nil {
		l.e.t.Fatalf("%s: empty answer, HTTP %d", method, resp.StatusCode)
	}
	return resp.StatusCode, m
}

func (l *legacy) get(id string) map[string]any {
	l.e.t.Helper()
	_, m := l.call("tasks/get", map[string]any{"taskId": id})
	return mustResult(l.e.t, m)
}

func (l *legacy) wait(id, want string) map[string]any {
	l.e.t.Helper()
	var last map[string]any
	waitFor(l.e.t, l.e.s, "task "+id+" to be "+want, func() bool {
		last = l.get(id)
		return last["status"] == want
	})
	return last
}

// createTask calls a tool as a legacy task and returns the task id and raw result.
func (l *legacy) createTask(tool string, args map[string]any, task map[string]any) (string, json.RawMessage) {
	l.e.t.Helper()
	_, m := l.call("tools/call", map[string]any{"name": tool, "arguments": args, "task": task})
	r := mustResult(l.e.t, m)
	tk, ok := r["task"].(map[string]any)
	if !ok {
		l.e.t.Fatalf("tools/call %s: no task in %s", tool, m.Result)
	}
	return tk["taskId"].(string), m.Result
}

func contentText(t *testing.T, r any) string {
	t.Helper()
	m, _ := r.(map[string]any)
	c, _ := m["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content in %v", r)
	}
	first, _ := c[0].(map[string]any)
	return fmt.Sprint(first["text"])
}

func jsonOf(v any) []byte { b, _ := json.Marshal(v); return b }
