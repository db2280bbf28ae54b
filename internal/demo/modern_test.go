package demo

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptask/mcptask/internal/rpc"
)

func TestDiscover(t *testing.T) {
	e := newEnv(t, Options{})
	resp, m := e.post(modernHeaders("server/discover", nil), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modernParams(nil, capsNone)})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("modern request got a session id %q; C26-HTTP says never mint one", sid)
	}
	r := mustResult(t, m)
	if r["resultType"] != "complete" {
		t.Errorf("resultType = %v", r["resultType"])
	}
	if diff := cmp.Diff([]any{"2026-07-28", "2025-11-25"}, r["supportedVersions"]); diff != "" {
		t.Errorf("supportedVersions (-want +got):\n%s", diff)
	}
	caps := r["capabilities"].(map[string]any)
	if _, ok := caps["extensions"].(map[string]any)[rpc.TasksExtension]; !ok {
		t.Errorf("tasks extension not advertised: %v", caps)
	}
	if _, ok := caps["tasks"]; ok {
		t.Errorf("legacy tasks capability advertised under 2026-07-28")
	}
	si := r["_meta"].(map[string]any)[rpc.MetaServerInfo].(map[string]any)
	if si["name"] != "mcptask-demo" {
		t.Errorf("serverInfo = %v", si)
	}
}

func TestModernRequestValidation(t *testing.T) {
	e := newEnv(t, Options{})
	body := func(method string, params map[string]any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
	}
	get := map[string]any{"taskId": "abc"}
	noCaps := modernParams(get, capsTasks)
	delete(noCaps["_meta"].(map[string]any), rpc.MetaClientCapabilities)
	oldVersion := modernParams(nil, capsNone)
	oldVersion["_meta"].(map[string]any)[rpc.MetaProtocolVersion] = "2099-01-01"
	hdrOld := modernHeaders("server/discover", nil)
	hdrOld.Set("MCP-Protocol-Version", "2099-01-01")
	wrongName := modernHeaders("tasks/get", get)
	wrongName.Set("Mcp-Name", "other")
	noMethod := modernHeaders("tasks/get", get)
	noMethod.Del("Mcp-Method")
	wrongVersion := modernHeaders("tasks/get", get)
	wrongVersion.Set("MCP-Protocol-Version", rpc.VersionLegacy)
	noName := modernHeaders("tools/call", map[string]any{"name": "echo"})
	noName.Del("Mcp-Name")

	tests := []struct {
		name   string
		hdr    http.Header
		body   map[string]any
		status int
		code   int64
	}{
		{"missing clientCapabilities", modernHeaders("tasks/get", get), body("tasks/get", noCaps), 400, rpc.CodeInvalidParams},
		{"no _meta and no session", nil, body("tools/list", map[string]any{}), 400, rpc.CodeInvalidParams},
		{"unsupported version", hdrOld, body("server/discover", oldVersion), 400, rpc.CodeUnsupportedVersion},
		{"wrong Mcp-Name on tasks/get", wrongName, body("tasks/get", modernParams(get, capsTasks)), 400, rpc.CodeHeaderMismatch},
		{"missing Mcp-Method", noMethod, body("tasks/get", modernParams(get, capsTasks)), 400, rpc.CodeHeaderMismatch},
		{"version header differs from _meta", wrongVersion, body("tasks/get", modernParams(get, capsTasks)), 400, rpc.CodeHeaderMismatch},
		{"missing Mcp-Name on tools/call", noName, body("tools/call", modernParams(map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, capsNone)), 400, rpc.CodeHeaderMismatch},
		{"tasks/result is gone", modernHeaders("tasks/result", get), body("tasks/result", modernParams(get, capsTasks)), 404, rpc.CodeMethodNotFound},
		{"tasks/list is gone", modernHeaders("tasks/list", nil), body("tasks/list", modernParams(nil, capsTasks)), 404, rpc.CodeMethodNotFound},
		{"unknown task", modernHeaders("tasks/get", get), body("tasks/get", modernParams(get, capsTasks)), 200, rpc.CodeInvalidParams},
		{"tasks/get without the extension", modernHeaders("tasks/get", get), body("tasks/get", modernParams(get, capsNone)), 400, rpc.CodeMissingCapability},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, m := e.post(tt.hdr, tt.body)
			if resp.StatusCode != tt.status {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tt.status)
			}
			if m == nil {
				t.Fatal("no JSON-RPC body")
			}
			mustError(t, m, tt.code)
		})
	}

	t.Run("unsupported version data", func(t *testing.T) {
		_, m := e.post(hdrOld, body("server/discover", oldVersion))
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(m.Error.Data, &data); err != nil || data.Requested != "2099-01-01" || len(data.Supported) == 0 {
			t.Errorf("data = %s", m.Error.Data)
		}
	})
	t.Run("base64 Mcp-Name", func(t *testing.T) {
		name := " spaced id "
		h := modernHeaders("tasks/get", nil)
		h.Set("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte(name))+"?=")
		_, m := e.post(h, body("tasks/get", modernParams(map[string]any{"taskId": name}, capsTasks)))
		// The headers match once decoded, so the request reaches the task lookup.
		mustError(t, m, rpc.CodeInvalidParams)
	})
	t.Run("GET and DELETE", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequestWithContext(t.Context(), method, e.ts.URL+"/mcp", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s: HTTP %d, want 405", method, resp.StatusCode)
			}
		}
	})
}

