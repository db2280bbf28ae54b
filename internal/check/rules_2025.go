package check

// This file holds the 2025-11-25 rules: the flow of an era (rules.go holds what both eras
// share), the probes and the judgement of the tasks; among them, those that judge more than
// one answer at a time: the shape of the tasks capability and what a server that does not declare it does with a task
// (A1, A1b), the status notifications wherever they arrive (A6b), what tasks/result returns
// and when (A9b, A9c), and the tasks/list cursor (A13b). docs/check-2025-11-25.md maps every
// MUST of C25-TASKS to the rule that judges it.

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

// statusNote is one notifications/tasks/status the server sent, on any stream.
type statusNote struct {
	at      time.Time
	params  json.RawMessage
	problem string // what the official schema says is wrong with it
}

// onNotify records 2025-11-25 status notifications for A6b and A12, validated at once
// against the schema's TaskStatusNotification.
func (r *runner) onNotify(method string, params json.RawMessage) {
	if r.modern || method != "notifications/tasks/status" {
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

// capsRule judges A1 on the raw capabilities object, so that wrong JSON types are a finding
// with what was seen (a key that is present counts as declared, whatever its type, so that
// the other rules still run).
func (r *runner) capsRule(rawCaps json.RawMessage) {
	caps := obj(rawCaps)
	raw, ok := caps["tasks"]
	if !ok || string(raw) == "null" {
		r.add("A1", Skip, "initialize declares no tasks capability: the server offers no tasks in 2025-11-25")
		return
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
	r.legacyCaps.tasks = true
	if v, ok := tasks["list"]; ok {
		r.legacyCaps.list = true
		object("tasks.list", v)
	}
	if v, ok := tasks["cancel"]; ok {
		r.legacyCaps.cancel = true
		object("tasks.cancel", v)
	}
	if v, ok := tasks["requests"]; ok {
		if tools, ok := object("tasks.requests", v)["tools"]; ok {
			if call, ok := object("tasks.requests.tools", tools)["call"]; ok {
				r.legacyCaps.call = true
				object("tasks.requests.tools.call", call)
			}
		}
	}
	if !r.legacyCaps.call {
		problems = append(problems, "tasks.requests.tools.call is not declared, so no tool can run as a task")
	}
	sort.Strings(problems)
	r.verdict("A1", strings.Join(problems, "; "))
}

// undeclaredProbe (A1b): C25-TASKS §Capabilities: "Servers and clients that support
// task-augmented requests MUST declare a tasks capability during initialization", and
// §Task Support and Handling: "Receivers that do not declare the task capability for a
// request type MUST process requests of that type normally, ignoring any task-augmentation
// metadata if present." So a server without tasks.requests.tools.call is sent one
// task-augmented call anyway, and must not answer it with a task.
func (r *runner) undeclaredProbe(ctx context.Context) {
	const id = "A1b"
	if r.legacyCaps.call {
		r.add(id, Pass, "")
		return
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
		r.add(id, Skip, "--no-call: no tool was called")
		return
	case pick == nil:
		r.add(id, Skip, "no tool the checker may call answered")
		return
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
		r.verdict(id, fmt.Sprintf("%s: initialize declares %s, yet a task-augmented call was answered with a task: %s",
			pick.name, declared(r.c.Capabilities()), quote(m.Result)), pick.name)

		return
	}
	r.verdict(id, ifNot(err == nil || !errors.Is(err, errBudget), "%s", describeErr(err)), pick.name)
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
func (r *runner) cursorProbe(ctx context.Context) {
	const id = "A13b"
	if !r.legacyCaps.list {
		r.add(id, Skip, firstNonEmpty(ifNot(!r.legacyCaps.tasks, "tasks.list is not declared"), r.noTasks()))
		return
	}
	m, err := r.send(ctx, "tasks/list", map[string]any{"cursor": "mcptask-check-invalid-cursor-5b2e"}, req{})
	r.verdict(id, ifNot(r.wantError(m, err, rpc.CodeInvalidParams, 0) == "", "tasks/list with cursor \"mcptask-check-invalid-cursor-5b2e\" got %s, want error -32602", describe(m, err)))
}

// judgePayloads judges what tasks/result returned (A9b, A9c).
func (r *runner) judgePayloads(tasks []*call, none string) {
	// A9b: C25-TASKS §Result Retrieval: "When a receiver receives a tasks/result request for a
	// task in any other non-terminal status (working or input_required), it MUST block the
	// response until the task reaches a terminal status."
	var early, ended []*call
	for _, c := range tasks {
		t := c.task
		t.mu.Lock()
		answered := t.payload != nil && t.payloadErr == nil
		if answered && (t.payloadSent == "working" || t.payloadSent == "input_required") {
			early = append(early, c)
		}
		if st := finalStatus(t); answered && (st == "completed" || st == "failed") {
			ended = append(ended, c)
		}
		t.mu.Unlock()
	}
	why := none
	if len(tasks) > 0 {
		why = "no task's tasks/result, sent while it was still working, was answered"
	}
	r.judgeTasks("A9b", early, why, func(c *call) string {
		t := c.task
		ended := false
		for _, st := range t.statuses[:t.payloadIdx] {
			ended = ended || rpc.TaskStatus(st).Terminal()
		}
		if t.payloadAfter != "" && !rpc.TaskStatus(t.payloadAfter).Terminal() && !ended {
			return fmt.Sprintf("tasks/result sent while the task was %s answered at once (%s), and tasks/get right after still said %s", t.payloadSent, describe(t.payload, nil), t.payloadAfter)
		}
		return ""
	})

	// A9c: §Result Retrieval: "receivers MUST return from tasks/result exactly what the
	// underlying request would have returned, whether that is a successful result or a
	// JSON-RPC error"; §Task Execution Errors: a failed task is a JSON-RPC error or a tool
	// result with isError.
	if len(tasks) > 0 {
		why = "no task that ended completed or failed had its tasks/result answered"
	}
	r.judgeTasks("A9c", ended, why, func(c *call) string {
		t := c.task
		st := finalStatus(t)
		switch {
		case st == "failed" && t.payload.Result != nil && !isErrorResult(t.payload.Result):
			return "the task ended failed, yet tasks/result returned a success-shaped result (no JSON-RPC error, no isError): " + quote(t.payload.Result)
		case st == "completed" && t.payload.Error != nil:
			return "the task ended completed, yet tasks/result returned " + describe(t.payload, nil)
		}
		return ""
	})

}

// judgeNotes (A6b): every notifications/tasks/status matches the schema (C25-TASKS §Task
// Status Notification: "The notification includes the full Task object"), names a task of
// this session, follows the state machine in the order it arrived, and agrees with the
// terminal status tasks/get gave (§Task Status Lifecycle: terminal statuses "MUST NOT
// transition to any other status").
func (r *runner) judgeNotes(tasks []*call, none string) {
	const id = "A6b"
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
		r.add(id, Skip, none)
		return
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
	r.verdict(id, problem, tools...)
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
func (r *runner) judgeIDs(tasks []*call, none string) {
	const id = "A36"
	seen := map[string]string{}
	for _, c := range tasks {
		if other, dup := seen[c.task.id]; dup {
			r.verdict(id, fmt.Sprintf("%s and %s were given the same task id %q", other, c.tool.name, c.task.id), other, c.tool.name)
			return
		}
		seen[c.task.id] = c.tool.name
	}
	level := Must
	if r.o.Authorized {
		level = Should
	}
	r.judgeTasksAt(level, id, tasks, none, func(c *call) string {
		p := entropy(c.task.id)
		if p != "" && !r.o.Authorized {
			p += " (no authorization context was sent, so the id is all that protects the task)"
		}
		return p
	})
}

// metaProbe (A7d): C25-TASKS §Associating Task-Related Messages: "For the tasks/get,
// tasks/result, and tasks/cancel operations, the taskId parameter in the request MUST be used
// as the source of truth for identifying the target task. … receivers MUST ignore such
// metadata if present in favor of the RPC method parameter." One tasks/get names a real task
// in taskId and an unknown one in related-task metadata.
func (r *runner) metaProbe(ctx context.Context, tasks []*call, none string) {
	const id = "A7d"
	if len(tasks) == 0 {
		r.add(id, Skip, none)
		return
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
		r.add(id, Skip, "no task was still retrievable with tasks/get")
		return
	}
	m, err := r.send(pctx, "tasks/get", map[string]any{"taskId": c.task.id,
		"_meta": map[string]any{rpc.MetaRelatedTask: map[string]any{"taskId": unknownID}}}, req{})
	problem := ""
	switch {
	case err != nil:
		problem = err.Error()
	case m.Error != nil:
		problem = fmt.Sprintf("a tasks/get of a retrievable task, with an unknown task in _meta related-task, got %s", describe(m, nil))
	case str(obj(m.Result)["taskId"]) != c.task.id:
		problem = fmt.Sprintf("a tasks/get of task %s, with an unknown task in _meta related-task, answered %s", c.task.id, quote(m.Result))
	}
	r.verdict(id, problem, c.tool.name)
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
	r.capsRule(r.c.Capabilities())
	r.openStandalone(ctx)
	r.legacyProbes(ctx)
	r.toolsPhase(ctx)
	r.undeclaredProbe(ctx)
	r.negotiationProbes(ctx)
	if r.legacyCaps.call && r.legacyCaps.cancel {
		r.cancelPhase(ctx)
	}
	r.judgeLegacy(ctx)
}

// unknownTaskProbes are the 2025-11-25 rules on a task id the server never gave (A7, A7b, A7c).
var unknownTaskProbes = []probe{
	{id: "A7", skip: needsTasks,
		method: "tasks/get", params: map[string]any{"taskId": unknownID}, code: rpc.CodeInvalidParams},
	{id: "A7b", skip: needsTasks,
		method: "tasks/result", params: map[string]any{"taskId": unknownID}, code: rpc.CodeInvalidParams},
	{id: "A7c", skip: needsCancel,
		method: "tasks/cancel", params: map[string]any{"taskId": unknownID}, code: rpc.CodeInvalidParams},
}

// needsTasks skips a probe when initialize declares no tasks capability.
func needsTasks(r *runner) string { return ifNot(r.legacyCaps.tasks, "%s", r.noTasks()) }

// needsCancel skips a probe of tasks/cancel when it is not declared: undeclared, tasks/cancel
// may rightly be -32601, so there is nothing to judge.
func needsCancel(r *runner) string {
	return firstNonEmpty(needsTasks(r), ifNot(r.legacyCaps.cancel, "tasks.cancel is not declared"))
}

func (r *runner) legacyProbes(ctx context.Context) {
	r.probeAll(ctx, unknownTaskProbes)
	r.cursorProbe(ctx)
	if !r.o.HTTP {
		r.add("A16", Skip, "stdio has no headers")
		return
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
	r.verdict("A16", ifNot(status == http.StatusBadRequest, "a tools/list with MCP-Protocol-Version: 1999-01-01 got HTTP %d (%s)", status, describe(m, err)))
}

// negotiationProbes: C25-TASKS §Tool-Level Negotiation: a required tool called without task
// is -32601 (A3); a tool without task support called with task SHOULD be -32601 (A3b).
func (r *runner) negotiationProbes(ctx context.Context) {
	if !r.legacyCaps.call {
		r.add("A3", Skip, r.noTasks())
		r.add("A3b", Skip, r.noTasks())
		return
	}
	var required, forbidden *toolInfo
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
	if required == nil {
		r.add("A3", Skip, "no tool the checker may call has taskSupport required")
	} else {
		m, err := r.send(ctx, "tools/call", map[string]any{"name": required.name, "arguments": required.args}, req{})
		p := r.wantError(m, err, rpc.CodeMethodNotFound, 0)
		if m != nil && m.Error != nil && m.Error.Code == rpc.CodeInvalidRequest {
			p = "" // §Error Handling allows -32600 too (PROTOCOL.md §7 item 14)
		}
		r.verdict("A3", p, required.name)
	}
	if forbidden == nil {
		r.add("A3b", Skip, "no tool the checker may call lacks task support and answers quickly")
	} else {
		pctx, cancel := context.WithTimeout(ctx, r.longAfter(0))
		m, err := r.send(pctx, "tools/call", map[string]any{"name": forbidden.name, "arguments": forbidden.args, "task": map[string]any{}}, req{})
		cancel()
		if m != nil && m.Result != nil && obj(m.Result)["task"] != nil {
			// Making a task breaks the client-side MUST NOT the server should have refused.
			r.verdictAt(Must, "A3b", forbidden.name+": a task-augmented call to a tool without task support made a task", forbidden.name)
		} else {
			r.verdict("A3b", ifNot(err == nil && m.Error != nil && m.Error.Code == rpc.CodeMethodNotFound, "%s: got %s", forbidden.name, describe(m, err)), forbidden.name)
		}
	}
}

func (r *runner) judgeLegacy(ctx context.Context) { r.judgeAll(ctx, legacyJudgements) }

// legacyJudgements are the 2025-11-25 rules judged on what the tools showed, in the order they
// are judged.
var legacyJudgements = []judgement{
	// A2: C25-TASKS §Result Retrieval: a receiver that accepts a task-augmented request MUST
	// answer with a CreateTaskResult.
	{id: "A2", evidence: augmented, judge: nested},
	{id: "A4", judge: firstWorking},
	{id: "A5", judge: taskFields},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeIDs(ev.tasks, ev.none) }},
	{id: "A6", judge: seenStatuses},
	{id: "A38", evidence: polledTwice, judge: kept},
	{id: "A12", judge: unrelated},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgePayloads(ev.tasks, ev.none) }},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeNotes(ev.tasks, ev.none) }},
	// A9: C25-TASKS §Related Task Metadata: the tasks/result response carries related-task.
	{id: "A9", evidence: paid, judge: relatedPayload},
	// A10: C25-TASKS §Task Execution Errors: isError makes the task failed.
	{id: "A10", evidence: paidToolErrors, judge: failedOnToolError},
	// A11: C25-TASKS §Input Required Status: requests for a task carry related-task.
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeRequests(ev) }},
	{run: func(ctx context.Context, r *runner, ev evidence) { r.metaProbe(ctx, ev.tasks, ev.none) }},
	{run: func(ctx context.Context, r *runner, ev evidence) { r.judgeCancelLegacy(ctx, ev.none) }},
	{run: func(ctx context.Context, r *runner, ev evidence) { r.judgeList(ctx, ev.tasks, ev.none) }},
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
func (r *runner) judgeRequests(ev evidence) {
	var asked []*call
	for _, c := range ev.tasks {
		if c.task.asked {
			asked = append(asked, c)
		}
	}
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
		r.verdict("A11", joinMax(bad, 2), names(asked)...)
	case len(asked) > 0:
		r.add("A11", Skip, "tasks went input_required, but the server sent no request for them")
	default:
		r.add("A11", Skip, firstNonEmpty(ifNot(len(ev.tasks) == 0, "no tool's task asked for input (input_required)"), ev.none))
	}
}

