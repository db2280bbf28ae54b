package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

func TestLegacySession(t *testing.T) {
	e := newEnv(t, Options{})
	// An unknown requested version is answered with the one the demo speaks.
	resp, m := e.post(nil, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2099-01-01", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}}})
	r := mustResult(t, m)
	if r["protocolVersion"] != rpc.VersionLegacy {
		t.Errorf("protocolVersion = %v", r["protocolVersion"])
	}
	tasks := r["capabilities"].(map[string]any)["tasks"].(map[string]any)
	if _, ok := tasks["requests"].(map[string]any)["tools"].(map[string]any)["call"]; !ok {
		t.Errorf("tasks.requests.tools.call not advertised: %v", tasks)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q has a non-visible character", sid)
		}
	}
	if len(sid) < 16 {
		t.Errorf("session id %q is short", sid)
	}

	l := &legacy{e: e, sid: sid}
	code, m := l.call("tools/list", nil)
	if code != 200 {
		t.Fatalf("tools/list: HTTP %d", code)
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(m.Result, &list)
	got := map[string]string{}
	for _, tl := range list.Tools {
		if tl.Execution != nil {
			got[tl.Name] = tl.Execution.TaskSupport
		} else {
			got[tl.Name] = ""
		}
	}
	want := map[string]string{"echo": "", "sleep": "optional", "fail": "optional", "tool_error": "optional", "ask": "required", "forever": "required", "confirm": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tool %s taskSupport = %q, want %q", k, got[k], v)
		}
	}

	hdr := l.headers()
	hdr.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, _ = e.post(hdr, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if resp.StatusCode != 400 {
		t.Errorf("wrong MCP-Protocol-Version: HTTP %d, want 400", resp.StatusCode)
	}
	hdr.Del("Mcp-Protocol-Version")
	resp, _ = e.post(hdr, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if resp.StatusCode != 400 {
		t.Errorf("missing MCP-Protocol-Version: HTTP %d, want 400", resp.StatusCode)
	}
	resp, _ = e.post(http.Header{"Mcp-Session-Id": {"nope"}, "Mcp-Protocol-Version": {rpc.VersionLegacy}}, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if resp.StatusCode != 404 {
		t.Errorf("unknown session: HTTP %d, want 404", resp.StatusCode)
	}
	resp, _ = e.post(http.Header{"Mcp-Protocol-Version": {rpc.VersionLegacy}}, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if resp.StatusCode != 400 {
		t.Errorf("no session: HTTP %d, want 400", resp.StatusCode)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, e.ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sid)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode != 200 {
		t.Errorf("DELETE: HTTP %d", dresp.StatusCode)
	}
	resp, _ = e.post(l.headers(), map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if resp.StatusCode != 404 {
		t.Errorf("deleted session: HTTP %d, want 404", resp.StatusCode)
	}
}

func TestLegacyTasks(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	l := e.initialize(map[string]any{})

	id, raw := l.createTask("sleep", map[string]any{"seconds": 2}, map[string]any{"ttl": 60000})
	validate(t, v, schemaLegacy, "CreateTaskResult", raw)
	if strings.Contains(string(raw), "resultType") || strings.Contains(string(raw), "ttlMs") {
		t.Errorf("legacy CreateTaskResult carries modern keys: %s", raw)
	}
	got := l.get(id)
	validate(t, v, schemaLegacy, "GetTaskResult", jsonOf(got))
	if got["ttl"] != float64(60000) || got["pollInterval"] != float64(10) {
		t.Errorf("tasks/get = %v", got)
	}
	// tasks/result blocks until the end and returns the CallToolResult with related-task.
	_, m := l.call("tasks/result", map[string]any{"taskId": id})
	r := mustResult(t, m)
	if contentText(t, r) != "slept 2 seconds" {
		t.Errorf("result = %s", m.Result)
	}
	if rt := r["_meta"].(map[string]any)[rpc.MetaRelatedTask].(map[string]any); rt["taskId"] != id {
		t.Errorf("related-task = %v", rt)
	}
	if st := l.get(id)["status"]; st != "completed" {
		t.Errorf("status = %v", st)
	}

	// C25-TASKS §Task Execution Errors: isError makes the task failed, and tasks/result
	// still returns the CallToolResult.
	id, _ = l.createTask("tool_error", nil, map[string]any{})
	_, m = l.call("tasks/result", map[string]any{"taskId": id})
	if r := mustResult(t, m); r["isError"] != true {
		t.Errorf("tool_error result = %s", m.Result)
	}
	if st := l.get(id)["status"]; st != "failed" {
		t.Errorf("tool_error status = %v, want failed", st)
	}
	id, _ = l.createTask("fail", map[string]any{"message": "boom"}, map[string]any{})
	_, m = l.call("tasks/result", map[string]any{"taskId": id})
	if er := mustError(t, m, rpc.CodeInternalError); er.Message != "boom" {
		t.Errorf("fail error = %v", er)
	}

	_, m = l.call("tools/call", map[string]any{"name": "forever"})
	mustError(t, m, rpc.CodeMethodNotFound)
	_, m = l.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}})
	mustError(t, m, rpc.CodeMethodNotFound)
	_, m = l.call("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 1}})
	if r := mustResult(t, m); contentText(t, r) != "slept 1 second" {
		t.Errorf("inline sleep = %s", m.Result)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_, m = l.call(method, map[string]any{"taskId": "nope"})
		mustError(t, m, rpc.CodeInvalidParams)
	}
}

func TestLegacyCancel(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	l := e.initialize(map[string]any{})
	id, _ := l.createTask("forever", nil, map[string]any{})
	_, m := l.call("tasks/cancel", map[string]any{"taskId": id})
	validate(t, v, schemaLegacy, "CancelTaskResult", m.Result)
	// C25-TASKS §Task Cancellation: cancelled before the response.
	if st := mustResult(t, m)["status"]; st != "cancelled" {
		t.Errorf("cancel result status = %v", st)
	}
	if st := l.get(id)["status"]; st != "cancelled" {
		t.Errorf("status after cancel = %v", st)
	}
	_, m = l.call("tasks/cancel", map[string]any{"taskId": id})
	mustError(t, m, rpc.CodeInvalidParams)
}

func TestLegacyListAndBinding(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	a := e.initialize(map[string]any{})
	b := e.initialize(map[string]any{})
	var ids []string
	for range listPageSize + 2 {
		id, _ := a.createTask("tool_error", nil, map[string]any{})
		ids = append(ids, id)
	}
	bid, _ := b.createTask("tool_error", nil, map[string]any{})

	_, m := a.call("tasks/list", nil)
	validate(t, v, schemaLegacy, "ListTasksResult", m.Result)
	var page struct {
		Tasks      []map[string]any `json:"tasks"`
		NextCursor string           `json:"nextCursor"`
	}
	_ = json.Unmarshal(m.Result, &page)
	if len(page.Tasks) != listPageSize || page.NextCursor == "" {
		t.Fatalf("first page: %d tasks, cursor %q", len(page.Tasks), page.NextCursor)
	}
	seen := map[string]bool{}
	for _, tk := range page.Tasks {
		seen[tk["taskId"].(string)] = true
	}
	_, m = a.call("tasks/list", map[string]any{"cursor": page.NextCursor})
	page.NextCursor = ""
	page.Tasks = nil
	_ = json.Unmarshal(m.Result, &page)
	if len(page.Tasks) != 2 || page.NextCursor != "" {
		t.Errorf("second page: %d tasks, cursor %q", len(page.Tasks), page.NextCursor)
	}
	for _, tk := range page.Tasks {
		seen[tk["taskId"].(string)] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("task %s missing from tasks/list", id)
		}
	}
	if seen[bid] {
		t.Errorf("session a lists session b's task")
	}
	_, m = a.call("tasks/list", map[string]any{"cursor": "garbage"})
	mustError(t, m, rpc.CodeInvalidParams)

	// Tasks are bound to the session that created them.
	_, m = b.call("tasks/get", map[string]any{"taskId": ids[0]})
	mustError(t, m, rpc.CodeInvalidParams)
	// And a modern client cannot see legacy tasks either.
	_, m = e.modern("tasks/get", map[string]any{"taskId": bid}, capsTasks)
	mustError(t, m, rpc.CodeInvalidParams)
}

// sseEvents reads the data of SSE events from an HTTP response body.
func sseEvents(t *testing.T, resp *http.Response) <-chan *rpc.Message {
	ch := make(chan *rpc.Message)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var data bytes.Buffer
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data:"):
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case line == "" && data.Len() > 0:
				m, err := rpc.DecodeMessage(data.Bytes())
				data.Reset()
				if err != nil {
					t.Errorf("bad SSE event: %v", err)
					return
				}
				ch <- m
			}
		}
	}()
	return ch
}

