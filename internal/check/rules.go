package check

// This file holds the rules of both eras: the flow of a run (discovery, the probes that need no
// tool, the catalogue of tools, cancellation, subscriptions) and the judgement of the evidence.
// Rule ids follow PROTOCOL.md §6 (A1-A16 are 2025-11-25, B17-B38 are 2026-07-28); a letter
// suffix marks a further rule under the same item, and A0/B0 are the schema rules, one result
// per kind of answer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

func (r *runner) run(ctx context.Context) {
	if r.modern {
		r.runModern(ctx)
	} else {
		r.runLegacy(ctx)
	}
	r.judgeSchema()
	sort.SliceStable(r.results, func(i, j int) bool { return ruleLess(r.results[i].ID, r.results[j].ID) })
}

// ruleLess orders rule ids by their number, then their suffix ("B0:tools/call" < "B17" <
// "B17b" < "B21").
func ruleLess(a, b string) bool {
	na, sa := splitID(a)
	nb, sb := splitID(b)
	if na != nb {
		return na < nb
	}
	return sa < sb
}

func splitID(id string) (int, string) {
	i := 1
	for i < len(id) && id[i] >= '0' && id[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(id[min(1, len(id)):i])
	if err != nil {
		return 1 << 20, id
	}
	return n, id[i:]
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28 with the tasks extension

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
		r.verdict("B17", "server/discover answers", describe(d, err))
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
	r.verdict("B17", "server/discover returns resultType complete and supportedVersions", problem)
	r.verdict("B17c", "server/discover carries _meta serverInfo (SHOULD)", ifNot(disc.Meta[rpc.MetaServerInfo] != nil, "no _meta[%q] in %s", rpc.MetaServerInfo, quote(d.Result)))
	r.verdict("B17d", "server/discover carries the cache hints ttlMs and cacheScope", cacheHints(d.Result))

	ext, ok := disc.Capabilities.Extensions[rpc.TasksExtension]
	legacyTasks := len(disc.Capabilities.Tasks) > 0 && string(disc.Capabilities.Tasks) != "null"
	const extTitle = "tasks extension declared in capabilities.extensions with {}"
	switch {
	case ok:
		r.extension = true
		r.verdict("B17b", extTitle, ifNot(string(compact(ext)) == "{}", "the settings object is %s, want {} (TasksExtensionCapability is Record<string, never>)", quote(ext)))
		r.verdict("B31a", "no 2025-11-25 tasks capability under 2026-07-28", ifNot(!legacyTasks, "capabilities.tasks = %s next to the extension", quote(disc.Capabilities.Tasks)))
	case legacyTasks:
		// Half-modern: it lists 2026-07-28 but offers tasks only the 2025-11-25 way. A
		// 2026-07-28 client gets no task from it (and a task-only tool fails); tasks work only
		// after initialize. Not a broken rule of 2026-07-28 (extensions are optional), but
		// almost certainly not what the author meant.
		r.add("B17b", extTitle, Warn,
			fmt.Sprintf("half-modern: server/discover lists %s and the 2025-11-25 capability tasks = %s, but not the %s extension; 2026-07-28 clients get no tasks from it (tasks work only through initialize, 2025-11-25), and SEP-2663 says legacy tasks capabilities are not advertised under 2026-07-28",
				rpc.VersionModern, quote(disc.Capabilities.Tasks), rpc.TasksExtension))

	default:
		r.add("B17b", extTitle, Skip, "the server does not declare the "+rpc.TasksExtension+" extension: it offers no tasks in 2026-07-28, so the task rules cannot run")
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
func (r *runner) modernProbes(ctx context.Context) {
	const badVersion = "1999-01-01"
	// B19: C26-BASIC §_meta: protocolVersion and clientCapabilities are required.
	m, err := r.send(ctx, "server/discover", nil, req{noCaps: true})
	r.verdict("B19", "a request without _meta clientCapabilities is refused with -32602 (HTTP 400)",
		r.wantError(m, err, rpc.CodeInvalidParams, http.StatusBadRequest))

	// B20: C26-VER: UnsupportedProtocolVersion with data.supported and data.requested.
	m, err = r.send(ctx, "server/discover", nil, req{version: badVersion, hdrVersion: badVersion})
	problem := r.wantError(m, err, rpc.CodeUnsupportedVersion, http.StatusBadRequest)
	if problem == "" {
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		_ = json.Unmarshal(m.Error.Data, &data)
		switch {
		case len(data.Supported) == 0:
			problem = "error.data.supported is missing or empty: " + quote(m.Error.Data)
		case data.Requested != badVersion:
			problem = fmt.Sprintf("error.data.requested is %q, want the requested %q", data.Requested, badVersion)
		}
	}
	r.verdict("B20", "an unsupported protocol version is refused with -32022, data.supported and data.requested (HTTP 400)", problem)

	// B21b: C26-HTTP §Protocol Version Header: the header must match _meta.
	if r.o.HTTP {
		m, err = r.send(ctx, "server/discover", nil, req{version: badVersion, hdrVersion: rpc.VersionModern})
		r.verdict("B21b", "an MCP-Protocol-Version header that differs from _meta is refused with 400 and -32020",
			r.wantError(m, err, rpc.CodeHeaderMismatch, http.StatusBadRequest))

	} else {
		r.add("B21b", "an MCP-Protocol-Version header that differs from _meta is refused", Skip, "stdio has no headers")
	}

	// Removed methods: C26-HTTP: an unknown method is 404 + -32601; SEP-2663 §Backward
	// Compatibility: tasks/result (and tasks/list) MUST get -32601 under 2026-07-28.
	for _, p := range []struct{ id, method, title string }{
		{"B21c", "ping", "ping, removed in 2026-07-28, is answered 404 and -32601"},
		{"B31", "tasks/result", "tasks/result, removed in 2026-07-28, is answered 404 and -32601"},
		{"B31b", "tasks/list", "tasks/list, removed in 2026-07-28, is answered 404 and -32601"},
	} {
		params := map[string]any{}
		if p.method == "tasks/result" {
			params["taskId"] = unknownID
		}
		m, err := r.send(ctx, p.method, params, req{})
		r.verdict(p.id, p.title, r.wantError(m, err, rpc.CodeMethodNotFound, http.StatusNotFound))
	}
}

// toolsPhase lists the tools, checks the cache hints of the list results, and runs the
// catalogue.
func (r *runner) toolsPhase(ctx context.Context) {
	pages, err := r.listTools(ctx)
	if r.modern {
		r.listHints(ctx, pages, err)
	}
	if err != nil {
		r.toolsErr = err
		if len(r.tools) == 0 {
			return
		}
	}
	r.plan(ctx)
	r.catalogue(ctx)
}

// listHints judges B17e: every list result is a CacheableResult (C26-SCHEMA ListToolsResult,
// ListPromptsResult, ListResourcesResult and ListResourceTemplatesResult require ttlMs and
// cacheScope). tools/list is always judged; prompts/list only when server/discover declares
// prompts, resources/list and resources/templates/list only when it declares resources (a
// server without them has no such methods: C26-HTTP answers them 404 and -32601). What was
// not judged, and why, is said with the verdict.
func (r *runner) listHints(ctx context.Context, toolPages []*rpc.Message, toolErr error) {
	const title = "every list result carries the cache hints ttlMs and cacheScope: tools/list, and prompts/list, resources/list and resources/templates/list when declared"
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
		r.add("B17e", title, Pass, "not judged: "+strings.Join(notJudged, "; "))
		return
	}
	r.verdict("B17e", title, problem)
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

func describeErr(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// taskProbes send the task-method probes: unknown ids, a mismatched Mcp-Name, tasks/* without
// the extension. They use a real task id where the catalogue made one.
func (r *runner) taskProbes(ctx context.Context) {
	if !r.extension {
		for _, p := range [][2]string{
			{"B21", "a mismatched Mcp-Name on tasks/get is refused with 400 and -32020"},
			{"B29", "an unknown taskId on tasks/get is -32602"},
			{"B28b", "tasks/cancel of an unknown task is -32602 (SHOULD)"},
			{"B30", "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021"},
		} {
			r.add(p[0], p[1], Skip, r.noTasks())
		}
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
		r.verdict("B21", "a mismatched Mcp-Name on tasks/get is refused with 400 and -32020",
			r.wantError(m, err, rpc.CodeHeaderMismatch, http.StatusBadRequest))

	} else {
		r.add("B21", "a mismatched Mcp-Name on tasks/get is refused", Skip, "stdio has no headers")
	}
	m, err := r.send(ctx, "tasks/get", map[string]any{"taskId": unknownID}, req{})
	r.verdict("B29", "an unknown taskId on tasks/get is -32602", r.wantError(m, err, rpc.CodeInvalidParams, 0))
	m, err = r.send(ctx, "tasks/cancel", map[string]any{"taskId": unknownID}, req{})
	r.verdict("B28b", "tasks/cancel of an unknown task is -32602 (SHOULD)", r.wantError(m, err, rpc.CodeInvalidParams, 0))

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
	r.verdict("B30", "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021 (HTTP 400)", strings.Join(bad, "; "))
}

// noTasks says why there is no task to judge a task rule on.
func (r *runner) noTasks() string {
	switch {
	case r.modern && !r.extension:
		return "the server does not declare the " + rpc.TasksExtension + " extension, so it offers no tasks in 2026-07-28"
	case !r.modern && !r.legacyCaps.call:
		return "initialize declares no tasks.requests.tools.call, so the server offers no tasks in 2025-11-25"
	case r.o.NoCall:
		return "--no-call: no tool was called"
	case r.toolsErr != nil && len(r.tools) == 0:
		return "tools/list failed: " + r.toolsErr.Error()
	case len(r.tools) == 0:
		return "the server lists no tools"
	}
	var called, not []string
	for _, t := range r.tools {
		if t.reason != NotCalledNone {
			not = append(not, t.name+" ("+shortWhy(t.why)+")")
		} else {
			called = append(called, t.name)
		}
	}
	for _, c := range r.calls {
		if c.task != nil && c.task.id == "" {
			return c.tool.name + " answered with a task without a taskId, so no task could be followed"
		}
		if r.modern && c.plain != nil && obj(c.plain)["taskId"] != nil {
			return c.tool.name + " answered with what looks like a task but has no resultType \"task\" (see B18), so no task could be followed"
		}
	}
	s := "no tool answered with a task"
	if len(called) > 0 {
		s += "; called: " + strings.Join(called, ", ")
	}
	if len(not) > 0 {
		s += "; not called: " + strings.Join(not, ", ")
	}
	return s
}

func shortWhy(why string) string {
	if i := strings.Index(why, ";"); i > 0 {
		return why[:i]
	}
	return why
}

// taskCalls returns the calls of the catalogue (and of the cancel phase) that made a task the
// checker could follow (one with a taskId).
func (r *runner) taskCalls() []*call {
	var out []*call
	for _, c := range r.calls {
		if c.task != nil && c.task.id != "" {
			out = append(out, c)
		}
	}
	return out
}

func names(cs []*call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.tool.name)
	}
	sort.Strings(out)
	return dedupe(out)
}

// judgeTasks judges each task with fn (a problem or ""): it fails (or warns, for a SHOULD) on
// the first problem, and skips with why when there is no task.
func (r *runner) judgeTasks(id, title string, cs []*call, why string, fn func(c *call) string) {
	level := Must
	if rule, ok := ruleOf(id); ok {
		level = rule.Level
	}
	r.judgeTasksAt(level, id, title, cs, why, fn)
}

// judgeTasksAt is judgeTasks at a level other than the rule's.
func (r *runner) judgeTasksAt(level Level, id, title string, cs []*call, why string, fn func(c *call) string) {
	if len(cs) == 0 {
		r.add(id, title, Skip, why)
		return
	}
	for _, c := range cs {
		if p := fn(c); p != "" {
			r.verdictAt(level, id, title, c.tool.name+": "+p, c.tool.name)
			return
		}
	}
	r.verdictAt(level, id, title, "", names(cs)...)
}

func (r *runner) judgeModern(ctx context.Context) {
	tasks := r.taskCalls()
	none := r.noTasks()
	var created []*call
	for _, c := range r.calls {
		if c.task != nil {
			created = append(created, c)
		}
	}
	// B24: EXT-SCHEMA CreateTaskResult.
	r.judgeTasks("B24", "CreateTaskResult is flat, with taskId, status, timestamps and ttlMs, and no legacy keys", created, none,
		func(c *call) string { return createShape(c.task.create) })

	r.judgeTasks("B36", "task ids look unguessable", tasks, none,
		func(c *call) string { return entropy(c.task.id) })

	// B25: EXT §Task Creation: task creation is strongly consistent.
	r.judgeTasks("B25", "tasks/get right after creation succeeds", tasks, none, func(c *call) string {
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
	})

	// B26: EXT §Task Polling → Response.
	r.judgeTasks("B26", "tasks/get carries the variant's field: inputRequests, result or error", tasks, none, func(c *call) string {
		for _, p := range c.task.polls {
			if p.msg != nil && p.msg.Result != nil {
				if pb := getVariant(p.msg.Result); pb != "" {
					return pb
				}
			}
		}
		return ""
	})

	r.judgeTransitions("B33", "status transitions follow the graph; a terminal status never changes", tasks, none)
	r.judgeStable("B33b", "a finished task polled again keeps its status and its result", tasks, none)
	r.judgeExpiry("B38", "a task stays retrievable until its ttlMs has passed (may discard after)", tasks, none)
	r.judgeIsErrorModern(tasks, none)
	r.judgeInputModern(tasks, none)
	r.judgeNoExt(none)
	r.judgeCancelModern(ctx, none)
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

// judgeTransitions checks every task's statuses against the state machine.
func (r *runner) judgeTransitions(id, title string, tasks []*call, none string) {
	r.judgeTasks(id, title, tasks, none, func(c *call) string {
		c.task.mu.Lock()
		seq := append(append([]string(nil), c.task.statuses...), c.task.afterCancel...)
		c.task.mu.Unlock()
		return transitions(seq)
	})

}

// transitions checks a sequence of observed statuses against the state machine, and that a
// terminal status never changes.
func transitions(seq []string) string {
	allowed := map[string][]string{
		"working":        {"working", "input_required", "completed", "failed", "cancelled"},
		"input_required": {"input_required", "working", "completed", "failed", "cancelled"},
	}
	for i := 1; i < len(seq); i++ {
		from, to := seq[i-1], seq[i]
		if rpc.TaskStatus(from).Terminal() {
			if to != from {
				return fmt.Sprintf("the terminal status %s changed to %s (statuses seen: %s)", from, to, strings.Join(seq, " -> "))
			}
			continue
		}
		if !contains(allowed[from], to) {
			return fmt.Sprintf("%s -> %s is not in the state machine (statuses seen: %s)", from, to, strings.Join(seq, " -> "))
		}
	}
	return ""
}

// judgeStable checks that the polls of a finished task agree with each other.
func (r *runner) judgeStable(id, title string, tasks []*call, none string) {
	var finished []*call
	for _, c := range tasks {
		n := 0
		for _, p := range c.task.polls {
			if rpc.TaskStatus(p.status).Terminal() {
				n++
			}
		}
		if n >= 2 {
			finished = append(finished, c)
		}
	}
	if len(finished) == 0 && len(tasks) > 0 {
		none = "no finished task could be polled twice"
	}
	r.judgeTasks(id, title, finished, none, func(c *call) string {
		var first *poll
		for i := range c.task.polls {
			p := &c.task.polls[i]
			if !rpc.TaskStatus(p.status).Terminal() {
				continue
			}
			if first == nil {
				first = p
				continue
			}
			if p.status != first.status {
				return ""
			}
			for _, k := range []string{"result", "error"} {
				a, b := obj(first.msg.Result)[k], obj(p.msg.Result)[k]
				if string(compact(a)) != string(compact(b)) {
					return fmt.Sprintf("the %s of the %s task was %s, then %s", k, p.status, quote(a), quote(b))
				}
			}
		}
		return ""
	})

}

// judgeExpiry warns when a task became unknown before its TTL had passed. The spec says a
// server "may discard" a task after its TTL; before that, discarding it is not forbidden in so
// many words, so it is a warning (PROTOCOL.md §6 rule 38; the conformance suite fails it).
func (r *runner) judgeExpiry(id, title string, tasks []*call, none string) {
	var polled []*call
	for _, c := range tasks {
		if c.task.vanished != nil || len(c.task.polls) >= 2 {
			polled = append(polled, c)
		}
	}
	r.judgeTasks(id, title, polled, none, func(c *call) string {
		t := c.task
		if t.vanished == nil {
			return ""
		}
		if t.ttl == nil {
			return fmt.Sprintf("task %s became unknown (%v) although its ttl is unlimited", t.id, t.vanished)
		}
		age := t.vanishedAt.Sub(t.got)
		if age < *t.ttl {
			return fmt.Sprintf("task %s became unknown (%v) %s after it was created, its ttl being %s", t.id, t.vanished, age.Round(time.Millisecond), *t.ttl)
		}
		return ""
	})

}

// judgeIsErrorModern: EXT §Task Execution Errors: a tool result with isError ends completed
// with that result; failed is only for JSON-RPC errors. A tool error is recognised in the
// task's own result, or in the result the same call gave without a task.
func (r *runner) judgeIsErrorModern(tasks []*call, none string) {
	const id, title = "B27", "a tool result with isError ends completed with that result, not failed"
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
	r.judgeTasks(id, title, ev, none, func(c *call) string {
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
	r.judgeTasks("B28d", "tasks/update returns an empty ack with resultType complete", asked, none, func(c *call) string {
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

	r.judgeTasks("B32", "inputRequests keys keep their request, and ask only for what the client declared", asked, none, func(c *call) string {
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
	r.judgeTasks("B22", "tools/call without the extension declared never returns a task", plain, none, func(c *call) string {
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
	r.judgeTasks("B22b", "a tool that runs only as a task, called without the extension, is refused with -32021 naming it (HTTP 400)", refused, none, func(c *call) string {
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

// ---------------------------------------------------------------------------------------------
// Cancellation (both eras)

// cancelPhase cancels every task still working after the catalogue; when none is, it calls
// the slowest task tool again and cancels its task at once. It also cancels a finished task.
func (r *runner) cancelPhase(ctx context.Context) {
	var running []*call
	var slowest *call
	for _, c := range r.taskCalls() {
		t := c.task
		if t.long {
			running = append(running, c)
			continue
		}
		// The slowest task that ran at all, one that completes before one that fails.
		if t.terminal() != "" && len(t.polls) > 0 && !rpc.TaskStatus(t.polls[0].status).Terminal() && !t.asked {
			better := slowest == nil ||
				(t.terminal() == "completed") != (slowest.task.terminal() == "completed") && t.terminal() == "completed" ||
				(t.terminal() == "completed") == (slowest.task.terminal() == "completed") && c.dur > slowest.dur
			if better {
				slowest = c
			}
		}
	}
	if len(running) == 0 && slowest != nil && r.budgetLeft(ctx) {
		nc := r.callTool(ctx, slowest.tool, slowest.args, false)
		nc.again = true
		if nc.task != nil {
			nc.task.long = true
			r.mu.Lock()
			r.calls = append(r.calls, nc)
			r.mu.Unlock()
			running = append(running, nc)
		}
	}
	var wg sync.WaitGroup
	for _, c := range running {
		c := c
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cancel(ctx, c)
		}()
	}
	wg.Wait()
}

// cancel sends tasks/cancel for c's task and follows it a little while after.
func (r *runner) cancel(ctx context.Context, c *call) {
	t := c.task
	m, err := r.send(ctx, "tasks/cancel", map[string]any{"taskId": t.id}, req{})
	t.mu.Lock()
	t.cancelMsg, t.cancelErr = m, err
	t.mu.Unlock()
	if err != nil || m.Error != nil {
		return
	}
	if !r.modern {
		if st := str(obj(m.Result)["status"]); st != "" {
			t.mu.Lock()
			t.afterCancel = append(t.afterCancel, st)
			t.mu.Unlock()
		}
	}
	// EXT §Task Cancellation: eventually consistent; 2025-11-25: cancelled before the answer.
	end := time.Now().Add(r.longAfter(t.poll))
	for i := 0; i < 50 && time.Now().Before(end); i++ {
		g, err := r.send(ctx, "tasks/get", map[string]any{"taskId": t.id}, req{})
		if err != nil || g.Error != nil {
			return
		}
		st := str(obj(g.Result)["status"])
		t.mu.Lock()
		t.afterCancel = append(t.afterCancel, st)
		n := len(t.afterCancel)
		t.mu.Unlock()
		// 2025-11-25: the task MUST remain cancelled (C25-TASKS §Task Cancellation): watch it
		// for several polls, not only the first.
		if rpc.TaskStatus(st).Terminal() && (n >= 2 && r.modern || n >= terminalWatch) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollDelay(t)):
		}
	}
}

func (r *runner) cancelled() []*call {
	var out []*call
	for _, c := range r.taskCalls() {
		if c.task.cancelMsg != nil || c.task.cancelErr != nil {
			out = append(out, c)
		}
	}
	return out
}

// finished returns a task of the catalogue that ended completed or failed and was not
// cancelled.
func (r *runner) finished() *call {
	for _, c := range r.taskCalls() {
		if st := c.task.terminal(); (st == "completed" || st == "failed") && c.task.cancelMsg == nil && c.task.vanished == nil && !c.task.long {
			return c
		}
	}
	return nil
}

func (r *runner) judgeCancelModern(ctx context.Context, none string) {
	cs := r.cancelled()
	if len(cs) == 0 && len(r.taskCalls()) > 0 {
		none = "no tool's task was still working when it could be cancelled"
	}
	r.judgeTasks("B28", "tasks/cancel returns an empty ack with resultType complete", cs, none, func(c *call) string {
		if c.task.cancelErr != nil || c.task.cancelMsg.Error != nil {
			return "tasks/cancel of a working task got " + describe(c.task.cancelMsg, c.task.cancelErr)
		}
		return ack(c.task.cancelMsg.Result)
	})

	// B28c: EXT has no rule for cancelling a finished task: an ack or an error are both
	// allowed; other clients expect the ack, so an error is a warning.
	const id, title = "B28c", "tasks/cancel of a finished task is acknowledged (an error is allowed)"
	f := r.finished()
	if f == nil {
		r.add(id, title, Skip, firstNonEmpty(none, "no task finished"))
		return
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	switch {
	case errors.Is(err, errBudget):
		r.add(id, title, Skip, err.Error())
	case err != nil:
		r.verdict(id, title, err.Error(), f.tool.name)
	case m.Error != nil:
		r.add(id, title, Warn, fmt.Sprintf("%s: cancelling the %s task got %s; the spec allows it (\"Cancellation is cooperative\" and says nothing of finished tasks), but clients such as the official TypeScript SDK and the conformance suite expect the empty ack", f.tool.name, f.task.terminal(), describe(m, nil)), f.tool.name)
	default:
		r.verdict(id, title, ack(m.Result), f.tool.name)
	}
}

// cancelFinished cancels a finished task.
func (r *runner) cancelFinished(ctx context.Context, c *call) (*rpc.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return r.send(ctx, "tasks/cancel", map[string]any{"taskId": c.task.id}, req{})
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Subscriptions (2026-07-28)

// listenRule opens subscriptions/listen for a new task of a tool that completes and checks
// the stream: the acknowledgement comes first and lists the task, and notifications/tasks
// carry full DetailedTasks up to the terminal status (EXT §Task Status Notifications; C26-SUBS).
func (r *runner) listenRule(ctx context.Context) {
	const id, title = "B34", "subscriptions/listen acknowledges first, then pushes full tasks to the end"
	var pick *call
	for _, c := range r.taskCalls() {
		if c.task.terminal() == "completed" && !c.task.asked && (pick == nil || c.dur < pick.dur) {
			pick = c
		}
	}
	if pick == nil {
		r.add(id, title, Skip, firstNonEmpty(ifNot(len(r.taskCalls()) == 0, "no tool's task completes by itself"), r.noTasks()))
		return
	}
	if !r.budgetLeft(ctx) {
		r.add(id, title, Skip, errBudget.Error())
		return
	}
	nc := r.callTool(ctx, pick.tool, pick.args, false)
	if nc.task == nil {
		r.add(id, title, Skip, pick.tool.name+" gave no task the second time: "+nc.seen())
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
		r.add(id, title, Skip, fmt.Sprintf("the server offers no subscriptions (%s)", describe(&rpc.Message{Error: rerr}, nil)))
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case problem != "":
	case ctx.Err() != nil && !done:
		r.add(id, title, Skip, errBudget.Error())
		return
	case !acked:
		problem = fmt.Sprintf("no notifications/subscriptions/acknowledged on the stream (%v)", errOrNothing(err))
	case pushed == 0:
		problem = "no notifications/tasks for the task"
	case !done:
		problem = "the stream never pushed the task's terminal status"
	}
	r.verdict(id, title, problem, pick.tool.name)
}

func errOrNothing(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return "the stream ended"
	}
	return err.Error()
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25

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

func (r *runner) legacyProbes(ctx context.Context) {
	for _, p := range []struct{ id, method string }{{"A7", "tasks/get"}, {"A7b", "tasks/result"}, {"A7c", "tasks/cancel"}} {
		title := "an unknown taskId on " + p.method + " is -32602"
		if !r.legacyCaps.tasks {
			r.add(p.id, title, Skip, r.noTasks())
			continue
		}
		if p.method == "tasks/cancel" && !r.legacyCaps.cancel {
			// Undeclared, tasks/cancel may rightly be -32601: nothing to judge.
			r.add(p.id, title, Skip, "tasks.cancel is not declared")
			continue
		}
		m, err := r.send(ctx, p.method, map[string]any{"taskId": unknownID}, req{})
		r.verdict(p.id, title, r.wantError(m, err, rpc.CodeInvalidParams, 0))
	}
	r.cursorProbe(ctx)
	const a16 = "an invalid MCP-Protocol-Version is refused with 400"
	if !r.o.HTTP {
		r.add("A16", a16, Skip, "stdio has no headers")
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
	r.verdict("A16", a16, ifNot(status == http.StatusBadRequest, "a tools/list with MCP-Protocol-Version: 1999-01-01 got HTTP %d (%s)", status, describe(m, err)))
}

// negotiationProbes: C25-TASKS §Tool-Level Negotiation: a required tool called without task
// is -32601 (A3); a tool without task support called with task SHOULD be -32601 (A3b).
func (r *runner) negotiationProbes(ctx context.Context) {
	const a3, a3b = "a tool with taskSupport required, called without task, is refused with -32601", "a tool without task support, called with task, is refused with -32601 (SHOULD)"
	if !r.legacyCaps.call {
		r.add("A3", a3, Skip, r.noTasks())
		r.add("A3b", a3b, Skip, r.noTasks())
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
		r.add("A3", a3, Skip, "no tool the checker may call has taskSupport required")
	} else {
		m, err := r.send(ctx, "tools/call", map[string]any{"name": required.name, "arguments": required.args}, req{})
		p := r.wantError(m, err, rpc.CodeMethodNotFound, 0)
		if m != nil && m.Error != nil && m.Error.Code == rpc.CodeInvalidRequest {
			p = "" // §Error Handling allows -32600 too (PROTOCOL.md §7 item 14)
		}
		r.verdict("A3", a3, p, required.name)
	}
	if forbidden == nil {
		r.add("A3b", a3b, Skip, "no tool the checker may call lacks task support and answers quickly")
	} else {
		pctx, cancel := context.WithTimeout(ctx, r.longAfter(0))
		m, err := r.send(pctx, "tools/call", map[string]any{"name": forbidden.name, "arguments": forbidden.args, "task": map[string]any{}}, req{})
		cancel()
		if m != nil && m.Result != nil && obj(m.Result)["task"] != nil {
			// Making a task breaks the client-side MUST NOT the server should have refused.
			r.verdictAt(Must, "A3b", a3b, forbidden.name+": a task-augmented call to a tool without task support made a task", forbidden.name)
		} else {
			r.verdict("A3b", a3b, ifNot(err == nil && m.Error != nil && m.Error.Code == rpc.CodeMethodNotFound, "%s: got %s", forbidden.name, describe(m, err)), forbidden.name)
		}
	}
}

func (r *runner) judgeLegacy(ctx context.Context) {
	tasks := r.taskCalls()
	none := r.noTasks()
	// A2: C25-TASKS §Result Retrieval: a receiver that accepts a task-augmented request MUST
	// answer with a CreateTaskResult.
	var augmented []*call
	for _, c := range r.calls {
		if r.legacyCaps.call && (c.tool.support == "optional" || c.tool.support == "required") && !errors.Is(c.err, errBudget) {
			augmented = append(augmented, c)
		}
	}
	r.judgeTasks("A2", "a task-augmented call returns a CreateTaskResult {task:{…}}", augmented, none, func(c *call) string {
		switch {
		case c.task != nil:
			return ""
		case c.plain != nil && obj(c.plain)["taskId"] != nil:
			return "the task is not nested under task: " + quote(c.plain)
		case c.plain != nil:
			return "a task-augmented call was answered with a plain result: " + quote(c.plain)
		}
		return ""
	})

	r.judgeTasks("A4", "the first status of a task is working", tasks, none, func(c *call) string {
		if len(c.task.statuses) > 0 && c.task.statuses[0] != "working" {
			return "the CreateTaskResult says " + c.task.statuses[0]
		}
		return ""
	})

	r.judgeTasks("A5", "tasks carry taskId, status, createdAt, lastUpdatedAt (ISO 8601) and ttl", tasks, none, func(c *call) string {
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
	})

	r.judgeIDs(tasks, none)
	r.judgeTransitions("A6", "status transitions follow the graph; a terminal status never changes", tasks, none)
	r.judgeExpiry("A38", "a task stays retrievable until its ttl has passed (may delete after)", tasks, none)
	r.judgeTasks("A12", "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT)", tasks, none, func(c *call) string {
		for _, p := range c.task.polls {
			if p.msg != nil && p.msg.Result != nil {
				if _, has := obj(obj(p.msg.Result)["_meta"])[rpc.MetaRelatedTask]; has {
					return "tasks/get carries _meta related-task: " + quote(p.msg.Result)
				}
			}
		}
		return r.relatedNote(c.task.id)
	})

	r.judgePayloads(tasks, none)
	r.judgeNotes(tasks, none)
	// A9: C25-TASKS §Related Task Metadata: the tasks/result response carries related-task.
	var paid []*call
	for _, c := range tasks {
		if c.task.payload != nil && c.task.payload.Result != nil {
			paid = append(paid, c)
		}
	}
	if len(paid) == 0 && len(tasks) > 0 {
		none9 := "no task's tasks/result returned a result"
		r.add("A9", "tasks/result returns the result with related-task meta", Skip, none9)
	} else {
		r.judgeTasks("A9", "tasks/result returns the result with related-task meta", paid, none, func(c *call) string {
			var rel struct {
				TaskID string `json:"taskId"`
			}
			_ = json.Unmarshal(obj(obj(c.task.payload.Result)["_meta"])[rpc.MetaRelatedTask], &rel)
			if rel.TaskID != c.task.id {
				return "the tasks/result result lacks _meta related-task {taskId: " + c.task.id + "}: " + quote(c.task.payload.Result)
			}
			return ""
		})

	}
	// A10: C25-TASKS §Task Execution Errors: isError makes the task failed.
	var toolErr []*call
	for _, c := range paid {
		if isErrorResult(c.task.payload.Result) {
			toolErr = append(toolErr, c)
		}
	}
	if len(toolErr) == 0 && len(tasks) > 0 {
		none = "no tool produced a tool error (a result with isError)"
	}
	r.judgeTasks("A10", "a tool result with isError makes the task failed", toolErr, none, func(c *call) string {
		if st := c.task.terminal(); st != "failed" {
			return "tasks/result returned isError: true, but the task ended " + st
		}
		return ""
	})

	none = r.noTasks()
	// A11: C25-TASKS §Input Required Status: requests for a task carry related-task.
	var asked []*call
	for _, c := range tasks {
		if c.task.asked {
			asked = append(asked, c)
		}
	}
	const a11 = "requests sent for a task in input_required carry related-task meta"
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
		r.verdict("A11", a11, joinMax(bad, 2), names(asked)...)
	case len(asked) > 0:
		r.add("A11", a11, Skip, "tasks went input_required, but the server sent no request for them")
	default:
		r.add("A11", a11, Skip, firstNonEmpty(ifNot(len(tasks) == 0, "no tool's task asked for input (input_required)"), none))
	}
	r.metaProbe(ctx, tasks, none)
	r.judgeCancelLegacy(ctx, none)
	r.judgeList(ctx, tasks, none)
}

func (r *runner) judgeCancelLegacy(ctx context.Context, none string) {
	if r.legacyCaps.tasks && !r.legacyCaps.cancel {
		none = "tasks.cancel is not declared"
	}
	cs := r.cancelled()
	if len(cs) == 0 && len(r.taskCalls()) > 0 && none == r.noTasks() {
		none = "no tool's task was still working when it could be cancelled"
	}
	r.judgeTasks("A8", "tasks/cancel answers the task as cancelled, and it stays cancelled", cs, none, func(c *call) string {
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

	const a8b = "tasks/cancel of a finished task is refused with -32602"
	if !r.legacyCaps.cancel {
		r.add("A8b", a8b, Skip, firstNonEmpty(none, r.noTasks()))
		return
	}
	f := r.finished()
	if f == nil {
		r.add("A8b", a8b, Skip, firstNonEmpty(ifNot(len(r.taskCalls()) == 0, "no task finished"), r.noTasks()))
		return
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	r.verdict("A8b", a8b, ifNot(r.wantError(m, err, rpc.CodeInvalidParams, 0) == "", "%s: cancelling the %s task got %s", f.tool.name, f.task.terminal(), describe(m, err)), f.tool.name)
}

// judgeList: C25-TASKS §Task Listing: every task tasks/get can retrieve appears in tasks/list.
func (r *runner) judgeList(ctx context.Context, tasks []*call, none string) {
	const id, title = "A13", "tasks/list shows every task tasks/get can retrieve"
	if r.legacyCaps.tasks && !r.legacyCaps.list {
		r.add(id, title, Skip, "tasks.list is not declared")
		return
	}
	if len(tasks) == 0 {
		r.add(id, title, Skip, none)
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
			r.verdict(id, title, "tasks/list got "+describe(m, err))
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
	r.verdict(id, title, ifNot(len(missing) == 0, "tasks/get retrieves, but tasks/list leaves out: %s", joinMax(missing, 3)), names(judged)...)
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

// ---------------------------------------------------------------------------------------------
// Schemas and resultType (both eras)

func (r *runner) judgeSchema() {
	r.mu.Lock()
	kinds := make([]string, 0, len(r.schemaN))
	for k := range r.schemaN {
		kinds = append(kinds, k)
	}
	n, bad := r.schemaN, r.schemaBad
	rtN, rtBad := r.resultTypeN, r.resultTypeBad
	r.mu.Unlock()
	sort.Strings(kinds)
	prefix := "A0:"
	if r.modern {
		prefix = "B0:"
	}
	for _, k := range kinds {
		title := fmt.Sprintf("%s results match the official schema (%d seen)", k, n[k])
		switch k {
		case "errors":
			title = fmt.Sprintf("error responses match the official schema (%d seen)", n[k])
		case "other":
			title = fmt.Sprintf("other results match the schema's Result (%d seen)", n[k])
		}
		r.verdict(prefix+k, title, ifNot(len(bad[k]) == 0, "%d of %d invalid: %s", len(bad[k]), n[k], joinMax(dedupeSorted(bad[k]), 2)))
	}
	if r.modern && rtN > 0 {
		r.verdict("B18", "every result carries resultType: complete, or task / input_required on tools/call only",
			joinMax(dedupeSorted(rtBad), 3))

	}
}

func dedupeSorted(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// entropy judges whether a task id looks unguessable: long enough and varied.
func entropy(id string) string {
	if len(id) < 16 {
		return fmt.Sprintf("task id %q is only %d characters", id, len(id))
	}
	distinct := map[rune]bool{}
	for _, c := range id {
		distinct[c] = true
	}
	if len(distinct) < 8 {
		return fmt.Sprintf("task id %q uses only %d distinct characters", id, len(distinct))
	}
	return ""
}

// crossEra judges the isError rules of one era on what the other era showed, when the era
// itself could not tell: a tool error is recognised by its result, and a task that reports
// one as failed (2026-07-28) hides it, but the same tool in 2025-11-25 returns it from
// tasks/result; and the other way round.
func crossEra(rep *Report, modern, legacy *runner) {
	if modern == nil || legacy == nil {
		return
	}
	toolErr := func(r *runner) map[string]bool {
		m := map[string]bool{}
		for _, c := range r.taskCalls() {
			if contains(c.shows(r.modern), "tool-error") {
				m[c.tool.name] = true
			}
		}
		return m
	}
	for i := range rep.Results {
		res := &rep.Results[i]
		if res.Status != Skip {
			continue
		}
		var other map[string]bool
		var here *runner
		switch {
		case res.Era == rpc.VersionModern && res.ID == "B27":
			other, here = toolErr(legacy), modern
		case res.Era == rpc.VersionLegacy && res.ID == "A10":
			other, here = toolErr(modern), legacy
		default:
			continue
		}
		var problem string
		var tools []string
		for _, c := range here.taskCalls() {
			if !other[c.tool.name] {
				continue
			}
			st := c.task.terminal()
			tools = append(tools, c.tool.name)
			switch {
			case here.modern && st == "failed":
				problem = fmt.Sprintf("%s: a tool error (its 2025-11-25 tasks/result returns isError: true) ended failed, want completed with the CallToolResult in result", c.tool.name)
			case !here.modern && st == "completed":
				problem = fmt.Sprintf("%s: a tool error (its 2026-07-28 task completes with isError: true) ended completed, want failed", c.tool.name)
			}
			if problem != "" {
				break
			}
		}
		if len(tools) == 0 {
			continue
		}
		sort.Strings(tools)
		res.Tools = dedupe(tools)
		res.Status, res.Seen = Pass, ""
		if problem != "" {
			res.Status, res.Seen = Fail, short(problem)
		}
	}
}

// cleanUp cancels, best effort and briefly, the tasks the checker leaves working (the budget
// ended their following before the cancel phase reached them), so a check leaves no work
// running on the server.
func (r *runner) cleanUp() {
	if (r.modern && !r.extension) || (!r.modern && !r.legacyCaps.cancel) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range r.taskCalls() {
		t := c.task
		t.mu.Lock()
		done := t.terminal() != "" || t.cancelMsg != nil || len(t.afterCancel) > 0
		t.mu.Unlock()
		if !done && ctx.Err() == nil {
			_, _ = r.send(ctx, "tasks/cancel", map[string]any{"taskId": t.id}, req{})
		}
	}
}
