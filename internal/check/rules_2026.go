package check

// This file holds the rules of 2026-07-28 with the tasks extension: discovery, the probes
// that need no tool, the task probes, subscriptions and the judgement of what the tools
// showed. rules.go holds what both eras share.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

func (r *runner) runModern(ctx context.Context) {
	r.discovery(ctx)
	r.modernProbes(ctx)
	r.toolsPhase(ctx)
	if r.extension {
		r.cancelPhase(ctx)
		r.listenRule(ctx)
	}
	r.taskProbes(ctx)
	r.judgeModern(ctx)
}

func (r *runner) discovery(ctx context.Context) {
	d, err := r.send(ctx, "server/discover", nil, req{})
	if err != nil || d.Error != nil {
		r.judged(ruleLevel("B17"), "B17", ruleAlt("B17"), describe(d, err))
		return
	}
	r.discover = d.Result
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
		problem = fmt.Sprintf("resultType is %s, want \"complete\"", quote(res["resultType"]))
	case !contains(disc.SupportedVersions, rpc.VersionModern):
		problem = fmt.Sprintf("supportedVersions %v lacks %s", disc.SupportedVersions, rpc.VersionModern)
	}
	r.verdict("B17", problem)
	r.verdict("B17c", ifNot(disc.Meta[rpc.MetaServerInfo] != nil, "no _meta[%q] in %s", rpc.MetaServerInfo, quote(d.Result)))
	r.verdict("B17d", cacheHints(d.Result))

	ext, ok := disc.Capabilities.Extensions[rpc.TasksExtension]
	legacyTasks := len(disc.Capabilities.Tasks) > 0 && string(disc.Capabilities.Tasks) != "null"
	switch {
	case ok:
		r.extension = true
		r.verdict("B17b", ifNot(string(compact(ext)) == "{}", "the settings object is %s, want {} (TasksExtensionCapability is Record<string, never>)", quote(ext)))
		r.verdict("B31a", ifNot(!legacyTasks, "capabilities.tasks = %s next to the extension", quote(disc.Capabilities.Tasks)))
	case legacyTasks:
		// Half-modern: it lists 2026-07-28 but offers tasks only the 2025-11-25 way. A
		// 2026-07-28 client gets no task from it (and a task-only tool fails); tasks work only
		// after initialize. Not a broken rule of 2026-07-28 (extensions are optional), but
		// almost certainly not what the author meant.
		r.add("B17b", Warn,
			fmt.Sprintf("half-modern: server/discover lists %s and the 2025-11-25 capability tasks = %s, but not the %s extension; 2026-07-28 clients get no tasks from it (tasks work only through initialize, 2025-11-25), and SEP-2663 says legacy tasks capabilities are not advertised under 2026-07-28",
				rpc.VersionModern, quote(disc.Capabilities.Tasks), rpc.TasksExtension))

	default:
		r.add("B17b", Skip, "the server does not declare the "+rpc.TasksExtension+" extension: it offers no tasks in 2026-07-28, so the task rules cannot run")
	}
}

// cacheHints checks the CacheableResult fields: ttlMs an integer >= 0, cacheScope "public" or
// "private".
func cacheHints(res json.RawMessage) string {
	m := obj(res)
	var bad []string
	ttl, hasTTL := m["ttlMs"]
	scope, hasScope := m["cacheScope"]
	switch {
	case !hasTTL:
		bad = append(bad, "no ttlMs")
	case !isInt(ttl) || strings.HasPrefix(string(ttl), "-"):
		bad = append(bad, "ttlMs is "+quote(ttl)+", want an integer >= 0")
	}
	switch s := str(scope); {
	case !hasScope:
		bad = append(bad, "no cacheScope")
	case s != "public" && s != "private":
		bad = append(bad, "cacheScope is "+quote(scope)+", want \"public\" or \"private\"")
	}
	return strings.Join(bad, ", ")
}

// modernProbes send the deliberately wrong requests that need no tool.
func (r *runner) modernProbes(ctx context.Context) { r.probeAll(ctx, modernProbes) }

// badVersion is a protocol version no server speaks.
const badVersion = "1999-01-01"