func TestModernSleepTask(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	// The legacy task param is ignored; the extension alone decides.
	_, m := e.modern("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 3}, "task": map[string]any{"ttl": 5}}, capsTasks)
	validate(t, v, schemaExt, "CreateTaskResult", m.Result)
	r := mustResult(t, m)
	for _, k := range []string{"task", "ttl", "pollInterval"} {
		if _, ok := r[k]; ok {
			t.Errorf("CreateTaskResult carries legacy key %q", k)
		}
	}
	if r["resultType"] != "task" || r["status"] != "working" || r["statusMessage"] != "step 0/3" || r["ttlMs"] != float64(3600000) || r["pollIntervalMs"] != float64(10) {
		t.Errorf("CreateTaskResult = %s", m.Result)
	}
	ts := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	if !ts.MatchString(r["createdAt"].(string)) {
		t.Errorf("createdAt %v is not RFC 3339 UTC with ms", r["createdAt"])
	}
	id := r["taskId"].(string)
	if len(id) < 32 {
		t.Errorf("task id %q looks low-entropy", id)
	}
	// Strong consistency: tasks/get right away succeeds.
	_, g := e.modern("tasks/get", map[string]any{"taskId": id}, capsTasks)
	validate(t, v, schemaExt, "GetTaskResult", g.Result)
	if mustResult(t, g)["resultType"] != "complete" {
		t.Errorf("tasks/get resultType = %s", g.Result)
	}
	seen := map[string]bool{}
	waitFor(t, e.s, "sleep to complete", func() bool {
		r := e.modernGet(id)
		seen[r["statusMessage"].(string)] = true
		return r["status"] == "completed"
	})
	_, g = e.modern("tasks/get", map[string]any{"taskId": id}, capsTasks)
	validate(t, v, schemaExt, "GetTaskResult", g.Result)
	done := mustResult(t, g)
	if got := contentText(t, done["result"]); got != "slept 3 seconds" {
		t.Errorf("result text %q", got)
	}
	for msg := range seen {
		if !regexp.MustCompile(`^step [0-2]/3$|^done$`).MatchString(msg) {
			t.Errorf("unexpected status message %q", msg)
		}
	}
}

func TestModernWithoutExtension(t *testing.T) {
	e := newEnv(t, Options{})
	code, m := e.modern("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 5}}, capsNone)
	if code != 400 {
		t.Errorf("HTTP %d, want 400", code)
	}
	er := mustError(t, m, rpc.CodeMissingCapability)
	if !strings.Contains(string(er.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("data = %s", er.Data)
	}
	_, m = e.modern("tools/call", map[string]any{"name": "forever"}, capsNone)
	mustError(t, m, rpc.CodeMissingCapability)

	// A quick tool runs inline and never becomes a task, even with a legacy task param.
	_, m = e.modern("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 1}, "task": map[string]any{}}, capsNone)
	r := mustResult(t, m)
	if r["resultType"] != "complete" || contentText(t, r) != "slept 1 second" {
		t.Errorf("inline sleep = %s", m.Result)
	}
	_, m = e.modern("tools/call", map[string]any{"name": "fail"}, capsNone)
	mustError(t, m, rpc.CodeInternalError)
	_, m = e.modern("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, capsTasks)
	if r := mustResult(t, m); r["resultType"] != "complete" || contentText(t, r) != "hi" {
		t.Errorf("echo = %s", m.Result)
	}
	_, m = e.modern("tools/list", nil, capsNone)
	if strings.Contains(string(m.Result), "taskSupport") {
		t.Errorf("modern tools/list carries execution.taskSupport: %s", m.Result)
	}
}

func TestModernErrorSemantics(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	_, m := e.modern("tools/call", map[string]any{"name": "tool_error", "arguments": map[string]any{"message": "bad input"}}, capsTasks)
	id := mustResult(t, m)["taskId"].(string)
	// EXT §Task Execution Errors: isError is a completed task, with the result inline.
	done := e.modernWait(id, "completed")
	validate(t, v, schemaExt, "GetTaskResult", jsonOf(done))
	if res := done["result"].(map[string]any); res["isError"] != true || contentText(t, res) != "bad input" {
		t.Errorf("result = %v", res)
	}

	_, m = e.modern("tools/call", map[string]any{"name": "fail", "arguments": map[string]any{"message": "boom"}}, capsTasks)
	id = mustResult(t, m)["taskId"].(string)
	failed := e.modernWait(id, "failed")
	validate(t, v, schemaExt, "GetTaskResult", jsonOf(failed))
	if er := failed["error"].(map[string]any); er["code"] != float64(rpc.CodeInternalError) || er["message"] != "boom" {
		t.Errorf("error = %v", er)
	}
	if _, ok := failed["result"]; ok {
		t.Errorf("failed task carries result")
	}
}

func TestModernCancel(t *testing.T) {
	e := newEnv(t, Options{})
	_, m := e.modern("tools/call", map[string]any{"name": "forever"}, capsTasks)
	id := mustResult(t, m)["taskId"].(string)
	_, c := e.modern("tasks/cancel", map[string]any{"taskId": id}, capsTasks)
	r := mustResult(t, c)
	if r["resultType"] != "complete" || r["status"] != nil {
		t.Errorf("cancel ack = %s; want an empty ack", c.Result)
	}
	e.modernWait(id, "cancelled")

	// Cancelling a finished task acknowledges and changes nothing.
	_, m = e.modern("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"seconds": 0}}, capsTasks)
	id = mustResult(t, m)["taskId"].(string)
	e.modernWait(id, "completed")
	_, c = e.modern("tasks/cancel", map[string]any{"taskId": id}, capsTasks)
	mustResult(t, c)
	if got := e.modernGet(id)["status"]; got != "completed" {
		t.Errorf("status after cancel of a completed task = %v", got)
	}
	_, c = e.modern("tasks/cancel", map[string]any{"taskId": "nope"}, capsTasks)
	mustError(t, c, rpc.CodeInvalidParams)
}

func TestModernAsk(t *testing.T) {
	v := loadSpec(t)
	e := newEnv(t, Options{})
	_, m := e.modern("tools/call", map[string]any{"name": "ask"}, capsTasks)
	er := mustError(t, m, rpc.CodeMissingCapability)
	if !strings.Contains(string(er.Data), "elicitation") {
		t.Errorf("ask without elicitation: data %s does not name elicitation", er.Data)
	}

	_, m = e.modern("tools/call", map[string]any{"name": "ask"}, capsFull)
	id := mustResult(t, m)["taskId"].(string)
	in := e.modernWait(id, "input_required")
	validate(t, v, schemaExt, "GetTaskResult", jsonOf(in))
	want := map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": "What is your name?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "required": []any{"name"}}}}}
	if diff := cmp.Diff(want, in["inputRequests"]); diff != "" {
		t.Errorf("inputRequests (-want +got):\n%s", diff)
	}
	// An unknown key is ignored and the task keeps waiting.
	_, u := e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"other": map[string]any{"action": "accept"}}}, capsFull)
	if mustResult(t, u)["resultType"] != "complete" {
		t.Errorf("update ack = %s", u.Result)
	}
	if got := e.modernGet(id)["status"]; got != "input_required" {
		t.Errorf("status after an unknown key = %v", got)
	}
	_, u = e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, capsFull)
	mustResult(t, u)
	done := e.modernWait(id, "completed")
	if got := contentText(t, done["result"]); got != "Hello, Ada!" {
		t.Errorf("greeting %q", got)
	}

	// "cancel" as the elicitation answer cancels the task.
	_, m = e.modern("tools/call", map[string]any{"name": "ask"}, capsFull)
	id = mustResult(t, m)["taskId"].(string)
	e.modernWait(id, "input_required")
	e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "cancel"}}}, capsFull)
	e.modernWait(id, "cancelled")
}

