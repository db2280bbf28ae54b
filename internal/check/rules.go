package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

const unknownID = "mcptask-check-no-such-task-7f3a9c1e"

func modernHeaders(method, name string) http.Header {
	h := http.Header{"Mcp-Protocol-Version": {rpc.VersionModern}, "Mcp-Method": {method}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// modern runs the 2026-07-28 + tasks extension rules.
func (r *runner) modern(ctx context.Context) {
	// B17, B31: discovery and capability declaration.
	d, err := r.raw(ctx, "server/discover", nil, modernHeaders("server/discover", ""), true)
	if err != nil || d.Error != nil {
		r.add("B17", "server/discover answers", "C26-DISC", Fail, "%v", errOr(err, d))
		return
	}
	res := obj(d.Result)
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
		Capabilities      struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
			Tasks      json.RawMessage            `json:"tasks"`
		} `json:"capabilities"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(d.Result, &disc)
	problem := ""
	switch {
	case str(res["resultType"]) != "complete":
		problem = fmt.Sprintf("resultType %s, want \"complete\"", res["resultType"])
	case !contains(disc.SupportedVersions, rpc.VersionModern):
		problem = fmt.Sprintf("supportedVersions %v lacks %s", disc.SupportedVersions, rpc.VersionModern)
	}
	r.verdict("B17", "server/discover returns resultType complete and supportedVersions", "C26-DISC", problem, false)
	ext, ok := disc.Capabilities.Extensions[rpc.TasksExtension]
	if !ok {
		r.add("B17b", "tasks extension declared in capabilities.extensions", "EXT §Capability Negotiation", Fail, "capabilities.extensions lacks %s; the task rules cannot run", rpc.TasksExtension)
		return
	}
	r.verdict("B17b", "tasks extension declared with an empty settings object", "EXT §Capability Negotiation", ifNot(string(compact(ext)) == "{}", "settings object is %s, want {}", ext), false)
	r.verdict("B17c", "discover carries _meta serverInfo", "C26-DISC", ifNot(disc.Meta[rpc.MetaServerInfo] != nil, "no _meta[%q]", rpc.MetaServerInfo), true)
	r.verdict("B31a", "no legacy tasks capability under 2026-07-28", "SEP-2663 §Backward Compatibility", ifNot(len(disc.Capabilities.Tasks) == 0, "capabilities.tasks = %s", disc.Capabilities.Tasks), false)

	tool, args, errTool, longTool, err := r.pickTool(ctx)
	if err != nil {
		r.add("tool", "a task tool to exercise", "-", Skip, "%v", err)
		return
	}

	// B22: without the extension declared, tools/call never yields a task.
	p := map[string]any{"name": tool, "arguments": argsOrEmpty(args), "_meta": map[string]any{
		rpc.MetaProtocolVersion: rpc.VersionModern, rpc.MetaClientCapabilities: map[string]any{},
	}}
	noExt, err := r.raw(ctx, "tools/call", p, modernHeaders("tools/call", tool), false)
	switch {
	case err != nil:
		r.add("B22", "no task without the extension declared", "EXT §Capability Negotiation", Fail, "%v", err)
	case noExt.Error != nil:
		r.verdict("B22", "no task without the extension declared", "EXT §Capability Negotiation",
			ifNot(noExt.Error.Code == rpc.CodeMissingCapability || noExt.Error.Code != 0, "error %d", noExt.Error.Code), false)
	default:
		r.verdict("B22", "no task without the extension declared", "EXT §Capability Negotiation",
			ifNot(str(obj(noExt.Result)["resultType"]) != "task", "resultType \"task\" although the client declared no extension"), false)
	}

	// B24, B25, B26, B33, B36: one task from creation to its end.
	cr, err := r.c.CallTool(ctx, rpc.CallParams{Name: tool, Arguments: args})
	if err != nil {
		r.add("B24", "CreateTaskResult shape", "EXT-SCHEMA CreateTaskResult", Fail, "tools/call %s: %v", tool, err)
		return
	}
	if cr.Kind != rpc.KindTask {
		r.add("B24", "CreateTaskResult shape", "EXT-SCHEMA CreateTaskResult", Skip, "tool %s answered without a task", tool)
		return
	}
	r.verdict("B24", "CreateTaskResult is flat, with ttlMs and without legacy keys", "EXT-SCHEMA CreateTaskResult", createShape(cr.Raw), false)
	r.verdict("B36", "task ids look unguessable", "EXT §Security Considerations", entropy(cr.Task.TaskID), false)
	if _, err := r.c.GetTask(ctx, cr.Task.TaskID); err != nil {
		r.add("B25", "tasks/get right after creation succeeds", "EXT §Task Creation", Fail, "%v", err)
	} else {
		r.add("B25", "tasks/get right after creation succeeds", "EXT §Task Creation", Pass, "")
	}
	seq, last, err := r.follow(ctx, cr.Task)
	if err != nil {
		r.add("B33", "status transitions follow the state machine", "EXT §Task Status", Fail, "%v", err)
	} else {
		r.verdict("B33", "status transitions follow the state machine; terminal never changes", "EXT §Task Status", transitions(seq), false)
		r.verdict("B26", "tasks/get is resultType complete with the variant's fields", "EXT §Task Polling", getVariant(last), false)
	}

	// B34: push updates on a listen stream, when the server offers them.
	r.listenRule(ctx, tool, args)

	// B29: unknown task id.
	_, err = r.c.GetTask(ctx, unknownID)
	code, _ := rpcCode(err)
	r.verdict("B29", "unknown taskId on tasks/get is -32602", "EXT §Protocol Errors", ifNot(code == rpc.CodeInvalidParams, "got %v", err), false)

	// B21: header validation (HTTP only).
	if r.o.HTTP {
		m, err := r.raw(ctx, "tasks/get", map[string]any{"taskId": cr.Task.TaskID}, modernHeaders("tasks/get", "wrong-"+cr.Task.TaskID), true)
		problem := ""
		switch {
		case err != nil:
			problem = err.Error()
		case m.Error == nil:
			problem = "a tasks/get with a mismatched Mcp-Name was answered normally"
		case m.Error.Code != rpc.CodeHeaderMismatch || m.Error.HTTPStatus != http.StatusBadRequest:
			problem = fmt.Sprintf("got %d with HTTP %d, want -32020 with HTTP 400", m.Error.Code, m.Error.HTTPStatus)
		}
		r.verdict("B21", "a mismatched Mcp-Name is refused with 400 and -32020", "C26-HTTP §Server Validation", problem, false)
	} else {
		r.add("B21", "a mismatched Mcp-Name is refused", "C26-HTTP §Server Validation", Skip, "stdio has no headers")
	}

	// B31: tasks/result does not exist in 2026-07-28.
	m, err := r.raw(ctx, "tasks/result", map[string]any{"taskId": cr.Task.TaskID}, modernHeaders("tasks/result", cr.Task.TaskID), true)
	r.verdict("B31", "tasks/result is -32601 under 2026-07-28", "SEP-2663 §Backward Compatibility",
		ifNot(err == nil && m.Error != nil && m.Error.Code == rpc.CodeMethodNotFound, "got %v", errOr(err, m)), false)

	// B28: cancel returns an empty ack; unknown id is an error.
	if longTool != "" {
		lt, err := r.c.CallTool(ctx, rpc.CallParams{Name: longTool})
		if err == nil && lt.Kind == rpc.KindTask {
			_, ack, err := r.c.CancelTask(ctx, lt.Task.TaskID)
			problem := ""
			if err != nil {
				problem = err.Error()
			} else {
				for k := range obj(ack) {
					if k != "resultType" && k != "_meta" {
						problem = fmt.Sprintf("the ack carries %q", k)
					}
				}
				if str(obj(ack)["resultType"]) != "complete" {
					problem = fmt.Sprintf("ack resultType %s", obj(ack)["resultType"])
				}
			}
			r.verdict("B28", "tasks/cancel returns an empty ack", "EXT §Task Cancellation", problem, false)
		} else {
			r.add("B28", "tasks/cancel returns an empty ack", "EXT §Task Cancellation", Skip, "%s gave no task", longTool)
		}
	} else {
		r.add("B28", "tasks/cancel returns an empty ack", "EXT §Task Cancellation", Skip, "no long-running tool to cancel")
	}
	_, _, err = r.c.CancelTask(ctx, unknownID)
	code, _ = rpcCode(err)
	r.verdict("B28b", "tasks/cancel of an unknown task is -32602", "EXT §Task Cancellation", ifNot(code == rpc.CodeInvalidParams, "got %v", err), true)

	// B27: isError ends completed with the CallToolResult.
	if errTool != "" {
		et, err := r.c.CallTool(ctx, rpc.CallParams{Name: errTool})
		if err == nil && et.Kind == rpc.KindTask {
			_, last, ferr := r.follow(ctx, et.Task)
			problem := ""
			switch {
			case ferr != nil:
				problem = ferr.Error()
			case last.Status != rpc.StatusCompleted:
				problem = fmt.Sprintf("a tool result with isError ended %s, want completed", last.Status)
			default:
				tr, err := rpc.DecodeToolResult(last.Result)
				if err != nil || !tr.IsError {
					problem = "the completed task's result lacks isError: true"
				}
			}
			r.verdict("B27", "isError ends completed, not failed", "EXT §Task Execution Errors", problem, false)
		} else {
			r.add("B27", "isError ends completed, not failed", "EXT §Task Execution Errors", Skip, "%s gave no task", errTool)
		}
	} else {
		r.add("B27", "isError ends completed, not failed", "EXT §Task Execution Errors", Skip, "no tool that returns isError")
	}
}

// createShape checks a 2026-07-28 CreateTaskResult.
func createShape(raw json.RawMessage) string {
	m := obj(raw)
	if str(m["resultType"]) != "task" {
		return fmt.Sprintf("resultType %s, want \"task\"", m["resultType"])
	}
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"} {
		if _, ok := m[k]; !ok {
			return "missing " + k
		}
	}
	for _, k := range []string{"ttl", "pollInterval", "task"} {
		if _, ok := m[k]; ok {
			return "carries the 2025-11-25 key " + k
		}
	}
	if v := string(compact(m["ttlMs"])); v != "null" && !isInt(m["ttlMs"]) {
		return "ttlMs is " + v + ", want an integer or null"
	}
	if v, ok := m["pollIntervalMs"]; ok && !isInt(v) {
		return "pollIntervalMs is " + string(v) + ", want an integer"
	}
	return ""
}

// getVariant checks the last tasks/get of a finished task.
func getVariant(t *rpc.Task) string {
	m := obj(t.Raw)
	if str(m["resultType"]) != "complete" {
		return fmt.Sprintf("resultType %s, want \"complete\"", m["resultType"])
	}
	switch t.Status {
	case rpc.StatusCompleted:
		if _, ok := m["result"]; !ok {
			return "completed without result"
		}
	case rpc.StatusFailed:
		if _, ok := m["error"]; !ok {
			return "failed without error"
		}
	}
	return ""
}

// legacy runs the 2025-11-25 rules.
func (r *runner) legacy(ctx context.Context) {
	var caps struct {
		Tasks map[string]json.RawMessage `json:"tasks"`
	}
	_ = json.Unmarshal(r.c.Capabilities(), &caps)
	if caps.Tasks == nil {
		r.add("A1", "tasks capability declared", "C25-TASKS §Server Capabilities", Fail, "initialize declares no tasks capability; the task rules cannot run")
		return
	}
	problem := ""
	for k := range caps.Tasks {
		if k != "list" && k != "cancel" && k != "requests" {
			problem = "unknown key tasks." + k
		}
	}
	var req struct {
		Tools struct {
			Call json.RawMessage `json:"call"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(caps.Tasks["requests"], &req)
	if req.Tools.Call == nil && problem == "" {
		problem = "tasks.requests.tools.call is not declared"
	}
	r.verdict("A1", "tasks capability uses list, cancel and requests.tools.call", "C25-TASKS §Server Capabilities", problem, false)

	tool, args, errTool, longTool, err := r.pickTool(ctx)
	if err != nil {
		r.add("tool", "a task tool to exercise", "-", Skip, "%v", err)
		return
	}
	cr, err := r.c.CallTool(ctx, rpc.CallParams{Name: tool, Arguments: args})
	if err != nil || cr.Kind != rpc.KindTask {
		r.add("A2", "a task-augmented call returns {task:{…}}", "C25-TASKS §Result Retrieval", Fail, "tools/call %s: %v", tool, errOrKind(err, cr))
		return
	}
	inner := obj(cr.Raw)["task"]
	r.verdict("A2", "a task-augmented call returns {task:{…}}", "C25-TASKS §Result Retrieval", ifNot(inner != nil, "the CreateTaskResult is not nested under task"), false)
	r.verdict("A4", "the first status is working", "C25-TASKS §Task Status Lifecycle", ifNot(cr.Task.Status == rpc.StatusWorking, "first status %s", cr.Task.Status), false)
	r.verdict("A5", "tasks carry taskId, status, createdAt, lastUpdatedAt and ttl", "C25-TASKS §TTL and Resource Management", legacyFields(inner), false)
	r.verdict("A36", "task ids look unguessable", "C25-TASKS §Security Considerations", entropy(cr.Task.TaskID), true)
	g, err := r.c.GetTask(ctx, cr.Task.TaskID)
	if err == nil {
		_, has := obj(obj(g.Raw)["_meta"])[rpc.MetaRelatedTask]
		r.verdict("A12", "tasks/get carries no related-task meta", "C25-TASKS §Associating Task-Related Messages", ifNot(!has, "tasks/get result carries related-task meta"), true)
	}
	seq, _, err := r.follow(ctx, cr.Task)
	if err != nil {
		r.add("A6", "status transitions follow the state machine", "C25-TASKS §Task Status Lifecycle", Fail, "%v", err)
	} else {
		r.verdict("A6", "status transitions follow the state machine; terminal never changes", "C25-TASKS §Task Status Lifecycle", transitions(seq), false)
	}
	tr, _, err := r.c.TaskResult(ctx, cr.Task.TaskID)
	problem = ""
	if err != nil {
		if _, ok := err.(*rpc.Error); !ok && !isRPC(err) {
			problem = err.Error()
		}
	} else {
		var rel struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(obj(obj(tr.Raw)["_meta"])[rpc.MetaRelatedTask], &rel)
		if rel.TaskID != cr.Task.TaskID {
			problem = "the result lacks _meta related-task with the task id"
		}
	}
	r.verdict("A9", "tasks/result returns the result with related-task meta", "C25-TASKS §Related Task Metadata", problem, false)

	for _, probe := range []struct {
		id, method string
		call       func() error
	}{
		{"A7", "tasks/get", func() error { _, err := r.c.GetTask(ctx, unknownID); return err }},
		{"A7b", "tasks/result", func() error { _, _, err := r.c.TaskResult(ctx, unknownID); return err }},
		{"A7c", "tasks/cancel", func() error { _, _, err := r.c.CancelTask(ctx, unknownID); return err }},
	} {
		err := probe.call()
		code, _ := rpcCode(err)
		r.verdict(probe.id, "unknown taskId on "+probe.method+" is -32602", "C25-TASKS §Protocol Errors", ifNot(code == rpc.CodeInvalidParams, "got %v", err), false)
	}

	// A8: cancel semantics.
	if longTool != "" && caps.Tasks["cancel"] != nil {
		lt, err := r.c.CallTool(ctx, rpc.CallParams{Name: longTool})
		if err == nil && lt.Kind == rpc.KindTask {
			t, _, err := r.c.CancelTask(ctx, lt.Task.TaskID)
			problem := ""
			switch {
			case err != nil:
				problem = err.Error()
			case t == nil || t.Status != rpc.StatusCancelled:
				problem = "tasks/cancel did not return the task as cancelled"
			default:
				if g, err := r.c.GetTask(ctx, lt.Task.TaskID); err != nil || g.Status != rpc.StatusCancelled {
					problem = "a later tasks/get does not show cancelled"
				} else if _, _, err := r.c.CancelTask(ctx, lt.Task.TaskID); func() bool { c, _ := rpcCode(err); return c != rpc.CodeInvalidParams }() {
					problem = fmt.Sprintf("cancelling a cancelled task: got %v, want -32602", err)
				}
			}
			r.verdict("A8", "tasks/cancel cancels, and refuses a terminal task with -32602", "C25-TASKS §Task Cancellation", problem, false)
		}
	} else {
		r.add("A8", "tasks/cancel cancels, and refuses a terminal task", "C25-TASKS §Task Cancellation", Skip, "no long-running tool, or tasks.cancel not declared")
	}

	// A10: isError makes the task failed.
	if errTool != "" {
		et, err := r.c.CallTool(ctx, rpc.CallParams{Name: errTool})
		if err == nil && et.Kind == rpc.KindTask {
			_, last, ferr := r.follow(ctx, et.Task)
			r.verdict("A10", "a tool result with isError makes the task failed", "C25-TASKS §Task Execution Errors",
				ifNot(ferr == nil && last.Status == rpc.StatusFailed, "ended %s (%v)", last.Status, ferr), false)
		}
	} else {
		r.add("A10", "a tool result with isError makes the task failed", "C25-TASKS §Task Execution Errors", Skip, "no tool that returns isError")
	}

	// A13: tasks/list shows the task.
	if caps.Tasks["list"] != nil {
		ts, _, err := r.c.ListTasks(ctx, "")
		found := false
		for _, t := range ts {
			found = found || t.TaskID == cr.Task.TaskID
		}
		r.verdict("A13", "tasks/list shows every retrievable task", "C25-TASKS §Task Listing", ifNot(err == nil && found, "task %s missing from tasks/list (%v)", cr.Task.TaskID, err), false)
	} else {
		r.add("A13", "tasks/list shows every retrievable task", "C25-TASKS §Task Listing", Skip, "tasks.list not declared")
	}

	// A16: an invalid MCP-Protocol-Version is refused with 400.
	if r.o.HTTP {
		m, err := r.raw(ctx, "tools/list", nil, http.Header{"Mcp-Protocol-Version": {"1999-01-01"}}, false)
		status := 0
		var he *rpc.HTTPError
		switch {
		case errors.As(err, &he):
			status = he.Status
		case err == nil && m.Error != nil:
			status = m.Error.HTTPStatus
		}
		r.verdict("A16", "an invalid MCP-Protocol-Version is refused with 400", "C25-TRANS §Protocol Version Header", ifNot(status == http.StatusBadRequest, "got HTTP %d", status), false)
	}
}

func legacyFields(inner json.RawMessage) string {
	m := obj(inner)
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} {
		if _, ok := m[k]; !ok {
			return "missing " + k
		}
	}
	if v := string(compact(m["ttl"])); v != "null" && !isInt(m["ttl"]) {
		return "ttl is " + v + ", want an integer or null"
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		if _, err := time.Parse(time.RFC3339Nano, str(m[k])); err != nil {
			return k + " is not ISO 8601: " + string(m[k])
		}
	}
	return ""
}

