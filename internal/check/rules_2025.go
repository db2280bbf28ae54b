package check

// This file holds the 2025-11-25 rules (rules2025) and the flow of the era (rules.go holds
// what both eras share): the probes and the judgement of the tasks; among them, those that
// judge more than one answer at a time: the shape of the tasks capability and what a server
// that does not declare it does with a task (A1, A1b), the status notifications wherever they
// arrive (A6b), what tasks/result returns and when (A9b, A9c), and the tasks/list cursor
// (A13b). docs/check-2025-11-25.md maps every MUST of C25-TASKS to the rule that judges it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// rules2025 are the 2025-11-25 rules, in report order. Each is one value: what the catalogue says
// of it (docs/guide/check.md lists it), and how it is judged: in which phase of the era's
// run, on what evidence, and how (judge.go).
var rules2025 = []Rule{
	{ID: "A0", Era: "2025-11-25", Title: "every answer matches the official schema", Doc: "every answer matches the official schema (one result per kind: A0:initialize, A0:tasks/get, A0:errors, …)",
		Section: "C25-SCHEMA", Needs: "nothing; each tool call adds answers to validate"},
	{ID: "A1", Era: "2025-11-25", Title: "tasks capability uses list, cancel and requests.tools.call", Doc: "the tasks capability uses list, cancel and requests.tools.call",
		Section: "C25-TASKS §Server Capabilities", Needs: needsNothing,
		phase: onDeclared, whole: capsShape},
	{ID: "A1b", Era: "2025-11-25", Title: "a server that declares no tasks.requests.tools.call answers a task-augmented call normally, never with a task",
		Section: "C25-TASKS §Capabilities; §Task Support and Handling", Needs: "a tool the checker may call (only when tasks.requests.tools.call is not declared; else it passes)",
		phase: afterTools, whole: undeclaredProbe},
	// A2: C25-TASKS §Result Retrieval: a receiver that accepts a task-augmented request MUST
	// answer with a CreateTaskResult.
	{ID: "A2", Era: "2025-11-25", Title: "a task-augmented call returns a CreateTaskResult {task:{…}}",
		Section: "C25-TASKS §Result Retrieval, §Creating Tasks", Needs: "a tool with taskSupport optional or required",
		phase: onTasks, evidence: augmented, judge: nested},
	{ID: "A3", Era: "2025-11-25", Title: "a tool with taskSupport required, called without task, is refused with -32601", Doc: "a tool with taskSupport required, called without task, is refused with -32601 (-32600 accepted)",
		Section: "C25-TASKS §Tool-Level Negotiation", Needs: "a tool with taskSupport required",
		phase: afterTools, whole: requiredWithoutTask},
	{ID: "A3b", Era: "2025-11-25", Title: "a tool without task support, called with task, is refused with -32601 (SHOULD)", Doc: "a tool without task support, called with task, is refused with -32601 (SHOULD: a warning)",
		Section: "C25-TASKS §Tool-Level Negotiation", Needs: "a tool without task support that answers quickly", Level: Should,
		phase: afterTools, whole: forbiddenWithTask},
	{ID: "A4", Era: "2025-11-25", Title: "the first status of a task is working",
		Section: "C25-TASKS §Task Status Lifecycle", Needs: needsTask,
		phase: onTasks, judge: firstWorking},
	{ID: "A5", Era: "2025-11-25", Title: "tasks carry taskId, status, createdAt, lastUpdatedAt (ISO 8601) and ttl",
		Section: "C25-TASKS §TTL and Resource Management; C25-SCHEMA Task", Needs: needsTask,
		phase: onTasks, judge: taskFields},
	{ID: "A6", Era: "2025-11-25", Title: "status transitions follow the graph; a terminal status never changes", Doc: "status transitions follow the graph; a terminal status never changes (watched for four more polls after the end, and after a cancel)",
		Section: "C25-TASKS §Task Status Lifecycle", Needs: needsTask,
		phase: onTasks, judge: seenStatuses},
	{ID: "A6b", Era: "2025-11-25", Title: "every notifications/tasks/status (on any stream, the GET stream included) is a full Task of this session, and never changes a terminal status",
		Section: "C25-TASKS §Task Status Notification, §Task Status Lifecycle; C25-SCHEMA TaskStatusNotification", Needs: needsTask + "; a server that sends the notifications (they are optional: skipped with the reason when none came)",
		phase: onTasks, whole: judgeNotes},
	{ID: "A7", Era: "2025-11-25", Title: "an unknown taskId on tasks/get is -32602",
		Section: "C25-TASKS §Error Handling", Needs: "the tasks capability",
		phase: beforeTools, probe: &probe{skip: needsTasks, method: "tasks/get", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeInvalidParams}},
	{ID: "A7b", Era: "2025-11-25", Title: "an unknown taskId on tasks/result is -32602",
		Section: "C25-TASKS §Error Handling", Needs: "the tasks capability",
		phase: beforeTools, probe: &probe{skip: needsTasks, method: "tasks/result", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeInvalidParams}},
	{ID: "A7c", Era: "2025-11-25", Title: "an unknown taskId on tasks/cancel is -32602",
		Section: "C25-TASKS §Error Handling", Needs: "the tasks capability",
		phase: beforeTools, probe: &probe{skip: needsCancel, method: "tasks/cancel", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeInvalidParams}},
	{ID: "A7d", Era: "2025-11-25", Title: "tasks/get names its task by taskId, whatever related-task metadata the request carries",
		Section: "C25-TASKS §Associating Task-Related Messages", Needs: needsTask,
		phase: onTasks, whole: metaProbe},
	// A8: C25-TASKS §Task Cancellation.
	{ID: "A8", Era: "2025-11-25", Title: "tasks/cancel answers the task as cancelled, and it stays cancelled",
		Section: "C25-TASKS §Task Cancellation", Needs: needsLong + "; tasks.cancel",
		phase: onTasks, evidence: cancelledLegacy, judge: staysCancelled, exchange: cancelErr},
	{ID: "A8b", Era: "2025-11-25", Title: "tasks/cancel of a finished task is refused with -32602",
		Section: "C25-TASKS §Task Cancellation", Needs: needsFinished + "; tasks.cancel",
		phase: onTasks, whole: cancelFinishedLegacy},
	// A9: C25-TASKS §Related Task Metadata: the tasks/result response carries related-task.
	{ID: "A9", Era: "2025-11-25", Title: "tasks/result returns the result with related-task meta",
		Section: "C25-TASKS §Related Task Metadata", Needs: needsFinished + " with a result",
		phase: onTasks, evidence: paid, judge: relatedPayload},
	{ID: "A9b", Era: "2025-11-25", Title: "tasks/result sent while a task is working or input_required answers only once the task is terminal",
		Section: "C25-TASKS §Result Retrieval", Needs: "a tool whose task is still working (or asks for input) when the checker sends tasks/result",
		phase: onTasks, evidence: earlyPayloads, judge: blocked},
	{ID: "A9c", Era: "2025-11-25", Title: "tasks/result returns what the request would have: for a failed task its error (or the tool result with isError), for a completed one its result",
		Section: "C25-TASKS §Result Retrieval", Needs: needsFinished + " with completed or failed",
		phase: onTasks, evidence: endedPayloads, judge: sameAsRequest},
	// A10: C25-TASKS §Task Execution Errors: isError makes the task failed.
	{ID: "A10", Era: "2025-11-25", Title: "a tool result with isError makes the task failed",
		Section: "C25-TASKS §Task Execution Errors", Needs: needsToolErr + ", as a task",
		phase: onTasks, evidence: paidToolErrors, judge: failedOnToolError},
	// A11: C25-TASKS §Input Required Status: requests for a task carry related-task.
	{ID: "A11", Era: "2025-11-25", Title: "requests sent for a task in input_required carry related-task meta",
		Section: "C25-TASKS §Input Required Status, §Associating Task-Related Messages", Needs: needsInput,
		phase: onTasks, whole: judgeRequests},
	{ID: "A12", Era: "2025-11-25", Title: "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT)", Doc: "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT: a warning)",
		Section: "C25-TASKS §Associating Task-Related Messages; §Task Notifications", Needs: needsTask, Level: Should,
		phase: onTasks, judge: unrelated},
	{ID: "A13", Era: "2025-11-25", Title: "tasks/list shows every task tasks/get can retrieve",
		Section: "C25-TASKS §Task Listing", Needs: needsTask + "; tasks.list",
		phase: onTasks, whole: judgeList},
	{ID: "A13b", Era: "2025-11-25", Title: "tasks/list with a cursor the server never gave is -32602",
		Section: "C25-TASKS §Error Handling; §Task Listing", Needs: "tasks.list",
		phase: beforeTools, whole: cursorProbe},
	{ID: "A16", Era: "2025-11-25", Title: "an invalid MCP-Protocol-Version is refused with 400",
		Section: "C25-TRANS §Protocol Version Header", Needs: needsHTTP,
		phase: beforeTools, whole: versionHeader},
	{ID: "A36", Era: "2025-11-25", Title: "task ids are unique and look unguessable (a warning only when the requests carry an authorization context)",
		Section: "C25-TASKS §Task ID Requirements; §Security Considerations", Needs: needsTask,
		phase: onTasks, whole: judgeIDs},
	{ID: "A38", Era: "2025-11-25", Title: "a task stays retrievable until its ttl has passed (may delete after)", Doc: "a task stays retrievable until its ttl has passed (a warning: the spec says \"MAY delete\" after)",
		Section: "C25-TASKS §TTL and Resource Management", Needs: needsFinished, Level: Should,
		phase: onTasks, evidence: polledTwice, judge: kept},
}