// modernProbes are the 2026-07-28 rules judged on a deliberately wrong request that needs no
// tool, in the order they are sent.
var modernProbes = []probe{
	// B19: C26-BASIC §_meta: protocolVersion and clientCapabilities are required.
	{id: "B19",
		method: "server/discover", q: req{noCaps: true}, code: rpc.CodeInvalidParams, status: http.StatusBadRequest},
	// B20: C26-VER: UnsupportedProtocolVersion with data.supported and data.requested.
	{id: "B20",
		method: "server/discover", q: req{version: badVersion, hdrVersion: badVersion}, code: rpc.CodeUnsupportedVersion, status: http.StatusBadRequest,
		judge: unsupportedData},
	// B21b: C26-HTTP §Protocol Version Header: the header must match _meta.
	{id: "B21b",
		skip:   needsHeaders,
		method: "server/discover", q: req{version: badVersion, hdrVersion: rpc.VersionModern}, code: rpc.CodeHeaderMismatch, status: http.StatusBadRequest},
	// Removed methods: C26-HTTP: an unknown method is 404 + -32601; SEP-2663 §Backward
	// Compatibility: tasks/result (and tasks/list) MUST get -32601 under 2026-07-28.
	{id: "B21c",
		method: "ping", params: map[string]any{}, code: rpc.CodeMethodNotFound, status: http.StatusNotFound},
	{id: "B31",
		method: "tasks/result", params: map[string]any{"taskId": unknownID}, code: rpc.CodeMethodNotFound, status: http.StatusNotFound},
	{id: "B31b",
		method: "tasks/list", params: map[string]any{}, code: rpc.CodeMethodNotFound, status: http.StatusNotFound},
}

// unsupportedData checks the data of an UnsupportedProtocolVersion error (B20).
func unsupportedData(_ *runner, m *rpc.Message) string {
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	_ = json.Unmarshal(m.Error.Data, &data)
	switch {
	case len(data.Supported) == 0:
		return "error.data.supported is missing or empty: " + quote(m.Error.Data)
	case data.Requested != badVersion:
		return fmt.Sprintf("error.data.requested is %q, want the requested %q", data.Requested, badVersion)
	}
	return ""
}

// listHints judges B17e: every list result is a CacheableResult (C26-SCHEMA ListToolsResult,
// ListPromptsResult, ListResourcesResult and ListResourceTemplatesResult require ttlMs and
// cacheScope). tools/list is always judged; prompts/list only when server/discover declares
// prompts, resources/list and resources/templates/list only when it declares resources (a
// server without them has no such methods: C26-HTTP answers them 404 and -32601). What was
// not judged, and why, is said with the verdict.
func (r *runner) listHints(ctx context.Context, toolPages []*rpc.Message, toolErr error) {
	var bad []string
	judge := func(method string, pages []*rpc.Message, err error) {
		if len(pages) == 0 {
			bad = append(bad, method+": "+describeErr(err))
			return
		}
		for i, p := range pages {
			if pb := cacheHints(p.Result); pb != "" {
				bad = append(bad, fmt.Sprintf("%s page %d: %s", method, i+1, pb))
			}
		}
	}
	judge("tools/list", toolPages, toolErr)
	var caps struct {
		Prompts   json.RawMessage `json:"prompts"`
		Resources json.RawMessage `json:"resources"`
	}
	_ = json.Unmarshal(obj(r.discover)["capabilities"], &caps)
	declared := func(c json.RawMessage) bool { return len(c) > 0 && string(c) != "null" }
	var notJudged []string
	for _, c := range []struct {
		capability string
		declared   bool
		methods    []string
	}{
		{"prompts", declared(caps.Prompts), []string{"prompts/list"}},
		{"resources", declared(caps.Resources), []string{"resources/list", "resources/templates/list"}},
	} {
		if !c.declared {
			notJudged = append(notJudged, fmt.Sprintf("%s (no %s capability declared)", strings.Join(c.methods, " and "), c.capability))
			continue
		}
		for _, method := range c.methods {
			pages, err := r.listPages(ctx, method)
			var re *rpc.Error
			if len(pages) == 0 && method == "resources/templates/list" && errors.As(err, &re) && re.Code == rpc.CodeMethodNotFound {
				// A server may offer resources without templates: no sentence says it must
				// answer this method.
				notJudged = append(notJudged, method+" (answered -32601: no templates)")
				continue
			}
			judge(method, pages, err)
		}
	}
	problem := strings.Join(bad, "; ")
	if problem == "" && len(notJudged) > 0 {
		r.add("B17e", Pass, "not judged: "+strings.Join(notJudged, "; "))
		return
	}
	r.verdict("B17e", problem)
}