func isRPC(err error) bool { var e *rpc.Error; return errors.As(err, &e) }

func isInt(raw json.RawMessage) bool {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

func compact(raw json.RawMessage) []byte {
	var b []byte
	if v := json.Valid(raw); v {
		var x any
		_ = json.Unmarshal(raw, &x)
		b, _ = json.Marshal(x)
	}
	return b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ifNot(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func errOr(err error, m *rpc.Message) any {
	if err != nil {
		return err
	}
	if m != nil && m.Error != nil {
		return m.Error
	}
	return "an answer"
}

func errOrKind(err error, cr *rpc.CallResult) any {
	if err != nil {
		return err
	}
	return fmt.Sprintf("answered without a task (kind %d)", cr.Kind)
}

func argsOrEmpty(a map[string]any) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// listenRule opens subscriptions/listen for a new task and checks the stream: the
// acknowledgement comes first and lists the task, and notifications/tasks carry full
// DetailedTasks up to the terminal status (EXT §Task Status Notifications; C26-SUBS).
func (r *runner) listenRule(ctx context.Context, tool string, args map[string]any) {
	const id, title, section = "B34", "subscriptions/listen acknowledges first, then pushes full tasks to the end", "EXT §Task Status Notifications"
	cr, err := r.c.CallTool(ctx, rpc.CallParams{Name: tool, Arguments: args})
	if err != nil || cr.Kind != rpc.KindTask {
		r.add(id, title, section, Skip, "no task to subscribe to")
		return
	}
	lctx, cancel := context.WithTimeout(ctx, r.o.Wait)
	defer cancel()
	var mu sync.Mutex
	problem, acked, pushed := "", false, 0
	err = r.c.Listen(lctx, []string{cr.Task.TaskID}, &rpc.Subscription{
		OnAck: func(ids []string) {
			mu.Lock()
			defer mu.Unlock()
			if pushed > 0 && problem == "" {
				problem = "a notification came before the acknowledgement"
			}
			acked = true
			if !contains(ids, cr.Task.TaskID) && problem == "" {
				problem = "the acknowledgement does not list the task"
			}
		},
		OnTask: func(t *rpc.Task) {
			mu.Lock()
			defer mu.Unlock()
			pushed++
			if !acked && problem == "" {
				problem = "a notification came before the acknowledgement"
			}
			if t.Status == rpc.StatusCompleted && t.Result == nil && problem == "" {
				problem = "a completed task was pushed without its result (not a DetailedTask)"
			}
			if t.Status.Terminal() {
				cancel()
			}
		},
	})
	var rerr *rpc.Error
	if errors.As(err, &rerr) {
		r.add(id, title, section, Skip, "the server offers no subscriptions (%d)", rerr.Code)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case problem != "":
	case !acked:
		problem = fmt.Sprintf("no acknowledgement (%v)", err)
	case pushed == 0:
		problem = "no notifications/tasks for the task"
	}
	r.verdict(id, title, section, problem, false)
}