// statusNote is one notifications/tasks/status the server sent, on any stream.
type statusNote struct {
	at      time.Time
	params  json.RawMessage
	problem string // what the official schema says is wrong with it
}

// onNotify records 2025-11-25 status notifications for A6b and A12, validated at once
// against the schema's TaskStatusNotification.
func (r *runner) onNotify(method string, params json.RawMessage) {
	if r.modern {
		r.onModernNotify(method, params)
		return
	}
	if method != "notifications/tasks/status" {
		return
	}
	r.mu.Lock()
	if len(r.notes) >= maxNotes {
		// A server that floods the stream gets the first maxNotes judged, not the memory
		// and the time of the run.
		r.notesDropped++
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	doc, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	problem := official.validate(schemaLegacy, "TaskStatusNotification", doc)
	r.mu.Lock()
	r.notes = append(r.notes, statusNote{at: time.Now(), params: params, problem: problem})
	r.mu.Unlock()
}

// maxNotes bounds the status notifications kept and validated in one run: a few tasks that
// change status a few times send tens.
const maxNotes = 2000

// openStandalone opens the 2025-11-25 standalone GET stream for the rest of the era, where
// servers on the official TypeScript SDK send notifications/tasks/status and the requests of
// a task (C25-TASKS §Input Required Status: "clients SHOULD expect messages to be delivered
// on any SSE stream, including the HTTP GET stream").
func (r *runner) openStandalone(ctx context.Context) {
	if !r.o.HTTP {
		r.standalone = "stdio: notifications come on the one stream"
		return
	}
	s, ok := r.c.Transport().(rpc.StandaloneStreamer)
	if !ok {
		r.standalone = "the transport has no GET stream"
		return
	}
	if err := s.OpenStandaloneStream(ctx); err != nil {
		r.standalone = "the GET stream could not be opened: " + err.Error()
		return
	}
	r.standalone = "open"
}

// tasksCaps is what initialize declares of the tasks capability.
type tasksCaps struct {
	tasks, list, cancel, call bool
}

// readCaps reads the tasks capability from the raw capabilities object, and says what is
// wrong with its shape (A1): wrong JSON types are a finding with what was seen, and a key
// that is present counts as declared, whatever its type, so that the other rules still run.
func readCaps(rawCaps json.RawMessage) (tasksCaps, []string) {
	var caps tasksCaps
	raw, ok := obj(rawCaps)["tasks"]
	if !ok || string(raw) == "null" {
		return caps, nil
	}
	var problems []string
	object := func(path string, v json.RawMessage) map[string]json.RawMessage {
		m := obj(v)
		if m == nil {
			problems = append(problems, fmt.Sprintf("capabilities.%s is %s, want an object", path, quote(v)))
		}
		return m
	}
	tasks := object("tasks", raw)
	for k := range tasks {
		if k != "list" && k != "cancel" && k != "requests" {
			problems = append(problems, "unknown key tasks."+k)
		}
	}
	caps.tasks = true
	if v, ok := tasks["list"]; ok {
		caps.list = true
		object("tasks.list", v)
	}
	if v, ok := tasks["cancel"]; ok {
		caps.cancel = true
		object("tasks.cancel", v)
	}
	if v, ok := tasks["requests"]; ok {
		if tools, ok := object("tasks.requests", v)["tools"]; ok {
			if call, ok := object("tasks.requests.tools", tools)["call"]; ok {
				caps.call = true
				object("tasks.requests.tools.call", call)
			}
		}
	}
	if !caps.call {
		problems = append(problems, "tasks.requests.tools.call is not declared, so no tool can run as a task")
	}
	sort.Strings(problems)
	return caps, problems
}

// capsShape judges A1: the tasks capability uses list, cancel and requests.tools.call.
func capsShape(_ context.Context, r *runner, _ evidence) finding {
	caps, problems := readCaps(r.caps)
	if !caps.tasks {
		return skipped("initialize declares no tasks capability: the server offers no tasks in 2025-11-25")
	}
	return found(strings.Join(problems, "; "))
}

// undeclaredProbe (A1b): C25-TASKS §Capabilities: "Servers and clients that support
// task-augmented requests MUST declare a tasks capability during initialization", and
// §Task Support and Handling: "Receivers that do not declare the task capability for a
// request type MUST process requests of that type normally, ignoring any task-augmentation
// metadata if present." So a server without tasks.requests.tools.call is sent one
// task-augmented call anyway, and must not answer it with a task.
func undeclaredProbe(ctx context.Context, r *runner, _ evidence) finding {
	if r.legacyCaps.call {
		return found("")
	}
	var pick *toolInfo
	for _, t := range r.tools {
		if t.reason == NotCalledNone && (t.support == "optional" || t.support == "required") {
			pick = t
			break
		}
	}
	if pick == nil {
		var fastest time.Duration
		for _, c := range r.calls {
			if c.tool.reason == NotCalledNone && c.plain != nil && (pick == nil || c.dur < fastest) {
				pick, fastest = c.tool, c.dur
			}
		}
	}
	switch {
	case r.o.NoCall:
		return skipped("--no-call: no tool was called")
	case pick == nil:
		return skipped("no tool the checker may call answered")
	}
	pctx, cancel := context.WithTimeout(ctx, r.longAfter(0))
	m, err := r.send(pctx, "tools/call", map[string]any{"name": pick.name, "arguments": pick.args, "task": map[string]any{}}, req{})
	cancel()
	if err == nil && m.Result != nil && obj(m.Result)["task"] != nil {
		if tid := str(obj(obj(m.Result)["task"])["taskId"]); tid != "" {
			r.hand(tid)
			// Leave no work running: the server may serve tasks/cancel even undeclared.
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = r.send(cctx, "tasks/cancel", map[string]any{"taskId": tid}, req{})
			cancel()
		}
		return found(fmt.Sprintf("%s: initialize declares %s, yet a task-augmented call was answered with a task: %s",
			pick.name, declared(r.c.Capabilities()), quote(m.Result)), pick.name)
	}
	if errors.Is(err, errBudget) {
		return failed(err, pick.name)
	}
	return found("", pick.name)
}

// declared says in words what capabilities.tasks is.
func declared(caps json.RawMessage) string {
	if raw, ok := obj(caps)["tasks"]; ok {
		return "capabilities.tasks " + quote(raw)
	}
	return "no tasks capability"
}

// cursorProbe (A13b): C25-TASKS §Error Handling: "Invalid or nonexistent cursor in
// tasks/list: -32602 (Invalid params)". A client cannot make a cursor go stale on purpose, so
// the probe sends one the server never gave.
func cursorProbe(ctx context.Context, r *runner, _ evidence) finding {
	if !r.legacyCaps.list {
		return skipped(firstNonEmpty(ifNot(!r.legacyCaps.tasks, "tasks.list is not declared"), r.noTasks()))
	}
	m, err := r.send(ctx, "tasks/list", map[string]any{"cursor": "mcptask-check-invalid-cursor-5b2e"}, req{})
	return found(ifNot(r.wantError(m, err, rpc.CodeInvalidParams, 0) == "", "tasks/list with cursor \"mcptask-check-invalid-cursor-5b2e\" got %s, want error -32602", describe(m, err))).from(err)
}

// payloads selects the tasks whose tasks/result was answered and for which keep says yes
// (with t.mu held).
func payloads(ev evidence, keep func(t *taskObs) bool) []*call {
	var cs []*call
	for _, c := range ev.tasks {
		t := c.task
		t.mu.Lock()
		if t.payload != nil && t.payloadErr == nil && keep(t) {
			cs = append(cs, c)
		}
		t.mu.Unlock()
	}
	return cs
}

// earlyPayloads selects the tasks whose tasks/result was sent while they were working or
// input_required, and answered (A9b).
func earlyPayloads(_ *runner, ev evidence) ([]*call, string) {
	cs := payloads(ev, func(t *taskObs) bool { return t.payloadSent == "working" || t.payloadSent == "input_required" })
	return ev.or(cs, "no task's tasks/result, sent while it was still working, was answered")
}

// blocked checks that an early tasks/result answered only once the task was terminal (A9b):
// C25-TASKS §Result Retrieval: "When a receiver receives a tasks/result request for a task
// in any other non-terminal status (working or input_required), it MUST block the response
// until the task reaches a terminal status."
func blocked(_ *runner, c *call) string {
	t := c.task
	ended := false
	for _, st := range t.statuses[:t.payloadIdx] {
		ended = ended || rpc.TaskStatus(st).Terminal()
	}
	if t.payloadAfter != "" && !rpc.TaskStatus(t.payloadAfter).Terminal() && !ended {
		return fmt.Sprintf("tasks/result sent while the task was %s answered at once (%s), and tasks/get right after still said %s", t.payloadSent, describe(t.payload, nil), t.payloadAfter)
	}
	return ""
}

// endedPayloads selects the tasks that ended completed or failed and whose tasks/result was
// answered (A9c).
func endedPayloads(_ *runner, ev evidence) ([]*call, string) {
	cs := payloads(ev, func(t *taskObs) bool { st := finalStatus(t); return st == "completed" || st == "failed" })
	return ev.or(cs, "no task that ended completed or failed had its tasks/result answered")
}

// sameAsRequest checks that tasks/result returned what the request would have (A9c):
// §Result Retrieval: "receivers MUST return from tasks/result exactly what the underlying
// request would have returned, whether that is a successful result or a JSON-RPC error";
// §Task Execution Errors: a failed task is a JSON-RPC error or a tool result with isError.
func sameAsRequest(r *runner, c *call) string {
	t := c.task
	st := finalStatus(t)
	if (t.payloadSent == "working" || t.payloadSent == "input_required") && blocked(r, c) != "" {
		return "" // it answered before the end: A9b's failure, not a wrong final result
	}
	switch {
	case st == "failed" && t.payload.Result != nil && !isErrorResult(t.payload.Result):
		return "the task ended failed, yet tasks/result returned a success-shaped result (no JSON-RPC error, no isError): " + quote(t.payload.Result)
	case st == "completed" && t.payload.Error != nil:
		return "the task ended completed, yet tasks/result returned " + describe(t.payload, nil)
	}
	return ""
}

// judgeNotes (A6b): every notifications/tasks/status matches the schema (C25-TASKS §Task
// Status Notification: "The notification includes the full Task object"), names a task of
// this session, follows the state machine in the order it arrived, and agrees with the
// terminal status tasks/get gave (§Task Status Lifecycle: terminal statuses "MUST NOT
// transition to any other status").
func judgeNotes(_ context.Context, r *runner, ev evidence) finding {
	tasks, none := ev.tasks, ev.none
	r.mu.Lock()
	notes := append([]statusNote(nil), r.notes...)
	dropped := r.notesDropped
	r.mu.Unlock()
	if len(notes) == 0 {
		if len(tasks) > 0 {
			none = "the server sent no notifications/tasks/status (they are optional)"
			if r.o.HTTP {
				none += "; the GET stream: " + r.standalone
			}
		}
		return skipped(none)
	}
	byID := map[string]*call{}
	for _, c := range tasks {
		byID[c.task.id] = c
	}
	var bad, tools []string
	seq := map[string][]string{}
	var order []string
	for _, n := range notes {
		if n.problem != "" {
			bad = append(bad, "a notification does not match the schema: "+n.problem)
			continue
		}
		var tk struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(n.params, &tk)
		c := byID[tk.TaskID]
		if c == nil {
			if !r.handedTask(tk.TaskID) {
				bad = append(bad, fmt.Sprintf("a notification names task %q, which this session never created", tk.TaskID))
			}
			continue
		}
		tools = append(tools, c.tool.name)
		if _, ok := seq[tk.TaskID]; !ok {
			order = append(order, tk.TaskID)
		}
		seq[tk.TaskID] = append(seq[tk.TaskID], tk.Status)
		c.task.mu.Lock()
		final := finalStatus(c.task)
		c.task.mu.Unlock()
		if rpc.TaskStatus(tk.Status).Terminal() && final != "" && tk.Status != final {
			bad = append(bad, fmt.Sprintf("%s: a notification says task %s is %s, tasks/get said %s", c.tool.name, tk.TaskID, tk.Status, final))
		}
	}
	for _, tid := range order {
		if p := transitions(seq[tid]); p != "" {
			bad = append(bad, fmt.Sprintf("%s: notifications for task %s: %s", byID[tid].tool.name, tid, p))
		}
	}
	sort.Strings(tools)
	problem := joinMax(dedupeSorted(bad), 2)
	if problem != "" && dropped > 0 {
		problem += fmt.Sprintf(" (the first %d notifications judged, %d more ignored)", maxNotes, dropped)
	}
	return found(problem, tools...)
}

// relatedNote says whether a status notification for task id carries related-task meta
// (C25-TASKS §Task Notifications: it "SHOULD NOT").
func (r *runner) relatedNote(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes {
		p := obj(n.params)
		if str(p["taskId"]) != id {
			continue
		}
		if _, has := obj(p["_meta"])[rpc.MetaRelatedTask]; has {
			return "notifications/tasks/status carries _meta related-task: " + quote(n.params)
		}
	}
	return ""
}

// judgeIDs (A36): C25-TASKS §Task ID Requirements: task ids "MUST be unique among all tasks
// controlled by the receiver"; §Security Considerations: "If context-binding is unavailable,
// receivers MUST generate cryptographically secure task IDs with enough entropy to prevent
// guessing". Without an authorization context there is nothing to bind to, so a guessable id
// fails; with one, the server may bind its tasks to it, and it is a warning.
func judgeIDs(_ context.Context, r *runner, ev evidence) finding {
	seen := map[string]string{}
	for _, c := range ev.tasks {
		if other, dup := seen[c.task.id]; dup {
			return found(fmt.Sprintf("%s and %s were given the same task id %q", other, c.tool.name, c.task.id), other, c.tool.name)
		}
		seen[c.task.id] = c.tool.name
	}
	f := each(ev.tasks, ev.none, func(c *call) (string, error) {
		p := entropy(c.task.id)
		if p != "" && !r.o.Authorized {
			p += " (no authorization context was sent, so the id is all that protects the task)"
		}
		return p, nil
	})
	if r.o.Authorized {
		f.level, f.override = Should, true
	}
	return f
}

// metaProbe (A7d): C25-TASKS §Associating Task-Related Messages: "For the tasks/get,
// tasks/result, and tasks/cancel operations, the taskId parameter in the request MUST be used
// as the source of truth for identifying the target task. … receivers MUST ignore such
// metadata if present in favor of the RPC method parameter." One tasks/get names a real task
// in taskId and an unknown one in related-task metadata.
func metaProbe(ctx context.Context, r *runner, ev evidence) finding {
	tasks := ev.tasks
	if len(tasks) == 0 {
		return skipped(ev.none)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// A task tasks/get retrieves right now, without metadata: the control.
	var c *call
	for _, x := range tasks {
		if x.task.vanished != nil {
			continue
		}
		if g, err := r.send(pctx, "tasks/get", map[string]any{"taskId": x.task.id}, req{}); err == nil && g.Error == nil {
			c = x
			break
		}
	}
	if c == nil {
		return skipped("no task was still retrievable with tasks/get")
	}
	m, err := r.send(pctx, "tasks/get", map[string]any{"taskId": c.task.id,
		"_meta": map[string]any{rpc.MetaRelatedTask: map[string]any{"taskId": unknownID}}}, req{})
	problem := ""
	switch {
	case err != nil:
		return failed(err, c.tool.name)
	case m.Error != nil:
		problem = fmt.Sprintf("a tasks/get of a retrievable task, with an unknown task in _meta related-task, got %s", describe(m, nil))
	case str(obj(m.Result)["taskId"]) != c.task.id:
		problem = fmt.Sprintf("a tasks/get of task %s, with an unknown task in _meta related-task, answered %s", c.task.id, quote(m.Result))
	}
	return found(problem, c.tool.name)
}

// finalStatus is the first terminal status the server gave for t (with t.mu held): for a task
// the checker cancelled while it was still working, the status the cancel answered, since
// every later tasks/get comes after it.
func finalStatus(t *taskObs) string {
	if t.long && t.cancelMsg != nil && t.cancelMsg.Result != nil {
		if st := str(obj(t.cancelMsg.Result)["status"]); rpc.TaskStatus(st).Terminal() {
			return st
		}
	}
	return t.terminal()
}

func (r *runner) runLegacy(ctx context.Context) {
	r.caps = r.c.Capabilities()
	r.legacyCaps, _ = readCaps(r.caps)
	r.judgeAll(ctx, onDeclared)
	r.openStandalone(ctx)
	r.judgeAll(ctx, beforeTools)
	r.toolsPhase(ctx)
	r.judgeAll(ctx, afterTools)
	if r.legacyCaps.call && r.legacyCaps.cancel {
		r.cancelPhase(ctx)
	}
	r.judgeAll(ctx, onTasks)
}

// needsTasks skips a probe when initialize declares no tasks capability.
func needsTasks(r *runner) string { return ifNot(r.legacyCaps.tasks, "%s", r.noTasks()) }

// needsCancel skips a probe of tasks/cancel when it is not declared: undeclared, tasks/cancel
// may rightly be -32601, so there is nothing to judge.
func needsCancel(r *runner) string {
	return firstNonEmpty(needsTasks(r), ifNot(r.legacyCaps.cancel, "tasks.cancel is not declared"))
}

// versionHeader judges A16: C25-TRANS §Protocol Version Header: an invalid
// MCP-Protocol-Version is refused with 400.
func versionHeader(ctx context.Context, r *runner, _ evidence) finding {
	if !r.o.HTTP {
		return skipped("stdio has no headers")
	}
	m, err := r.send(ctx, "tools/list", nil, req{hdrVersion: "1999-01-01"})
	status := 0
	var he *rpc.HTTPError
	switch {
	case errors.As(err, &he):
		status = he.Status
	case err == nil && m.Error != nil:
		status = m.Error.HTTPStatus
	case err == nil:
		status = 200
	}
	return found(ifNot(status == http.StatusBadRequest, "a tools/list with MCP-Protocol-Version: 1999-01-01 got HTTP %d (%s)", status, describe(m, err))).from(err)
}

// negotiationTools picks the tools A3 and A3b call: the first the checker may call with
// taskSupport required, and the fastest that answered without task support.
func (r *runner) negotiationTools() (required, forbidden *toolInfo) {
	var fastest time.Duration
	for _, t := range r.tools {
		if t.reason != NotCalledNone {
			continue
		}
		if t.support == "required" && required == nil {
			required = t
		}
		if t.support == "" || t.support == "forbidden" {
			for _, c := range r.calls {
				if c.tool == t && c.plain != nil && (forbidden == nil || c.dur < fastest) {
					forbidden, fastest = t, c.dur
				}
			}
		}
	}
	return required, forbidden
}

// requiredWithoutTask judges A3: a tool with taskSupport required, called without task, is
// refused with -32601.
func requiredWithoutTask(ctx context.Context, r *runner, _ evidence) finding {
	if !r.legacyCaps.call {
		return skipped(r.noTasks())
	}
	required, _ := r.negotiationTools()
	if required == nil {
		return skipped("no tool the checker may call has taskSupport required")
	}
	m, err := r.send(ctx, "tools/call", map[string]any{"name": required.name, "arguments": required.args}, req{})
	if err != nil {
		return failed(err, required.name)
	}
	p := r.wantError(m, nil, rpc.CodeMethodNotFound, 0)
	if m != nil && m.Error != nil && m.Error.Code == rpc.CodeInvalidRequest {
		p = "" // §Error Handling allows -32600 too (PROTOCOL.md §7 item 14)
	}
	return found(p, required.name)
}

// forbiddenWithTask judges A3b: a tool without task support, called with task, is refused
// with -32601 (SHOULD).
func forbiddenWithTask(ctx context.Context, r *runner, _ evidence) finding {
	if !r.legacyCaps.call {
		return skipped(r.noTasks())
	}
	_, forbidden := r.negotiationTools()
	if forbidden == nil {
		return skipped("no tool the checker may call lacks task support and answers quickly")
	}
	pctx, cancel := context.WithTimeout(ctx, r.longAfter(0))
	m, err := r.send(pctx, "tools/call", map[string]any{"name": forbidden.name, "arguments": forbidden.args, "task": map[string]any{}}, req{})
	cancel()
	if m != nil && m.Result != nil && obj(m.Result)["task"] != nil {
		// Making a task breaks the client-side MUST NOT the server should have refused.
		f := found(forbidden.name+": a task-augmented call to a tool without task support made a task", forbidden.name)
		f.level, f.override = Must, true
		return f
	}
	return found(ifNot(err == nil && m.Error != nil && m.Error.Code == rpc.CodeMethodNotFound, "%s: got %s", forbidden.name, describe(m, err)), forbidden.name).from(err)
}

// augmented selects the calls the checker augmented with task, when the server declares it
// takes them (A2).
func augmented(r *runner, ev evidence) ([]*call, string) {
	var cs []*call
	for _, c := range r.calls {
		if r.legacyCaps.call && (c.tool.support == "optional" || c.tool.support == "required") && !errors.Is(c.err, errBudget) {
			cs = append(cs, c)
		}
	}
	return cs, ev.none
}

// nested checks that a task-augmented call was answered with a task nested under "task" (A2).
func nested(_ *runner, c *call) string {
	switch {
	case c.task != nil:
		return ""
	case c.plain != nil && obj(c.plain)["taskId"] != nil:
		return "the task is not nested under task: " + quote(c.plain)
	case c.plain != nil:
		return "a task-augmented call was answered with a plain result: " + quote(c.plain)
	}
	return ""
}

// firstWorking checks the status a task starts in (A4).
func firstWorking(_ *runner, c *call) string {
	if len(c.task.statuses) > 0 && c.task.statuses[0] != "working" {
		return "the CreateTaskResult says " + c.task.statuses[0]
	}
	return ""
}

// taskFields checks the fields of a task in its CreateTaskResult and every tasks/get (A5).
func taskFields(_ *runner, c *call) string {
	if p := legacyFields(c.task.inner); p != "" {
		return "CreateTaskResult: " + p
	}
	for _, p := range c.task.polls {
		if p.msg != nil && p.msg.Result != nil {
			if pb := legacyFields(p.msg.Result); pb != "" {
				return "tasks/get: " + pb
			}
		}
	}
	return ""
}

// unrelated checks that tasks/get results and status notifications carry no related-task
// meta (A12).
func unrelated(r *runner, c *call) string {
	for _, p := range c.task.polls {
		if p.msg != nil && p.msg.Result != nil {
			if _, has := obj(obj(p.msg.Result)["_meta"])[rpc.MetaRelatedTask]; has {
				return "tasks/get carries _meta related-task: " + quote(p.msg.Result)
			}
		}
	}
	return r.relatedNote(c.task.id)
}

// paid selects the tasks whose tasks/result returned a result (A9).
func paid(_ *runner, ev evidence) ([]*call, string) {
	var cs []*call
	for _, c := range ev.tasks {
		if c.task.payload != nil && c.task.payload.Result != nil {
			cs = append(cs, c)
		}
	}
	return ev.or(cs, "no task's tasks/result returned a result")
}

// relatedPayload checks that a tasks/result result names its task in related-task meta (A9).
func relatedPayload(_ *runner, c *call) string {
	var rel struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(obj(obj(c.task.payload.Result)["_meta"])[rpc.MetaRelatedTask], &rel)
	if rel.TaskID != c.task.id {
		return "the tasks/result result lacks _meta related-task {taskId: " + c.task.id + "}: " + quote(c.task.payload.Result)
	}
	return ""
}

// paidToolErrors selects the tasks whose tasks/result returned a tool error (A10).
func paidToolErrors(r *runner, ev evidence) ([]*call, string) {
	withResult, _ := paid(r, ev)
	var cs []*call
	for _, c := range withResult {
		if isErrorResult(c.task.payload.Result) {
			cs = append(cs, c)
		}
	}
	return ev.or(cs, "no tool produced a tool error (a result with isError)")
}

// failedOnToolError checks that a task whose result is a tool error ended failed (A10).
func failedOnToolError(_ *runner, c *call) string {
	if st := c.task.terminal(); st != "failed" {
		return "tasks/result returned isError: true, but the task ended " + st
	}
	return ""
}

// judgeRequests judges A11: the requests the server sent for a task in input_required carry
// related-task meta.
func judgeRequests(_ context.Context, r *runner, ev evidence) finding {
	asked, _ := askedTasks(r, ev)
	var forTask []serverRequest
	for _, sr := range r.requests {
		if sr.forTask {
			forTask = append(forTask, sr)
		}
	}
	switch {
	case len(forTask) > 0:
		var bad []string
		for _, sr := range forTask {
			if !sr.related {
				bad = append(bad, sr.method+" for task "+sr.taskID+" carried no _meta related-task")
			}
		}
		return found(joinMax(bad, 2), names(asked)...)
	case len(asked) > 0:
		return skipped("tasks went input_required, but the server sent no request for them")
	}
	return skipped(firstNonEmpty(ifNot(len(ev.tasks) == 0, "no tool's task asked for input (input_required)"), ev.none))
}

// cancelledLegacy selects the tasks the cancel phase cancelled (A8); none were when
// tasks.cancel is not declared.
func cancelledLegacy(r *runner, ev evidence) ([]*call, string) {
	cs := r.cancelled()
	if r.legacyCaps.tasks && !r.legacyCaps.cancel {
		return cs, "tasks.cancel is not declared"
	}
	return ev.or(cs, "no tool's task was still working when it could be cancelled")
}

// staysCancelled checks that tasks/cancel answered the task as cancelled, and that it stayed
// cancelled (A8).
func staysCancelled(_ *runner, c *call) string {
	t := c.task
	switch {
	case t.cancelErr != nil:
		return "tasks/cancel of a working task: " + t.cancelErr.Error()
	case t.cancelMsg.Error != nil:
		if t.cancelMsg.Error.Code == rpc.CodeInvalidParams && len(t.afterCancel) == 0 {
			return ""
		}
		return "tasks/cancel of a working task got " + describe(t.cancelMsg, nil)
	case str(obj(t.cancelMsg.Result)["status"]) != "cancelled":
		return "tasks/cancel answered " + quote(t.cancelMsg.Result) + ", want the task with status cancelled"
	}
	for _, st := range t.afterCancel {
		if st != "cancelled" {
			return "after tasks/cancel answered cancelled, tasks/get says " + st
		}
	}
	return ""
}

// cancelFinishedLegacy judges A8b: tasks/cancel of a finished task is refused with -32602.
func cancelFinishedLegacy(ctx context.Context, r *runner, ev evidence) finding {
	if !r.legacyCaps.cancel {
		_, none := cancelledLegacy(r, ev)
		return skipped(firstNonEmpty(none, r.noTasks()))
	}
	f := r.finished()
	if f == nil {
		return skipped(firstNonEmpty(ifNot(len(r.taskCalls()) == 0, "no task finished"), r.noTasks()))
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	return found(ifNot(r.wantError(m, err, rpc.CodeInvalidParams, 0) == "", "%s: cancelling the %s task got %s", f.tool.name, f.task.terminal(), describe(m, err)), f.tool.name).from(err)
}

// judgeList: C25-TASKS §Task Listing: every task tasks/get can retrieve appears in tasks/list.
func judgeList(ctx context.Context, r *runner, ev evidence) finding {
	tasks := ev.tasks
	if r.legacyCaps.tasks && !r.legacyCaps.list {
		return skipped("tasks.list is not declared")
	}
	if len(tasks) == 0 {
		return skipped(ev.none)
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	listed := map[string]bool{}
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		m, err := r.send(lctx, "tasks/list", params, req{})
		if err != nil || m.Error != nil {
			return found("tasks/list got " + describe(m, err)).from(err)
		}
		var lr struct {
			Tasks []struct {
				TaskID string `json:"taskId"`
			} `json:"tasks"`
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(m.Result, &lr)
		for _, t := range lr.Tasks {
			listed[t.TaskID] = true
		}
		if lr.NextCursor == "" || lr.NextCursor == cursor {
			break
		}
		cursor = lr.NextCursor
	}
	var missing []string
	var judged []*call
	for _, c := range tasks {
		if c.task.vanished != nil {
			continue
		}
		g, err := r.send(lctx, "tasks/get", map[string]any{"taskId": c.task.id}, req{})
		if err != nil || g.Error != nil {
			continue // no longer retrievable
		}
		judged = append(judged, c)
		if !listed[c.task.id] {
			missing = append(missing, fmt.Sprintf("%s (task %s, %s)", c.tool.name, c.task.id, str(obj(g.Result)["status"])))
		}
	}
	return found(ifNot(len(missing) == 0, "tasks/get retrieves, but tasks/list leaves out: %s", joinMax(missing, 3)), names(judged)...)
}

func legacyFields(inner json.RawMessage) string {
	m := obj(inner)
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} {
		if _, ok := m[k]; !ok {
			return "no " + k + " in " + quote(inner)
		}
	}
	if v := string(compact(m["ttl"])); v != "null" && !isInt(m["ttl"]) {
		return "ttl is " + v + ", want an integer or null"
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		if _, err := time.Parse(time.RFC3339Nano, str(m[k])); err != nil {
			return k + " is not ISO 8601: " + quote(m[k])
		}
	}
	return ""
}