// listPages fetches every page of a list method (at most 20, following nextCursor).
func (r *runner) listPages(ctx context.Context, method string) ([]*rpc.Message, error) {
	var pages []*rpc.Message
	cursor := ""
	seen := map[string]bool{}
	for range 20 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		m, err := r.send(ctx, method, params, req{})
		if err != nil {
			return pages, err
		}
		if m.Error != nil {
			return pages, m.Error
		}
		pages = append(pages, m)
		next := str(obj(m.Result)["nextCursor"])
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cursor = next
	}
	return pages, nil
}

// unknownTaskProbesModern are the 2026-07-28 rules on a task id the server never gave.
var unknownTaskProbesModern = []probe{
	{id: "B29",
		method: "tasks/get", params: map[string]any{"taskId": unknownID}, code: rpc.CodeInvalidParams},
	{id: "B28b",
		method: "tasks/cancel", params: map[string]any{"taskId": unknownID}, code: rpc.CodeInvalidParams},
}

// taskProbes send the task-method probes: unknown ids, a mismatched Mcp-Name, tasks/* without
// the extension. They use a real task id where the catalogue made one.
func (r *runner) taskProbes(ctx context.Context) {
	if !r.extension {
		for _, id := range []string{"B21", "B29", "B28b"} {
			r.add(id, Skip, r.noTasks())
		}
		r.addAlt("B30", Skip, r.noTasks())
		return
	}
	id := unknownID
	for _, c := range r.calls {
		if c.task != nil && c.task.id != "" {
			id = c.task.id
			break
		}
	}
	if r.o.HTTP {
		m, err := r.send(ctx, "tasks/get", map[string]any{"taskId": id}, req{name: "wrong-" + id})
		r.verdict("B21",
			r.wantError(m, err, rpc.CodeHeaderMismatch, http.StatusBadRequest))

	} else {
		r.addAlt("B21", Skip, "stdio has no headers")
	}
	r.probeAll(ctx, unknownTaskProbesModern)

	// B30: EXT §Protocol Errors: tasks/* from a client that did not declare the extension.
	var bad []string
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := map[string]any{"taskId": id}
		if method == "tasks/update" {
			params["inputResponses"] = map[string]any{}
		}
		if method == "tasks/cancel" && id != unknownID {
			params["taskId"] = unknownID // never cancel a real task by accident
		}
		m, err := r.send(ctx, method, params, req{noExt: true})
		if p := r.wantError(m, err, rpc.CodeMissingCapability, http.StatusBadRequest); p != "" {
			bad = append(bad, method+": "+p)
		}
	}
	r.verdict("B30", strings.Join(bad, "; "))
}

func (r *runner) judgeModern(ctx context.Context) { r.judgeAll(ctx, modernJudgements) }

// modernJudgements are the 2026-07-28 rules judged on what the tools showed, in the order they
// are judged.
var modernJudgements = []judgement{
	// B24: EXT-SCHEMA CreateTaskResult.
	{id: "B24",
		evidence: created, judge: func(_ *runner, c *call) string { return createShape(c.task.create) }},
	{id: "B36", judge: func(_ *runner, c *call) string { return entropy(c.task.id) }},
	// B25: EXT §Task Creation: task creation is strongly consistent.
	{id: "B25", judge: consistent},
	// B26: EXT §Task Polling → Response.
	{id: "B26", judge: variants},
	{id: "B33", judge: seenStatuses},
	{id: "B33b", evidence: polledFinished, judge: stable},
	{id: "B38", evidence: polledTwice, judge: kept},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeIsErrorModern(ev.tasks, ev.none) }},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeInputModern(ev.tasks, ev.none) }},
	{run: func(_ context.Context, r *runner, ev evidence) { r.judgeNoExt(ev.none) }},
	{run: func(ctx context.Context, r *runner, ev evidence) { r.judgeCancelModern(ctx, ev.none) }},
}

// created selects every call that made a task, followed or not (B24).
func created(r *runner, ev evidence) ([]*call, string) {
	var cs []*call
	for _, c := range r.calls {
		if c.task != nil {
			cs = append(cs, c)
		}
	}
	return cs, ev.none
}

