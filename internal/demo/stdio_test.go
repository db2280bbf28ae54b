package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
)

// stdioPeer drives ServeStdio over pipes, as a stdio client would.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	msgs chan *rpc.Message
	done chan error
	// statuses are the notifications/tasks/status lines next skipped, as sent.
	statuses [][]byte
	// sent maps the id of each request sent to its era and method, so that every line the
	// server writes is checked against the schema of what it answers.
	sent sync.Map
}

func startStdio(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, msgs: make(chan *rpc.Message, 16), done: make(chan error, 1)}
	v := loadSpec(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		p.done <- s.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			m, err := rpc.DecodeMessage(sc.Bytes())
			if err != nil {
				t.Errorf("server wrote a non-message line %q: %v", sc.Text(), err)
				continue
			}
			if err := v.ServerMessage(p.eraOf(m), p.methodOf(m), sc.Bytes()); err != nil {
				t.Errorf("the server's line does not match the spec schema: %v\n  line: %s", err, sc.Text())
			}
			p.msgs <- m
		}
		close(p.msgs)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeStdio did not return after stdin closed")
		}
		cancel()
	})
	return p
}

// eraOf is the era of a message the server wrote: that of the request it answers, else (a
// notification) modern when it carries a subscription id.
func (p *stdioPeer) eraOf(m *rpc.Message) string {
	if v, ok := p.sent.Load(m.IDKey()); ok && !m.IsRequest() && !m.IsNotification() {
		return v.([2]string)[0]
	}
	if strings.Contains(string(m.Params), rpc.MetaSubscriptionID) {
		return spectest.EraModern
	}
	return spectest.EraLegacy
}

func (p *stdioPeer) methodOf(m *rpc.Message) string {
	if v, ok := p.sent.Load(m.IDKey()); ok {
		return v.([2]string)[1]
	}
	return ""
}