func (r *runner) judgeCancelLegacy(ctx context.Context, none string) {
	if r.legacyCaps.tasks && !r.legacyCaps.cancel {
		none = "tasks.cancel is not declared"
	}
	cs := r.cancelled()
	if len(cs) == 0 && len(r.taskCalls()) > 0 && none == r.noTasks() {
		none = "no tool's task was still working when it could be cancelled"
	}
	r.judgeTasks("A8", cs, none, func(c *call) string {
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
	})

	if !r.legacyCaps.cancel {
		r.add("A8b", Skip, firstNonEmpty(none, r.noTasks()))
		return
	}
	f := r.finished()
	if f == nil {
		r.add("A8b", Skip, firstNonEmpty(ifNot(len(r.taskCalls()) == 0, "no task finished"), r.noTasks()))
		return
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	r.verdict("A8b", ifNot(r.wantError(m, err, rpc.CodeInvalidParams, 0) == "", "%s: cancelling the %s task got %s", f.tool.name, f.task.terminal(), describe(m, err)), f.tool.name)
}

// judgeList: C25-TASKS §Task Listing: every task tasks/get can retrieve appears in tasks/list.
func (r *runner) judgeList(ctx context.Context, tasks []*call, none string) {
	const id = "A13"
	if r.legacyCaps.tasks && !r.legacyCaps.list {
		r.add(id, Skip, "tasks.list is not declared")
		return
	}
	if len(tasks) == 0 {
		r.add(id, Skip, none)
		return
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
			r.verdict(id, "tasks/list got "+describe(m, err))
			return
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
	r.verdict(id, ifNot(len(missing) == 0, "tasks/get retrieves, but tasks/list leaves out: %s", joinMax(missing, 3)), names(judged)...)
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