// consistent checks that the first tasks/get found the task (B25).
func consistent(_ *runner, c *call) string {
	if len(c.task.polls) == 0 {
		return ""
	}
	p := c.task.polls[0]
	if p.err != nil && !errors.Is(p.err, errBudget) {
		return "the first tasks/get failed: " + p.err.Error()
	}
	if p.msg != nil && p.msg.Error != nil {
		return "the first tasks/get, sent as soon as the CreateTaskResult arrived, got " + describe(p.msg, nil)
	}
	return ""
}

// variants checks that every tasks/get result carries its status's field (B26).
func variants(_ *runner, c *call) string {
	for _, p := range c.task.polls {
		if p.msg != nil && p.msg.Result != nil {
			if pb := getVariant(p.msg.Result); pb != "" {
				return pb
			}
		}
	}
	return ""
}

// createShape checks a 2026-07-28 CreateTaskResult.
func createShape(raw json.RawMessage) string {
	m := obj(raw)
	if str(m["resultType"]) != "task" {
		return fmt.Sprintf("resultType is %s, want \"task\"", quote(m["resultType"]))
	}
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"} {
		if _, ok := m[k]; !ok {
			return "no " + k + " in " + quote(raw)
		}
	}
	for _, k := range []string{"ttl", "pollInterval", "task", "result", "error", "inputRequests"} {
		if _, ok := m[k]; ok {
			return "it carries " + k + " (" + quote(raw) + ")"
		}
	}
	if v := string(compact(m["ttlMs"])); v != "null" && !isInt(m["ttlMs"]) {
		return "ttlMs is " + v + ", want an integer or null"
	}
	if v, ok := m["pollIntervalMs"]; ok && !isInt(v) {
		return "pollIntervalMs is " + string(v) + ", want an integer"
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		if _, err := time.Parse(time.RFC3339Nano, str(m[k])); err != nil {
			return k + " is not an ISO 8601 time: " + quote(m[k])
		}
	}
	return ""
}

// getVariant checks one 2026-07-28 tasks/get result against the variant of its status.
func getVariant(raw json.RawMessage) string {
	m := obj(raw)
	switch st := str(m["status"]); st {
	case "input_required":
		var ir map[string]json.RawMessage
		if json.Unmarshal(m["inputRequests"], &ir) != nil || len(ir) == 0 {
			return "an input_required task without inputRequests: " + quote(raw)
		}
	case "completed":
		if _, ok := m["result"]; !ok {
			return "a completed task without its result: " + quote(raw)
		}
	case "failed":
		if _, ok := m["error"]; !ok {
			return "a failed task without its error: " + quote(raw)
		}
		if _, ok := m["result"]; ok {
			return "a failed task with a result: " + quote(raw)
		}
	case "working", "cancelled":
	default:
		return "status " + quote(m["status"]) + " is not one of the five"
	}
	return ""
}

// judgeIsErrorModern: EXT §Task Execution Errors: a tool result with isError ends completed
// with that result; failed is only for JSON-RPC errors. A tool error is recognised in the
// task's own result, or in the result the same call gave without a task.
func (r *runner) judgeIsErrorModern(tasks []*call, none string) {
	const id = "B27"
	var ev []*call
	for _, c := range tasks {
		if c.shows(true) != nil && contains(c.shows(true), "tool-error") {
			ev = append(ev, c)
			continue
		}
		if pc := c.tool.plainCall; pc != nil && pc.plain != nil && isErrorResult(pc.plain) && c.task.terminal() != "" {
			ev = append(ev, c)
		}
	}
	if len(ev) == 0 && len(tasks) > 0 {
		none = "no tool produced a tool error (a result with isError)"
	}
	r.judgeTasks(id, ev, none, func(c *call) string {
		switch st := c.task.terminal(); st {
		case "completed":
			if fp := c.task.finalPoll(); fp != nil && !isErrorResult(obj(fp.msg.Result)["result"]) {
				return "the task completed without isError although the same call without a task returned isError"
			}
			return ""
		default:
			fp := c.task.finalPoll()
			seen := ""
			if fp != nil {
				seen = " with error " + quote(obj(fp.msg.Result)["error"])
			}
			return fmt.Sprintf("a tool error (the same call without a task returns isError: true) ended %s%s, want completed with the CallToolResult in result", st, seen)
		}
	})

}