func TestModernConfirmMRTR(t *testing.T) {
	e := newEnv(t, Options{})
	_, m := e.modern("tools/call", map[string]any{"name": "confirm"}, capsNone)
	mustError(t, m, rpc.CodeMissingCapability)

	_, m = e.modern("tools/call", map[string]any{"name": "confirm"}, capsFull)
	r := mustResult(t, m)
	if r["resultType"] != "input_required" {
		t.Fatalf("first round = %s", m.Result)
	}
	req := r["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	if req["method"] != "elicitation/create" || req["params"].(map[string]any)["message"] != "Proceed?" {
		t.Errorf("input request = %v", req)
	}
	state := r["requestState"].(string)
	answer := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}

	_, m = e.modern("tools/call", map[string]any{"name": "confirm", "inputResponses": answer, "requestState": state + "x"}, capsFull)
	mustError(t, m, rpc.CodeInvalidParams)

	_, m = e.modern("tools/call", map[string]any{"name": "confirm", "inputResponses": answer, "requestState": state}, capsFull)
	r = mustResult(t, m)
	if r["resultType"] != "task" {
		t.Fatalf("retry = %s", m.Result)
	}
	done := e.modernWait(r["taskId"].(string), "completed")
	if got := contentText(t, done["result"]); got != "confirmed" {
		t.Errorf("result %q", got)
	}
}