// resultStream opens tasks/result for task id and returns the messages of its SSE stream.
func (l *legacy) resultStream(id string) <-chan *rpc.Message {
	t := l.e.t
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "r1", "method": "tasks/result", "params": map[string]any{"taskId": id}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, l.e.ts.URL+"/mcp", bytes.NewReader(body))
	req.Header = l.headers()
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("tasks/result Content-Type %q, want text/event-stream", ct)
	}
	return sseEvents(t, resp)
}

func TestLegacyAskOverSSE(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	l := e.initialize(map[string]any{"elicitation": map[string]any{}})
	id, _ := l.createTask("ask", nil, map[string]any{})
	l.wait(id, "input_required")

	events := l.resultStream(id)
	elicit := <-events
	if elicit == nil || elicit.Method != "elicitation/create" || !elicit.IsRequest() {
		t.Fatalf("first event = %+v, want an elicitation/create request", elicit)
	}
	validate(t, v, schemaLegacy, "ElicitRequest", jsonOf(elicit))
	var p struct {
		Message string                     `json:"message"`
		Meta    map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(elicit.Params, &p)
	if p.Message != "What is your name?" || !strings.Contains(string(p.Meta[rpc.MetaRelatedTask]), id) {
		t.Errorf("elicitation params = %s", elicit.Params)
	}
	answer := map[string]any{"jsonrpc": "2.0", "id": elicit.ID, "result": map[string]any{
		"action": "accept", "content": map[string]any{"name": "Grace"},
		"_meta": map[string]any{rpc.MetaRelatedTask: map[string]any{"taskId": id}}}}
	aresp, _ := e.post(l.headers(), answer)
	if aresp.StatusCode != http.StatusAccepted {
		t.Errorf("response POST: HTTP %d, want 202", aresp.StatusCode)
	}
	final := <-events
	if final == nil {
		t.Fatal("stream ended without the tasks/result response")
	}
	r := mustResult(t, final)
	if contentText(t, r) != "Hello, Grace!" || !strings.Contains(string(final.Result), rpc.MetaRelatedTask) {
		t.Errorf("tasks/result = %s", final.Result)
	}
	if st := l.get(id)["status"]; st != "completed" {
		t.Errorf("status = %v", st)
	}
}

func TestLegacyAskWithoutElicitation(t *testing.T) {
	e := newEnv(t, Options{})
	l := e.initialize(map[string]any{})
	id, _ := l.createTask("ask", nil, map[string]any{})
	_, m := l.call("tasks/result", map[string]any{"taskId": id})
	if er := mustError(t, m, rpc.CodeInternalError); !strings.Contains(er.Message, "elicitation") {
		t.Errorf("error = %v", er)
	}
	if st := l.get(id)["status"]; st != "failed" {
		t.Errorf("status = %v", st)
	}
}