// judgeInputModern: tasks/update acks (B28d) and inputRequests keys (B32).
func (r *runner) judgeInputModern(tasks []*call, none string) {
	var asked []*call
	for _, c := range tasks {
		if c.task.asked {
			asked = append(asked, c)
		}
	}
	if len(asked) == 0 && len(tasks) > 0 {
		none = "no tool's task asked for input (input_required)"
	}
	r.judgeTasks("B28d", asked, none, func(c *call) string {
		for i, m := range c.task.updates {
			if err := c.task.updateErr[i]; err != nil || m.Error != nil {
				return "tasks/update got " + describe(m, err)
			}
			if p := ack(m.Result); p != "" {
				return "tasks/update: " + p
			}
		}
		return ""
	})

	r.judgeTasks("B32", asked, none, func(c *call) string {
		if c.task.keyReuse != "" {
			return c.task.keyReuse
		}
		for k, v := range c.task.keyReqs {
			var rq struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(v, &rq)
			if rq.Method != "elicitation/create" {
				return fmt.Sprintf("key %q asks for %s, which the checker did not declare (it declared elicitation only)", k, quote(json.RawMessage(strconv.Quote(rq.Method))))
			}
		}
		return ""
	})

}

// ack checks an empty acknowledgement: resultType complete and none of a task's fields.
func ack(raw json.RawMessage) string {
	m := obj(raw)
	if str(m["resultType"]) != "complete" {
		return fmt.Sprintf("resultType is %s, want \"complete\"", quote(m["resultType"]))
	}
	var extra []string
	for _, k := range []string{"taskId", "status", "result", "error", "inputRequests"} {
		if _, ok := m[k]; ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return "the ack carries " + strings.Join(extra, ", ") + ": " + quote(raw)
	}
	return ""
}

