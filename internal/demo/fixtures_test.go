package demo

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

// The cache hints are required on DiscoverResult and the list results (CacheableResult); the
// official TypeScript client refuses a result without them.
func TestCacheHints(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	for _, method := range []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		status, m := e.modern(method, map[string]any{}, capsNone)
		r := mustResult(t, m)
		if status != 200 || r["ttlMs"] != float64(cacheTTL.Milliseconds()) || r["cacheScope"] != "public" {
			t.Errorf("%s: HTTP %d, ttlMs %v, cacheScope %v", method, status, r["ttlMs"], r["cacheScope"])
		}
	}
	h := modernHeaders("resources/read", nil)
	h.Set("Mcp-Name", readmeURI)
	_, m := e.post(h, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": modernParams(map[string]any{"uri": readmeURI}, capsNone)})
	if r := mustResult(t, m); r["cacheScope"] != "public" || r["ttlMs"] == nil {
		t.Errorf("resources/read = %s", m.Result)
	}
	// Without --conformance there are no prompts or resources, and discovery says so.
	plain := newEnv(t, Options{})
	_, m = plain.modern("server/discover", map[string]any{}, capsNone)
	if caps := mustResult(t, m)["capabilities"].(map[string]any); caps["prompts"] != nil || caps["resources"] != nil {
		t.Errorf("plain demo advertises %v", caps)
	}
	if status, m := plain.modern("prompts/list", map[string]any{}, capsNone); status != 404 {
		t.Errorf("prompts/list on the plain demo: HTTP %d %s", status, m.Error)
	}
}

// 2026-07-28 removed ping (and the other session methods): a modern server answers them as
// unknown methods, 404 with -32601. 2025-11-25 still has ping.
func TestRemovedMethods(t *testing.T) {
	e := newEnv(t, Options{})
	for _, method := range []string{"ping", "initialize", "logging/setLevel", "resources/subscribe", "tasks/result"} {
		status, m := e.modern(method, map[string]any{}, capsTasks)
		if status != http.StatusNotFound {
			t.Errorf("%s: HTTP %d, want 404", method, status)
		}
		mustError(t, m, rpc.CodeMethodNotFound)
	}
	l := e.initialize(map[string]any{})
	if _, m := l.call("ping", map[string]any{}); m.Error != nil {
		t.Errorf("2025-11-25 ping: %v", m.Error)
	}
}

// A header that disagrees with the body is -32020 even when the body names a version the
// server does not speak: the mismatch is checked first (server-stateless,
// sep-2575-http-server-header-mismatch-400).
func TestVersionHeaderMismatchBeforeNegotiation(t *testing.T) {
	e := newEnv(t, Options{})
	params := modernParams(nil, capsNone)
	params["_meta"].(map[string]any)[rpc.MetaProtocolVersion] = "v999.0.0"
	resp, m := e.post(modernHeaders("server/discover", nil), map[string]any{"jsonrpc": "2.0", "id": 302, "method": "server/discover", "params": params})
	if resp.StatusCode != 400 {
		t.Errorf("HTTP %d, want 400", resp.StatusCode)
	}
	mustError(t, m, rpc.CodeHeaderMismatch)
	if string(m.ID) != "302" {
		t.Errorf("error id %s, want the request's", m.ID)
	}
}

// A tool that can only run as a task, called without the extension: -32021 naming it, HTTP
// 400 (EXT §Capability Negotiation).
func TestRequiredTaskWithoutExtension(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	for _, name := range []string{"forever", "ask", "failing_job", "test_tool_with_task"} {
		status, m := e.modern("tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, capsNone)
		er := mustError(t, m, rpc.CodeMissingCapability)
		if status != 400 || !strings.Contains(string(er.Data), rpc.TasksExtension) {
			t.Errorf("%s: HTTP %d, data %s", name, status, er.Data)
		}
	}
}

func TestFixtureMultiInputPartialAnswers(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	_, m := e.modern("tools/call", map[string]any{"name": "multi_input", "arguments": map[string]any{}}, capsFull)
	id := mustResult(t, m)["taskId"].(string)
	task := e.modernWait(id, "input_required")
	reqs := task["inputRequests"].(map[string]any)
	if len(reqs) != 2 || reqs["name"] == nil || reqs["confirm"] == nil {
		t.Fatalf("inputRequests = %v", reqs)
	}
	_, m = e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, capsFull)
	mustResult(t, m)
	// The answered key is gone at once; the task still waits for the other.
	task = e.modernGet(id)
	if reqs := task["inputRequests"].(map[string]any); task["status"] != "input_required" || len(reqs) != 1 || reqs["confirm"] == nil {
		t.Fatalf("after one answer: %v", task)
	}
	_, m = e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, capsFull)
	mustResult(t, m)
	done := e.modernWait(id, "completed")
	if got := contentText(t, done["result"]); got != "Hello, Ada! Go on: true." {
		t.Errorf("result %q", got)
	}
}