func (p *stdioPeer) send(m map[string]any) {
	p.t.Helper()
	if id, ok := m["id"]; ok {
		if method, ok := m["method"].(string); ok {
			raw, _ := json.Marshal(id)
			era := spectest.EraLegacy
			if params, ok := m["params"].(map[string]any); ok {
				if meta, ok := params["_meta"].(map[string]any); ok && meta[rpc.MetaProtocolVersion] != nil {
					era = spectest.EraModern
				}
			}
			p.sent.Store((&rpc.Message{ID: raw}).IDKey(), [2]string{era, method})
		}
	}
	b, _ := json.Marshal(m)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next message on stdout other than a 2025-11-25 status notification, which
// the server sends on its own whenever a task changes (those are kept in p.statuses).
func (p *stdioPeer) next() *rpc.Message {
	p.t.Helper()
	for {
		select {
		case m := <-p.msgs:
			if m == nil {
				p.t.Fatal("stdout closed")
			}
			if m.Method == "notifications/tasks/status" {
				b, _ := m.Encode()
				p.statuses = append(p.statuses, b)
				continue
			}
			return m
		case <-time.After(10 * time.Second):
			p.t.Fatal("timed out waiting for a message on stdout")
		}
		return nil
	}
}

// call sends a request and returns its response.
func (p *stdioPeer) call(id int, method string, params map[string]any) *rpc.Message {
	p.t.Helper()
	p.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m := p.next()
	if string(m.ID) != jsonString(id) {
		p.t.Fatalf("response id %s, want %d (%+v)", m.ID, id, m)
	}
	return m
}

func jsonString(v any) string { return string(jsonOf(v)) }

func TestStdioModern(t *testing.T) {
	s, err := New(Options{StepDelay: testStep, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := startStdio(t, s)
	r := mustResult(t, p.call(1, "server/discover", modernParams(nil, capsNone)))
	if r["resultType"] != "complete" {
		t.Errorf("discover = %v", r)
	}
	// No initialize happened, so a request without _meta is refused.
	mustError(t, p.call(2, "tools/list", map[string]any{}), rpc.CodeInvalidParams)
	r = mustResult(t, p.call(3, "tools/call", modernParams(map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 1}}, capsTasks)))
	id := r["taskId"].(string)
	waitFor(t, s, "the stdio task to complete", func() bool {
		return mustResult(t, p.call(4, "tasks/get", modernParams(map[string]any{"taskId": id}, capsTasks)))["status"] == "completed"
	})
}

func TestStdioLegacyAsk(t *testing.T) {
	s, err := New(Options{StepDelay: testStep, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := startStdio(t, s)
	mustResult(t, p.call(1, "initialize", map[string]any{"protocolVersion": rpc.VersionLegacy,
		"capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "x", "version": "0"}}))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	r := mustResult(t, p.call(2, "tools/call", map[string]any{"name": "ask", "task": map[string]any{}}))
	id := r["task"].(map[string]any)["taskId"].(string)
	waitFor(t, s, "input_required", func() bool {
		return mustResult(t, p.call(3, "tasks/get", map[string]any{"taskId": id}))["status"] == "input_required"
	})
	p.send(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": map[string]any{"taskId": id}})
	req := p.next()
	if req.Method != "elicitation/create" || !req.IsRequest() || !strings.Contains(string(req.Params), id) {
		t.Fatalf("want an elicitation/create request with related-task, got %+v", req)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"action": "decline"}})
	final := p.next()
	if string(final.ID) != "4" {
		t.Fatalf("want the tasks/result response, got %+v", final)
	}
	if got := contentText(t, mustResult(t, final)); !strings.Contains(got, "declined") {
		t.Errorf("result after decline = %q", got)
	}
	// The changes came as notifications/tasks/status too (C25-TASKS §Task Status
	// Notification: a flat Task, no related-task meta).
	v := loadSpec(t)
	sawInput := false
	for _, b := range p.statuses {
		validate(t, v, schemaLegacy, "TaskStatusNotification", b)
		if strings.Contains(string(b), "related-task") {
			t.Errorf("a status notification carries related-task meta: %s", b)
		}
		sawInput = sawInput || strings.Contains(string(b), `"status":"input_required"`)
	}
	if !sawInput {
		t.Errorf("no notifications/tasks/status for input_required among %d: %s", len(p.statuses), p.statuses)
	}
}

func TestStorePersistsAcrossRestart(t *testing.T) {
	store := filepath.Join(t.TempDir(), "tasks.json")
	opts := Options{Store: store, StepDelay: 30 * time.Millisecond, PollInterval: 10 * time.Millisecond}
	e := newEnv(t, opts)
	l := e.initialize(map[string]any{})
	legacyID, _ := l.createTask("sleep", map[string]any{"seconds": 20}, map[string]any{})
	_, m := e.modern("tools/call", map[string]any{"name": "forever"}, capsTasks)
	modernID := mustResult(t, m)["taskId"].(string)
	before := 0
	waitFor(t, e.s, "a few sleep steps", func() bool {
		before = stepOf(l.get(legacyID))
		return before >= 3
	})
	e.ts.Close()
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}

	// A new server on the same store knows the session and both tasks, and the sleep goes on
	// from where it stopped rather than from step 0.
	e2 := newEnv(t, opts)
	l2 := &legacy{e: e2, sid: l.sid}
	got := l2.get(legacyID)
	if got["status"] != "working" || stepOf(got) < before {
		t.Errorf("after restart: %v; want working at step %d or later", got, before)
	}
	// Had the work restarted from scratch, the next message would be "step 1/20".
	resumed := stepOf(got)
	var next int
	waitFor(t, e2.s, "the next sleep step", func() bool {
		next = stepOf(l2.get(legacyID))
		return next != resumed
	})
	if next < resumed {
		t.Errorf("sleep went back from step %d to %d after restart", resumed, next)
	}
	if st := e2.modernGet(modernID)["status"]; st != "working" {
		t.Errorf("modern forever after restart: %v", st)
	}
	_, m = l2.call("tasks/result", map[string]any{"taskId": legacyID})
	if txt := contentText(t, mustResult(t, m)); txt != "slept 20 seconds" {
		t.Errorf("result = %q", txt)
	}
	e2.modern("tasks/cancel", map[string]any{"taskId": modernID}, capsTasks)
	e2.modernWait(modernID, "cancelled")
}

// stepOf reads i from a "step i/n" status message, -1 when there is none.
func stepOf(task map[string]any) int {
	msg, _ := task["statusMessage"].(string)
	var i, n int
	if _, err := fmt.Sscanf(msg, "step %d/%d", &i, &n); err != nil {
		return -1
	}
	return i
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	var clock = make(chan time.Time, 1)
	clock <- now
	e := newEnv(t, Options{TTL: time.Minute, Now: func() time.Time { c := <-clock; clock <- c; return c }})
	_, m := e.modern("tools/call", map[string]any{"name": "forever"}, capsTasks)
	r := mustResult(t, m)
	if r["ttlMs"] != float64(60000) || r["createdAt"] != "2026-08-01T12:00:00.000Z" {
		t.Errorf("CreateTaskResult = %s", m.Result)
	}
	id := r["taskId"].(string)
	e.modernGet(id)
	<-clock
	clock <- now.Add(time.Minute + time.Millisecond)
	_, m = e.modern("tasks/get", map[string]any{"taskId": id}, capsTasks)
	mustError(t, m, rpc.CodeInvalidParams)

	e2 := newEnv(t, Options{TTL: -1})
	_, m = e2.modern("tools/call", map[string]any{"name": "forever"}, capsTasks)
	if r := mustResult(t, m); r["ttlMs"] != nil {
		t.Errorf("unlimited ttl = %v, want null", r["ttlMs"])
	}
	if _, ok := mustResult(t, m)["ttlMs"]; !ok {
		t.Errorf("ttlMs missing; it is required (null for unlimited)")
	}
}