// judgeNoExt: EXT §Capability Negotiation: without the extension declared a tools/call MUST
// NOT produce a task (B22); a tool that can only run as a task answers -32021 naming the
// extension (B22b).
func (r *runner) judgeNoExt(none string) {
	var plain []*call
	for _, t := range r.tools {
		if t.plainCall != nil && !errors.Is(t.plainCall.err, errBudget) {
			plain = append(plain, t.plainCall)
		}
	}
	r.judgeTasks("B22", plain, none, func(c *call) string {
		if c.task != nil {
			return "returned a task (" + quote(c.task.create) + ") to a request that did not declare " + rpc.TasksExtension
		}
		return ""
	})

	var refused []*call
	for _, c := range plain {
		if c.rpcErr == nil {
			continue
		}
		// An error is a refusal to run without a task when the same call as a task works (it
		// completes, asks for input or runs on), or when it says so with -32021. A tool whose
		// task fails fails without a task too, with whatever error it has.
		works := c.rpcErr.Code == rpc.CodeMissingCapability
		for _, tc := range r.calls {
			if tc.tool == c.tool && !tc.again && tc.task != nil && tc.task.id != "" {
				st := tc.task.terminal()
				works = works || st == "completed" || (st == "" && (tc.task.long || tc.task.asked))
			}
		}
		if works {
			refused = append(refused, c)
		}
	}
	if len(refused) == 0 && len(plain) > 0 {
		none = "every task tool also ran without the extension declared, so no refusal could be seen"
	}
	r.judgeTasks("B22b", refused, none, func(c *call) string {
		m := &rpc.Message{Error: c.rpcErr}
		if p := r.wantError(m, nil, rpc.CodeMissingCapability, http.StatusBadRequest); p != "" {
			return p
		}
		var d struct {
			Required struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"requiredCapabilities"`
		}
		_ = json.Unmarshal(c.rpcErr.Data, &d)
		if _, ok := d.Required.Extensions[rpc.TasksExtension]; !ok {
			return "error.data.requiredCapabilities does not name the extension: " + quote(c.rpcErr.Data)
		}
		return ""
	})

}

func (r *runner) judgeCancelModern(ctx context.Context, none string) {
	cs := r.cancelled()
	if len(cs) == 0 && len(r.taskCalls()) > 0 {
		none = "no tool's task was still working when it could be cancelled"
	}
	r.judgeTasks("B28", cs, none, func(c *call) string {
		if c.task.cancelErr != nil || c.task.cancelMsg.Error != nil {
			return "tasks/cancel of a working task got " + describe(c.task.cancelMsg, c.task.cancelErr)
		}
		return ack(c.task.cancelMsg.Result)
	})

	// B28c: EXT has no rule for cancelling a finished task: an ack or an error are both
	// allowed; other clients expect the ack, so an error is a warning.
	const id = "B28c"
	f := r.finished()
	if f == nil {
		r.add(id, Skip, firstNonEmpty(none, "no task finished"))
		return
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	switch {
	case errors.Is(err, errBudget):
		r.cutShort(id, err.Error())
	case err != nil:
		r.verdict(id, err.Error(), f.tool.name)
	case m.Error != nil:
		r.add(id, Warn, fmt.Sprintf("%s: cancelling the %s task got %s; the spec allows it (\"Cancellation is cooperative\" and says nothing of finished tasks), but clients such as the official TypeScript SDK and the conformance suite expect the empty ack", f.tool.name, f.task.terminal(), describe(m, nil)), f.tool.name)
	default:
		r.verdict(id, ack(m.Result), f.tool.name)
	}
}

// cancelFinished cancels a finished task.
func (r *runner) cancelFinished(ctx context.Context, c *call) (*rpc.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return r.send(ctx, "tasks/cancel", map[string]any{"taskId": c.task.id}, req{})
}

// listenRule opens subscriptions/listen for a new task of a tool that completes and checks
// the stream: the acknowledgement comes first and lists the task, and notifications/tasks
// carry full DetailedTasks up to the terminal status (EXT §Task Status Notifications; C26-SUBS).
func (r *runner) listenRule(ctx context.Context) {
	const id = "B34"
	var pick *call
	for _, c := range r.taskCalls() {
		if c.task.terminal() == "completed" && !c.task.asked && (pick == nil || c.dur < pick.dur) {
			pick = c
		}
	}
	if pick == nil {
		r.add(id, Skip, firstNonEmpty(ifNot(len(r.taskCalls()) == 0, "no tool's task completes by itself"), r.noTasks()))
		return
	}
	if !r.budgetLeft(ctx) {
		r.cutShort(id, "")
		return
	}
	nc := r.callTool(ctx, pick.tool, pick.args, false)
	if nc.task == nil {
		r.add(id, Skip, pick.tool.name+" gave no task the second time: "+nc.seen())
		return
	}
	lctx, cancel := context.WithTimeout(ctx, r.longAfter(nc.task.poll)+2*pick.dur)
	defer cancel()
	var mu sync.Mutex
	problem, acked, pushed, done := "", false, 0, false
	err := r.c.Listen(lctx, []string{nc.task.id}, &rpc.Subscription{
		OnAck: func(ids []string) {
			mu.Lock()
			defer mu.Unlock()
			acked = true
			if !contains(ids, nc.task.id) && problem == "" {
				problem = fmt.Sprintf("the acknowledgement lists %v, not the task %s", ids, nc.task.id)
			}
		},
		OnTask: func(t *rpc.Task) {
			mu.Lock()
			defer mu.Unlock()
			pushed++
			if !acked && problem == "" {
				problem = "a notifications/tasks came before notifications/subscriptions/acknowledged"
			}
			if p := getVariant(t.Raw); p != "" && problem == "" {
				problem = "a pushed task is not a full DetailedTask: " + p
			}
			if t.Status.Terminal() {
				done = true
				cancel()
			}
		},
	})
	var rerr *rpc.Error
	if errors.As(err, &rerr) && rerr.Code == rpc.CodeMethodNotFound {
		r.add(id, Skip, fmt.Sprintf("the server offers no subscriptions (%s)", describe(&rpc.Message{Error: rerr}, nil)))
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case problem != "":
	case ctx.Err() != nil && !done:
		r.cutShort(id, "")
		return
	case !acked:
		problem = fmt.Sprintf("no notifications/subscriptions/acknowledged on the stream (%v)", errOrNothing(err))
	case pushed == 0:
		problem = "no notifications/tasks for the task"
	case !done:
		problem = "the stream never pushed the task's terminal status"
	}
	r.verdict(id, problem, pick.tool.name)
}

func errOrNothing(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return "the stream ended"
	}
	return err.Error()
}