// tasks-mrtr-composition: input by MRTR first, then a task whose result uses the answer.
func TestFixtureMRTRThenTask(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	_, m := e.modern("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}, capsFull)
	r1 := mustResult(t, m)
	if r1["resultType"] != "input_required" || r1["taskId"] != nil || r1["requestState"] == nil {
		t.Fatalf("round 1 = %s", m.Result)
	}
	_, m = e.modern("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{},
		"inputResponses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}},
		"requestState":   r1["requestState"]}, capsFull)
	r2 := mustResult(t, m)
	if r2["resultType"] != "task" || r2["requestState"] != nil || r2["inputRequests"] != nil {
		t.Fatalf("round 2 = %s", m.Result)
	}
	done := e.modernWait(r2["taskId"].(string), "completed")
	if got := contentText(t, done["result"]); !strings.Contains(got, "Alice") {
		t.Errorf("result %q lacks the name asked before the task", got)
	}
}

func TestFixtureDiagnostics(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	t.Run("missing capability", func(t *testing.T) {
		status, m := e.modern("tools/call", map[string]any{"name": "test_missing_capability", "arguments": map[string]any{}}, capsNone)
		er := mustError(t, m, rpc.CodeMissingCapability)
		var data struct {
			RequiredCapabilities map[string]map[string]any `json:"requiredCapabilities"`
		}
		if status != 400 || json.Unmarshal(er.Data, &data) != nil || data.RequiredCapabilities["sampling"] == nil {
			t.Errorf("HTTP %d, data %s", status, er.Data)
		}
		_, m = e.modern("tools/call", map[string]any{"name": "test_missing_capability", "arguments": map[string]any{}}, map[string]any{"sampling": map[string]any{}})
		if r := mustResult(t, m); r["resultType"] != "input_required" {
			t.Errorf("with sampling: %s", m.Result)
		}
	})
	t.Run("streaming elicitation", func(t *testing.T) {
		resp, raw := e.raw("tools/call", map[string]any{"name": "test_streaming_elicitation", "arguments": map[string]any{}}, map[string]any{"elicitation": map[string]any{}}, nil)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || !bytes.Contains(raw, []byte(`"resultType":"input_required"`)) {
			t.Errorf("Content-Type %q body %s", ct, raw)
		}
		if bytes.Contains(raw, []byte(`"method":"elicitation/create","params"`)) && bytes.Contains(raw, []byte(`"id":"`)) {
			t.Errorf("a server-to-client request on a 2026-07-28 stream: %s", raw)
		}
	})
	t.Run("logging only with a log level", func(t *testing.T) {
		_, raw := e.raw("tools/call", map[string]any{"name": "test_logging_tool", "arguments": map[string]any{}}, capsNone, nil)
		if bytes.Contains(raw, []byte("notifications/message")) {
			t.Errorf("logged without a log level: %s", raw)
		}
		_, raw = e.raw("tools/call", map[string]any{"name": "test_logging_tool", "arguments": map[string]any{}}, capsNone, map[string]any{rpc.MetaLogLevel: "debug"})
		if !bytes.Contains(raw, []byte("notifications/message")) {
			t.Errorf("no log line with logLevel debug: %s", raw)
		}
	})
}

// Without the extension, confirm_delete asks by multi round-trip input and then runs inline.
func TestFixtureConfirmDeleteWithoutExtension(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	caps := map[string]any{"elicitation": map[string]any{}}
	args := map[string]any{"filename": "notes.txt"}
	_, m := e.modern("tools/call", map[string]any{"name": "confirm_delete", "arguments": args}, caps)
	r1 := mustResult(t, m)
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1 = %s", m.Result)
	}
	_, m = e.modern("tools/call", map[string]any{"name": "confirm_delete", "arguments": args, "requestState": r1["requestState"],
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, caps)
	if got := contentText(t, mustResult(t, m)); !strings.HasPrefix(got, "Deleted notes.txt") {
		t.Errorf("round 2 = %q", got)
	}
}

// In 2025-11-25 the same fixture asks through tasks/result, one question at a time.
func TestFixtureLegacyMultiInput(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	l := e.initialize(map[string]any{"elicitation": map[string]any{}})
	id, _ := l.createTask("multi_input", nil, map[string]any{})
	l.wait(id, "input_required")
	events := l.resultStream(id)
	answers := map[string]map[string]any{"What is your name?": {"name": "Lin"}, "Shall I go on?": {"confirm": false}}
	for range 2 {
		q := <-events
		if q == nil || q.Method != "elicitation/create" {
			t.Fatalf("event %+v, want an elicitation/create", q)
		}
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(q.Params, &p)
		e.post(l.headers(), map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{"action": "accept", "content": answers[p.Message]}})
	}
	final := <-events
	if final == nil || contentText(t, mustResult(t, final)) != "Hello, Lin! Go on: false." {
		t.Fatalf("tasks/result = %+v", final)
	}
}

// raw sends a modern request with an optional extra _meta and returns the response and its
// whole body (JSON or SSE).
func (e *env) raw(method string, params, caps, meta map[string]any) (*http.Response, []byte) {
	e.t.Helper()
	p := modernParams(params, caps)
	for k, v := range meta {
		p["_meta"].(map[string]any)[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.nextID(), "method": method, "params": p})
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.ts.URL+"/mcp", bytes.NewReader(body))
	req.Header = modernHeaders(method, params)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}
