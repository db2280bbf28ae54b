package check

// This file holds the rules of 2026-07-28 with the tasks extension (rules2026) and the flow
// of the era: discovery, the probes that need no tool, the task probes, subscriptions and the
// judgement of what the tools showed. rules.go holds what both eras share.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// rules2026 are the 2026-07-28 rules, in report order. Each is one value: what the catalogue says
// of it (docs/guide/check.md lists it), and how it is judged: in which phase of the era's
// run, on what evidence, and how (judge.go).
var rules2026 = []Rule{
	{ID: "B0", Era: "2026-07-28", Title: "every answer matches the official schema", Doc: "every answer matches the official schema (one result per kind: B0:server/discover, B0:tools/call, B0:errors, …)",
		Section: "C26-SCHEMA; EXT-SCHEMA", Needs: "nothing; each tool call adds answers to validate"},
	{ID: "B17", Era: "2026-07-28", Title: "server/discover returns resultType complete and supportedVersions", Alt: "server/discover answers",
		Section: "C26-DISC", Needs: needsNothing,
		phase: onDeclared, whole: discoverAnswers},
	{ID: "B17b", Era: "2026-07-28", Title: "tasks extension declared in capabilities.extensions with {}", Doc: "the tasks extension is declared with {}; a server that does not declare it yet answers a tools/call (sent with it declared) with a task fails, and the task rules run on its tasks; a half-modern server (2026-07-28 listed, only the 2025-11-25 tasks capability) is a warning",
		Section: "EXT §Capability Negotiation; SEP-2663 §Backward Compatibility", Needs: needsNothing + "; for a server that does not declare it, the catalogue's calls (every tool is called with the extension declared)",
		phase: onTasks, whole: extensionDeclared},
	{ID: "B17c", Era: "2026-07-28", Title: "server/discover carries _meta serverInfo (SHOULD)", Doc: "server/discover carries _meta serverInfo (SHOULD: a warning)",
		Section: "C26-DISC", Needs: needsNothing, Level: Should,
		phase: onDeclared, whole: onDiscover(serverInfo)},
	{ID: "B17d", Era: "2026-07-28", Title: "server/discover carries the cache hints ttlMs and cacheScope",
		Section: "C26-SCHEMA DiscoverResult (CacheableResult); C26-DISC", Needs: needsNothing,
		phase: onDeclared, whole: onDiscover(func(d *discovered) finding { return found(cacheHints(d.result)) })},
	{ID: "B17e", Era: "2026-07-28", Title: "every list result carries the cache hints ttlMs and cacheScope: tools/list, and prompts/list, resources/list and resources/templates/list when declared",
		Section: "C26-SCHEMA ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult (CacheableResult)", Needs: needsNothing + "; the prompts and resources lists only when server/discover declares prompts or resources (else named as not judged)",
		phase: onToolList, whole: listHints},
	{ID: "B18", Era: "2026-07-28", Title: "every result carries resultType: complete, or task / input_required on tools/call only",
		Section: "C26-BASIC §Result Responses; EXT §Polymorphic Results", Needs: needsNothing,
		phase: onAnswers, whole: resultTypes},
	{ID: "B18b", Era: "2026-07-28", Title: "a tools/call result that carries a task (taskId and status) says resultType task, never complete",
		Section: "EXT §Polymorphic Results; C26-BASIC §Result Responses", Needs: "any tool the checker may call",
		phase: onAnswers, whole: stampedTasks},
	// B19: C26-BASIC §_meta: protocolVersion and clientCapabilities are required.
	{ID: "B19", Era: "2026-07-28", Title: "a request without _meta clientCapabilities is refused with -32602 (HTTP 400)",
		Section: "C26-BASIC §_meta", Needs: needsNothing,
		phase: beforeTools, probe: &probe{method: "server/discover", q: req{noCaps: true},
			code: rpc.CodeInvalidParams, status: http.StatusBadRequest}},
	// B20: C26-VER: UnsupportedProtocolVersion with data.supported and data.requested.
	{ID: "B20", Era: "2026-07-28", Title: "an unsupported protocol version is refused with -32022, data.supported and data.requested (HTTP 400)",
		Section: "C26-VER; C26-HTTP", Needs: needsNothing,
		phase: beforeTools, probe: &probe{method: "server/discover", q: req{version: badVersion, hdrVersion: badVersion},
			code: rpc.CodeUnsupportedVersion, status: http.StatusBadRequest, judge: unsupportedData}},
	{ID: "B21", Era: "2026-07-28", Title: "a mismatched Mcp-Name on tasks/get is refused with 400 and -32020", Alt: "a mismatched Mcp-Name on tasks/get is refused",
		Section: "C26-HTTP §Server Validation; EXT §Streamable HTTP: Routing Headers", Needs: needsHTTP + "; the tasks extension",
		phase: onTasks, whole: nameMismatch},
	// B21b: C26-HTTP §Protocol Version Header: the header must match _meta.
	{ID: "B21b", Era: "2026-07-28", Title: "an MCP-Protocol-Version header that differs from _meta is refused with 400 and -32020", Alt: "an MCP-Protocol-Version header that differs from _meta is refused",
		Section: "C26-HTTP §Server Validation, §Protocol Version Header", Needs: needsHTTP,
		phase: beforeTools, probe: &probe{skip: needsHeaders, method: "server/discover", q: req{version: badVersion, hdrVersion: rpc.VersionModern},
			code: rpc.CodeHeaderMismatch, status: http.StatusBadRequest}},
	// Removed methods: C26-HTTP: an unknown method is 404 + -32601; SEP-2663 §Backward
	// Compatibility: tasks/result (and tasks/list) MUST get -32601 under 2026-07-28.
	{ID: "B21c", Era: "2026-07-28", Title: "ping, removed in 2026-07-28, is answered 404 and -32601",
		Section: "C26-CHLOG (ping removed); C26-HTTP §Server Validation", Needs: needsNothing,
		phase: beforeTools, probe: &probe{method: "ping", params: map[string]any{},
			code: rpc.CodeMethodNotFound, status: http.StatusNotFound}},
	{ID: "B22", Era: "2026-07-28", Title: "tools/call without the extension declared never returns a task",
		Section: "EXT §Capability Negotiation", Needs: needsTask + " (called again without the extension)",
		phase: onTasks, evidence: plainCalls, judge: noTaskWithoutExtension},
	{ID: "B22b", Era: "2026-07-28", Title: "a tool that runs only as a task, called without the extension, is refused with -32021 naming it (HTTP 400)",
		Section: "EXT §Capability Negotiation; C26-BASIC (MissingRequiredClientCapability)", Needs: "a task tool that refuses to run without the extension",
		phase: onTasks, evidence: refusedCalls, judge: refusedNamingExtension},
	{ID: "B22c", Era: "2026-07-28", Title: "a tools/call with the 2025-11-25 task param and no extension declared is served normally, never with a task",
		Section: "SEP-2663 §Backward Compatibility; EXT §Capability Negotiation", Needs: "a task tool that also runs without the extension (called once more, with the task param)",
		phase: onTasks, whole: legacyTaskParam},
	// B24: EXT-SCHEMA CreateTaskResult.
	{ID: "B24", Era: "2026-07-28", Title: "CreateTaskResult is flat, with taskId, status, timestamps and ttlMs, and no legacy keys",
		Section: "EXT §Task Creation; EXT-SCHEMA CreateTaskResult", Needs: needsTask,
		phase: onTasks, evidence: created, judge: func(_ *runner, c *call) string { return createShape(c.task.create) }},
	{ID: "B24b", Era: "2026-07-28", Title: "ttlMs and pollIntervalMs are integer milliseconds on every task message", Doc: "ttlMs (or null) and pollIntervalMs are integer milliseconds on every task message: CreateTaskResult, tasks/get, notifications/tasks (a negative value is a warning: the schema sets no lower bound, and unlimited is null)",
		Section: "EXT-SCHEMA Task (ttlMs, pollIntervalMs); EXT §Tasks", Needs: needsTask,
		phase: onAnswers, whole: integerMs},
	// B25: EXT §Task Creation: task creation is strongly consistent.
	{ID: "B25", Era: "2026-07-28", Title: "tasks/get right after creation succeeds",
		Section: "EXT §Task Creation", Needs: needsTask,
		phase: onTasks, judge: consistent},
	// B26: EXT §Task Polling → Response.
	{ID: "B26", Era: "2026-07-28", Title: "tasks/get carries the variant's field: inputRequests, result or error",
		Section: "EXT §Task Polling; §Task Execution Errors", Needs: needsTask,
		phase: onTasks, judge: variants},
	{ID: "B27", Era: "2026-07-28", Title: "a tool result with isError ends completed with that result, not failed",
		Section: "EXT §Task Execution Errors", Needs: needsToolErr + ", as a task",
		phase: onTasks, evidence: toolErrorTasks, judge: endsCompleted},
	// B28: EXT §Task Cancellation.
	{ID: "B28", Era: "2026-07-28", Title: "tasks/cancel returns an empty ack with resultType complete",
		Section: "EXT §Task Cancellation", Needs: needsLong,
		phase: onTasks, evidence: cancelledTasks, judge: cancelAck, exchange: cancelErr},
	{ID: "B28b", Era: "2026-07-28", Title: "tasks/cancel of an unknown task is -32602 (SHOULD)", Doc: "tasks/cancel of an unknown task is -32602 (SHOULD: a warning)",
		Section: "EXT §Task Cancellation", Needs: "the tasks extension", Level: Should,
		phase: onTasks, probe: &probe{skip: needsExtension, method: "tasks/cancel", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeInvalidParams}},
	{ID: "B28c", Era: "2026-07-28", Title: "tasks/cancel of a finished task is acknowledged (an error is allowed)", Doc: "tasks/cancel of a finished task is acknowledged (an error is allowed: a warning)",
		Section: "EXT §Task Cancellation", Needs: needsFinished,
		phase: onTasks, whole: cancelFinishedModern},
	{ID: "B28e", Era: "2026-07-28", Title: "a task cancelled while working ends cancelled (it may still end completed or failed)", Doc: "a task cancelled while working ends cancelled (a warning when it ends completed or failed: the spec allows it, the conformance suite's sep-2663-tasks-get-status-cancelled fails it)",
		Section: "EXT §Task Cancellation", Needs: needsLong, Level: Should,
		phase: onTasks, evidence: cancelledTasks, judge: cancelEnds},
	{ID: "B28d", Era: "2026-07-28", Title: "tasks/update returns an empty ack with resultType complete",
		Section: "EXT §Task Update Requests", Needs: needsInput,
		phase: onTasks, evidence: askedTasks, judge: updateAcks, exchange: updateErr},
	{ID: "B28f", Era: "2026-07-28", Title: "a task whose every input request tasks/update answered leaves input_required",
		Section: "EXT §Task Update Requests; EXT §Task Status", Needs: needsInput,
		phase: onTasks, evidence: askedTasks, judge: answeredAdvances},
	{ID: "B29", Era: "2026-07-28", Title: "an unknown taskId on tasks/get is -32602",
		Section: "EXT §Protocol Errors", Needs: "the tasks extension",
		phase: onTasks, probe: &probe{skip: needsExtension, method: "tasks/get", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeInvalidParams}},
	{ID: "B29b", Era: "2026-07-28", Title: "tasks/update of an unknown task is -32602 (SHOULD)", Doc: "tasks/update of an unknown task is -32602 (SHOULD: a warning)",
		Section: "EXT §Protocol Errors; EXT §Task Update Requests", Needs: "the tasks extension", Level: Should,
		phase: onTasks, probe: &probe{skip: needsExtension, method: "tasks/update", params: map[string]any{"taskId": unknownID, "inputResponses": map[string]any{}},
			code: rpc.CodeInvalidParams}},
	{ID: "B30", Era: "2026-07-28", Title: "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021 (HTTP 400)", Alt: "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021",
		Section: "EXT §Protocol Errors; C26-BASIC (MissingRequiredClientCapability)", Needs: "the tasks extension",
		phase: onTasks, whole: withoutExtension},
	{ID: "B30b", Era: "2026-07-28", Title: "subscriptions/listen for task ids without the extension declared is -32021 (HTTP 400)", Alt: "subscriptions/listen for task ids without the extension declared is refused",
		Section: "EXT §Task Status Notifications; EXT §Protocol Errors; C26-SUBS", Needs: "the tasks extension; a server that offers subscriptions",
		phase: onTasks, whole: listenWithoutExtension},
	{ID: "B31", Era: "2026-07-28", Title: "tasks/result, removed in 2026-07-28, is answered 404 and -32601",
		Section: "SEP-2663 §Backward Compatibility; C26-HTTP", Needs: needsNothing,
		phase: beforeTools, probe: &probe{method: "tasks/result", params: map[string]any{"taskId": unknownID},
			code: rpc.CodeMethodNotFound, status: http.StatusNotFound}},
	{ID: "B31a", Era: "2026-07-28", Title: "no 2025-11-25 tasks capability under 2026-07-28",
		Section: "SEP-2663 §Backward Compatibility", Needs: needsNothing,
		phase: onDeclared, whole: onDiscover(noLegacyTasks)},
	{ID: "B31b", Era: "2026-07-28", Title: "tasks/list, removed in 2026-07-28, is answered 404 and -32601",
		Section: "EXT §Supported Methods; SEP-2663 §Backward Compatibility; C26-HTTP", Needs: needsNothing,
		phase: beforeTools, probe: &probe{method: "tasks/list", params: map[string]any{},
			code: rpc.CodeMethodNotFound, status: http.StatusNotFound}},
	{ID: "B32", Era: "2026-07-28", Title: "inputRequests keys keep their request, and ask only for what the client declared",
		Section: "EXT §Task Update Requests; C26-MRTR §Server Requirements", Needs: needsInput,
		phase: onTasks, evidence: askedTasks, judge: inputKeys},
	{ID: "B33", Era: "2026-07-28", Title: "status transitions follow the graph; a terminal status never changes",
		Section: "EXT §Task Status", Needs: needsTask,
		phase: onTasks, judge: seenStatuses},
	{ID: "B33b", Era: "2026-07-28", Title: "a finished task polled again keeps its status and its result",
		Section: "EXT §Task Status; §Task Polling", Needs: needsFinished,
		phase: onTasks, evidence: polledFinished, judge: stable},
	{ID: "B34", Era: "2026-07-28", Title: "subscriptions/listen acknowledges first, then pushes full tasks to the end", Doc: "subscriptions/listen acknowledges first, then pushes full tasks to the end (skipped when the server offers no subscriptions)",
		Section: "EXT §Task Status Notifications; C26-SUBS", Needs: "a tool whose task completes without input",
		phase: afterCancel, whole: listenRule},
	{ID: "B36", Era: "2026-07-28", Title: "task ids look unguessable",
		Section: "EXT §Security Considerations", Needs: needsTask,
		phase: onTasks, judge: func(_ *runner, c *call) string { return entropy(c.task.id) }},
	{ID: "B39", Era: "2026-07-28", Title: "no 2025-11-25 task vocabulary under 2026-07-28: no notifications/tasks/status, no related-task _meta, no task object beside resultType", Doc: "no 2025-11-25 task vocabulary under 2026-07-28: no notifications/tasks/status (the extension's notification is notifications/tasks), no io.modelcontextprotocol/related-task _meta, no 2025-11-25 task object in a tools/call result that is not a CreateTaskResult",
		Section: "EXT §Task Status Notifications; EXT §Reservations; SEP-2663 §Backward Compatibility", Needs: needsNothing + "; each answer and notification adds to it",
		phase: onAnswers, whole: legacyVocabulary},
	{ID: "B38", Era: "2026-07-28", Title: "a task stays retrievable until its ttlMs has passed (may discard after)", Doc: "a task stays retrievable until its ttlMs has passed (a warning: the spec says \"may discard after\")",
		Section: "EXT §Tasks (ttlMs)", Needs: needsFinished, Level: Should,
		phase: onTasks, evidence: polledTwice, judge: kept},
}

func (r *runner) runModern(ctx context.Context) {
	r.say("discovery", "")
	r.discoverServer(ctx)
	r.judgeAll(ctx, onDeclared)
	r.judgeAll(ctx, beforeTools)
	r.toolsPhase(ctx)
	// A server that does not declare the extension is probed all the same: the catalogue calls
	// every tool with the extension declared, and a task that comes back fails B17b and is
	// judged by the task rules like any other.
	r.undeclared = !r.extension && len(r.taskCalls()) > 0
	if r.offersTasks() {
		r.cancelPhase(ctx)
		r.judgeAll(ctx, afterCancel)
	}
	r.judgeAll(ctx, onTasks)
}

// discovered is what server/discover answered, read once for the discovery rules.
type discovered struct {
	answer *rpc.Message // nil when the exchange failed (err)
	err    error
	// result is the answer's result when it is one; nil when server/discover is unanswered.
	result            json.RawMessage
	SupportedVersions []string `json:"supportedVersions"`
	Capabilities      struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
		Tasks      json.RawMessage            `json:"tasks"`
	} `json:"capabilities"`
	Meta map[string]json.RawMessage `json:"_meta"`
}

// legacyTasks says whether server/discover declares the 2025-11-25 tasks capability.
func (d *discovered) legacyTasks() bool {
	return len(d.Capabilities.Tasks) > 0 && string(d.Capabilities.Tasks) != "null"
}

// discoverServer sends server/discover and keeps its answer; the server offers tasks when it
// declares the extension.
func (r *runner) discoverServer(ctx context.Context) {
	d, err := r.send(ctx, "server/discover", nil, req{})
	r.disc = discovered{answer: d, err: err}
	if err != nil || d.Error != nil {
		return
	}
	r.disc.result = d.Result
	_ = json.Unmarshal(d.Result, &r.disc)
	_, r.extension = r.disc.Capabilities.Extensions[rpc.TasksExtension]
}

// serverInfo judges B17c: server/discover carries _meta serverInfo.
func serverInfo(d *discovered) finding {
	return found(ifNot(d.Meta[rpc.MetaServerInfo] != nil, "no _meta[%q] in %s", rpc.MetaServerInfo, quote(d.result)))
}

// noLegacyTasks judges B31a: SEP-2663: legacy tasks capabilities are not advertised under
// 2026-07-28 (judged only beside the extension; B17b judges a server without it).
func noLegacyTasks(d *discovered) finding {
	if _, ok := d.Capabilities.Extensions[rpc.TasksExtension]; !ok {
		return finding{omit: true}
	}
	return found(ifNot(!d.legacyTasks(), "capabilities.tasks = %s next to the extension", quote(d.Capabilities.Tasks)))
}

// onDiscover judges a rule on the answer of server/discover, and gives no result without one.
func onDiscover(fn func(d *discovered) finding) func(context.Context, *runner, evidence) finding {
	return func(_ context.Context, r *runner, _ evidence) finding {
		if r.disc.result == nil {
			return finding{omit: true}
		}
		return fn(&r.disc)
	}
}

// discoverAnswers judges B17: server/discover answers with resultType complete and lists
// 2026-07-28 among its supportedVersions.
func discoverAnswers(_ context.Context, r *runner, _ evidence) finding {
	d := &r.disc
	if d.result == nil {
		f := failed(d.err)
		if d.err == nil {
			f = found(describe(d.answer, nil))
		}
		f.alt = true
		return f
	}
	res := obj(d.result)
	switch {
	case str(res["resultType"]) != "complete":
		return found(fmt.Sprintf("resultType is %s, want \"complete\"", quote(res["resultType"])))
	case !contains(d.SupportedVersions, rpc.VersionModern):
		return found(fmt.Sprintf("supportedVersions %v lacks %s", d.SupportedVersions, rpc.VersionModern))
	}
	return found("")
}

// extensionDeclared judges B17b: the tasks extension is declared with {}; and a server that
// does not declare it but serves tasks when a client declares it anyway fails: hosts that
// follow EXT §Capability Negotiation (they use tasks only when the server declares the
// extension) never see them.
func extensionDeclared(_ context.Context, r *runner, _ evidence) finding {
	d := &r.disc
	if d.result == nil {
		return finding{omit: true}
	}
	ext, ok := d.Capabilities.Extensions[rpc.TasksExtension]
	served := ""
	if r.undeclared {
		served = names(r.taskCalls())[0]
	}
	switch {
	case ok:
		return found(ifNot(string(compact(ext)) == "{}", "the settings object is %s, want {} (TasksExtensionCapability is Record<string, never>)", quote(ext)))
	case served != "":
		return found(fmt.Sprintf("server/discover does not declare the %s extension, yet %s answered with a task when called with it declared: hosts that follow the spec use a server's tasks only when it declares the extension, so they never see these", rpc.TasksExtension, served), served)
	case d.legacyTasks():
		// Half-modern: it lists 2026-07-28 but offers tasks only the 2025-11-25 way. A
		// 2026-07-28 client gets no task from it (and a task-only tool fails); tasks work only
		// after initialize. Not a broken rule of 2026-07-28 (extensions are optional), but
		// almost certainly not what the author meant.
		return finding{status: Warn, seen: fmt.Sprintf("half-modern: server/discover lists %s and the 2025-11-25 capability tasks = %s, but not the %s extension; 2026-07-28 clients get no tasks from it (tasks work only through initialize, 2025-11-25), and SEP-2663 says legacy tasks capabilities are not advertised under 2026-07-28",
			rpc.VersionModern, quote(d.Capabilities.Tasks), rpc.TasksExtension)}
	}
	return skipped(r.noTasks() + ", so the task rules cannot run")
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
	case !wholeNonNegative(ttl):
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

// badVersion is a protocol version no server speaks.
const badVersion = "1999-01-01"

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
func listHints(ctx context.Context, r *runner, _ evidence) finding {
	var bad []string
	var errs []error
	judge := func(method string, pages []*rpc.Message, err error) {
		if len(pages) == 0 {
			bad = append(bad, method+": "+describeErr(err))
			errs = append(errs, err)
			return
		}
		for i, p := range pages {
			if pb := cacheHints(p.Result); pb != "" {
				bad = append(bad, fmt.Sprintf("%s page %d: %s", method, i+1, pb))
			}
		}
	}
	judge("tools/list", r.toolPages, r.toolsErr)
	var caps struct {
		Prompts   json.RawMessage `json:"prompts"`
		Resources json.RawMessage `json:"resources"`
	}
	_ = json.Unmarshal(obj(r.disc.result)["capabilities"], &caps)
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
		return finding{status: Pass, seen: "not judged: " + strings.Join(notJudged, "; ")}
	}
	return found(problem).from(errors.Join(errs...))
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

// needsExtension skips a task probe when the server does not declare the extension.
func needsExtension(r *runner) string { return ifNot(r.offersTasks(), "%s", r.noTasks()) }

// taskID is the id of the first task the catalogue made, or one the server never gave.
func (ev evidence) taskID() string {
	if len(ev.tasks) > 0 {
		return ev.tasks[0].task.id
	}
	return unknownID
}

// nameMismatch judges B21: a tasks/get whose Mcp-Name names another task is refused.
func nameMismatch(ctx context.Context, r *runner, ev evidence) finding {
	switch {
	case !r.offersTasks():
		return skipped(r.noTasks())
	case !r.o.HTTP:
		return finding{status: Skip, seen: "stdio has no headers", alt: true}
	}
	id := ev.taskID()
	m, err := r.send(ctx, "tasks/get", map[string]any{"taskId": id}, req{name: "wrong-" + id})
	if err != nil {
		return failed(err)
	}
	return found(r.wantError(m, nil, rpc.CodeHeaderMismatch, http.StatusBadRequest))
}

// withoutExtension judges B30: EXT §Protocol Errors: tasks/* from a client that did not
// declare the extension are refused.
func withoutExtension(ctx context.Context, r *runner, ev evidence) finding {
	if !r.offersTasks() {
		return finding{status: Skip, seen: r.noTasks(), alt: true}
	}
	id := ev.taskID()
	var bad []string
	var errs []error
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
		errs = append(errs, err)
	}
	return found(strings.Join(bad, "; ")).from(errors.Join(errs...))
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

// toolErrorTasks selects the tasks of a tool error (B27): EXT §Task Execution Errors: a tool
// result with isError ends completed with that result; failed is only for JSON-RPC errors. A
// tool error is recognised in the task's own result, or in the result the same call gave
// without a task.
func toolErrorTasks(_ *runner, ev evidence) ([]*call, string) {
	var cs []*call
	for _, c := range ev.tasks {
		if c.shows(true) != nil && contains(c.shows(true), "tool-error") {
			cs = append(cs, c)
			continue
		}
		if pc := c.tool.plainCall; pc != nil && pc.plain != nil && isErrorResult(pc.plain) && c.task.terminal() != "" {
			cs = append(cs, c)
		}
	}
	return ev.or(cs, "no tool produced a tool error (a result with isError)")
}

// endsCompleted checks that a tool error's task completed with isError (B27).
func endsCompleted(_ *runner, c *call) string {
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
}

// askedTasks selects the tasks that asked for input (B28d, B32).
func askedTasks(_ *runner, ev evidence) ([]*call, string) {
	var asked []*call
	for _, c := range ev.tasks {
		if c.task.asked {
			asked = append(asked, c)
		}
	}
	return ev.or(asked, "no tool's task asked for input (input_required)")
}

// updateAcks checks that every tasks/update was acknowledged (B28d).
func updateAcks(_ *runner, c *call) string {
	for i, m := range c.task.updates {
		if err := c.task.updateErr[i]; err != nil || m.Error != nil {
			return "tasks/update got " + describe(m, err)
		}
		if p := ack(m.Result); p != "" {
			return "tasks/update: " + p
		}
	}
	return ""
}

// updateErr is the error of the tasks/update exchanges of c's task (B28d).
func updateErr(c *call) error { return errors.Join(c.task.updateErr...) }

// inputKeys checks that inputRequests keys keep their request and ask only for what the
// checker declared: elicitation (B32).
func inputKeys(_ *runner, c *call) string {
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

// plainCalls selects the calls made without the extension declared, that the budget did not
// cut (B22): EXT §Capability Negotiation: without the extension declared a tools/call MUST
// NOT produce a task.
func plainCalls(r *runner, ev evidence) ([]*call, string) {
	var plain []*call
	for _, t := range r.tools {
		if t.plainCall != nil && !errors.Is(t.plainCall.err, errBudget) {
			plain = append(plain, t.plainCall)
		}
	}
	return plain, ev.none
}

// noTaskWithoutExtension checks that a call without the extension made no task (B22).
func noTaskWithoutExtension(_ *runner, c *call) string {
	if c.task != nil {
		return "returned a task (" + quote(c.task.create) + ") to a request that did not declare " + rpc.TasksExtension
	}
	return ""
}

// refusedCalls selects the calls without the extension that were refused although the tool
// runs as a task (B22b).
func refusedCalls(r *runner, ev evidence) ([]*call, string) {
	plain, none := plainCalls(r, ev)
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
	return refused, none
}

// refusedNamingExtension checks that a tool that runs only as a task, called without the
// extension, is refused with -32021 naming the extension (B22b).
func refusedNamingExtension(r *runner, c *call) string {
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
}

// cancelledTasks selects the tasks the cancel phase cancelled (B28).
func cancelledTasks(r *runner, ev evidence) ([]*call, string) {
	return ev.or(r.cancelled(), "no tool's task was still working when it could be cancelled")
}

// cancelErr is the error of the tasks/cancel exchange of c's task (B28, A8).
func cancelErr(c *call) error { return c.task.cancelErr }

// cancelAck checks that tasks/cancel of a working task was an empty ack (B28).
func cancelAck(_ *runner, c *call) string {
	if c.task.cancelErr != nil || c.task.cancelMsg.Error != nil {
		return "tasks/cancel of a working task got " + describe(c.task.cancelMsg, c.task.cancelErr)
	}
	return ack(c.task.cancelMsg.Result)
}

// cancelFinishedModern judges B28c: EXT has no rule for cancelling a finished task: an ack or
// an error are both allowed; other clients expect the ack, so an error is a warning.
func cancelFinishedModern(ctx context.Context, r *runner, ev evidence) finding {
	f := r.finished()
	if f == nil {
		_, why := cancelledTasks(r, ev)
		return skipped(firstNonEmpty(why, "no task finished"))
	}
	m, err := r.cancelFinished(ctx, f)
	f.task.finishedCancel, f.task.finishedCancelErr = m, err
	switch {
	case errors.Is(err, errBudget):
		return failed(err)
	case err != nil:
		return failed(err, f.tool.name)
	case m.Error != nil:
		return finding{status: Warn, tools: []string{f.tool.name}, seen: fmt.Sprintf("%s: cancelling the %s task got %s; the spec allows it (\"Cancellation is cooperative\" and says nothing of finished tasks), but clients such as the official TypeScript SDK and the conformance suite expect the empty ack", f.tool.name, f.task.terminal(), describe(m, nil))}
	}
	return found(ack(m.Result), f.tool.name)
}

// cancelFinished cancels a finished task.
func (r *runner) cancelFinished(ctx context.Context, c *call) (*rpc.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return r.send(ctx, "tasks/cancel", map[string]any{"taskId": c.task.id}, req{})
}

// listenRule (B34) opens subscriptions/listen for a new task of a tool that completes and
// checks the stream: the acknowledgement comes first and lists the task, and
// notifications/tasks carry full DetailedTasks up to the terminal status (EXT §Task Status
// Notifications; C26-SUBS).
func listenRule(ctx context.Context, r *runner, ev evidence) finding {
	var pick *call
	for _, c := range ev.tasks {
		if c.task.terminal() == "completed" && !c.task.asked && (pick == nil || c.dur < pick.dur) {
			pick = c
		}
	}
	if pick == nil {
		return skipped(firstNonEmpty(ifNot(len(ev.tasks) == 0, "no tool's task completes by itself"), r.noTasks()))
	}
	if !r.budgetLeft(ctx) {
		return failed(errBudget)
	}
	nc := r.callTool(ctx, pick.tool, pick.args, false)
	if nc.task == nil {
		return skipped(pick.tool.name + " gave no task the second time: " + nc.seen())
	}
	lctx, cancel := context.WithTimeout(ctx, r.longAfter(nc.task.poll)+2*pick.dur)
	defer cancel()
	w := &listenWatch{id: nc.task.id, end: cancel, seen: func(raw json.RawMessage) {
		r.mu.Lock()
		r.msFields("notifications/tasks", obj(raw))
		r.mu.Unlock()
	}}
	err := r.c.Listen(lctx, []string{nc.task.id}, &rpc.Subscription{OnAck: w.onAck, OnTask: w.onTask})
	var rerr *rpc.Error
	if errors.As(err, &rerr) && rerr.Code == rpc.CodeMethodNotFound {
		return skipped(fmt.Sprintf("the server offers no subscriptions (%s)", describe(&rpc.Message{Error: rerr}, nil)))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.problem == "" && ctx.Err() != nil && !w.done {
		return failed(errBudget)
	}
	return found(w.verdict(err), pick.tool.name)
}

// listenWatch watches one subscriptions/listen stream for one task.
type listenWatch struct {
	id  string
	end context.CancelFunc // ends the stream once the task ended
	// seen is given every pushed task (B24b judges its fields).
	seen func(raw json.RawMessage)

	mu      sync.Mutex
	problem string
	acked   bool
	pushed  int
	done    bool
}

func (w *listenWatch) onAck(ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.acked = true
	if !contains(ids, w.id) && w.problem == "" {
		w.problem = fmt.Sprintf("the acknowledgement lists %v, not the task %s", ids, w.id)
	}
}

func (w *listenWatch) onTask(t *rpc.Task) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushed++
	if w.seen != nil {
		w.seen(t.Raw)
	}
	if !w.acked && w.problem == "" {
		w.problem = "a notifications/tasks came before notifications/subscriptions/acknowledged"
	}
	if p := getVariant(t.Raw); p != "" && w.problem == "" {
		w.problem = "a pushed task is not a full DetailedTask: " + p
	}
	if t.Status.Terminal() {
		w.done = true
		w.end()
	}
}

// verdict says what was wrong with the stream, once it ended with err; w.mu is held.
func (w *listenWatch) verdict(err error) string {
	switch {
	case w.problem != "":
		return w.problem
	case !w.acked:
		return fmt.Sprintf("no notifications/subscriptions/acknowledged on the stream (%v)", errOrNothing(err))
	case w.pushed == 0:
		return "no notifications/tasks for the task"
	case !w.done:
		return "the stream never pushed the task's terminal status"
	}
	return ""
}

func errOrNothing(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return "the stream ended"
	}
	return err.Error()
}

// ---------------------------------------------------------------------------------------------
// What released SDKs and servers get wrong (B18b, B24b, B28e, B28f, B30b, B39)

// wireShapes records, for B18b, B24b and B39, what one 2026-07-28 result shows; r.mu is held.
func (r *runner) wireShapes(method string, res json.RawMessage) {
	m := obj(res)
	rt := str(m["resultType"])
	if rel, ok := obj(m["_meta"])[rpc.MetaRelatedTask]; ok {
		r.vocab = append(r.vocab, fmt.Sprintf("%s result carries _meta[%q] = %s, a 2025-11-25 key the extension does not use", method, rpc.MetaRelatedTask, quote(rel)))
	}
	if method != "tools/call" {
		if method == "tasks/get" {
			r.msFields(method, m)
		}
		return
	}
	r.toolRes++
	switch {
	case rt == "task":
		r.msFields(method, m)
	case m["task"] != nil:
		// A hybrid: the 2025-11-25 CreateTaskResult's task object on a result that is not a
		// 2026-07-28 CreateTaskResult.
		r.vocab = append(r.vocab, fmt.Sprintf("a tools/call result with resultType %s carries a 2025-11-25 task object: %s", quote(m["resultType"]), quote(m["task"])))
	}
	if rt == "complete" && m["taskId"] != nil && m["status"] != nil {
		r.stamped = append(r.stamped, fmt.Sprintf("a tools/call result carries the task %s (status %s) but says resultType \"complete\"%s: a client takes it as the tool's result and never polls the task",
			quote(m["taskId"]), quote(m["status"]), map[bool]string{true: " with empty content", false: ""}[string(compact(m["content"])) == "[]"]))
	}
}

// msFields judges the integer millisecond fields of one task message (B24b); r.mu is held.
func (r *runner) msFields(where string, m map[string]json.RawMessage) {
	r.msN++
	for _, k := range []string{"ttlMs", "pollIntervalMs"} {
		raw, ok := m[k]
		if !ok || (k == "ttlMs" && string(compact(raw)) == "null") {
			continue
		}
		whole, negative := intMs(raw)
		switch {
		case !whole:
			want := "an integer"
			if k == "ttlMs" {
				want = "an integer or null"
			}
			r.msBad = append(r.msBad, fmt.Sprintf("%s: %s is %s, want %s of milliseconds", where, k, quote(raw), want))
		case negative:
			r.msNeg = append(r.msNeg, fmt.Sprintf("%s: %s is %s", where, k, quote(raw)))
		}
	}
}

// wholeNonNegative says whether raw is a JSON integer >= 0 (the cache hints' ttlMs).
func wholeNonNegative(raw json.RawMessage) bool {
	whole, negative := intMs(raw)
	return whole && !negative
}

// intMs says whether raw is a JSON integer (JSON Schema's integer: a number with no
// fractional part), and whether it is negative.
func intMs(raw json.RawMessage) (whole, negative bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false, false
	}
	if i, err := n.Int64(); err == nil {
		return true, i < 0
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		return false, false
	}
	return true, f < 0
}

// stampedTasks judges B18b: a task-shaped tools/call result marked complete (how the official
// TypeScript SDK v2 answered a task tool whose handler returned a task without resultType,
// modelcontextprotocol/typescript-sdk#2637).
func stampedTasks(_ context.Context, r *runner, ev evidence) finding {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.toolRes == 0 {
		return skipped(firstNonEmpty(ifNot(len(ev.tasks) == 0, "no tools/call was answered"), ev.none))
	}
	return found(joinMax(dedupeSorted(r.stamped), 2))
}

// integerMs judges B24b on every task message seen.
func integerMs(_ context.Context, r *runner, ev evidence) finding {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.msN == 0:
		return skipped(ev.none)
	case len(r.msBad) > 0:
		return found(joinMax(dedupeSorted(r.msBad), 2))
	case len(r.msNeg) > 0:
		return finding{status: Warn, seen: joinMax(dedupeSorted(r.msNeg), 2) + ": an integer as the schema says, but negative; unlimited is null, and no negative lifetime or interval means anything"}
	}
	return found("")
}

// legacyVocabulary judges B39: the 2025-11-25 names used under the extension (the C# SDK
// 2.0.0-preview.3 sent notifications/tasks/status and the related-task key there).
func legacyVocabulary(_ context.Context, r *runner, _ evidence) finding {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resultTypeN == 0 && len(r.vocab) == 0 {
		return finding{omit: true}
	}
	return found(joinMax(dedupeSorted(r.vocab), 3))
}

// onModernNotify records a 2026-07-28 notification's 2025-11-25 vocabulary (B39).
func (r *runner) onModernNotify(method string, params json.RawMessage) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.vocab) >= 64 {
		return // a flood is judged on what came first
	}
	if method == "notifications/tasks/status" {
		r.vocab = append(r.vocab, "the server sent notifications/tasks/status, the 2025-11-25 notification; under the extension it is notifications/tasks, on a subscriptions/listen stream")
	}
	if rel, ok := p.Meta[rpc.MetaRelatedTask]; ok {
		r.vocab = append(r.vocab, fmt.Sprintf("%s carries _meta[%q] = %s, a 2025-11-25 key the extension does not use", method, rpc.MetaRelatedTask, quote(rel)))
	}
}

// cancelEnds warns when a task cancelled while working ended completed or failed (B28e): EXT
// §Task Cancellation makes cancellation cooperative, so it is allowed; the official suite
// (sep-2663-tasks-get-status-cancelled) fails it, and clients built on it expect cancelled.
func cancelEnds(_ *runner, c *call) string {
	t := c.task
	if t.cancelErr != nil || t.cancelMsg == nil || t.cancelMsg.Error != nil {
		return "" // B28 judges the cancel itself
	}
	t.mu.Lock()
	after := append([]string(nil), t.afterCancel...)
	t.mu.Unlock()
	for _, st := range after {
		if st == "completed" || st == "failed" {
			return fmt.Sprintf("cancelled while working, the task ended %s; the spec allows it (cancellation is cooperative), but the conformance suite's sep-2663-tasks-get-status-cancelled fails it", st)
		}
	}
	return ""
}

// answeredAdvances checks that a task whose every input request was answered through
// tasks/update moved on (B28f): it was not still in input_required, asking what was answered,
// when the checker stopped waiting for it.
func answeredAdvances(r *runner, c *call) string {
	t := c.task
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut || !t.long || t.keyReuse != "" || len(t.updates) == 0 || len(t.statuses) == 0 || t.statuses[len(t.statuses)-1] != "input_required" {
		return ""
	}
	for i, m := range t.updates {
		if t.updateErr[i] != nil || m == nil || m.Error != nil {
			return "" // B28d judges it
		}
	}
	// The last two polls must ask the very same: a server that keeps asking new questions is
	// moving on, however long it takes.
	n := len(t.polls)
	if n < 2 {
		return ""
	}
	lp, prev := &t.polls[n-1], &t.polls[n-2]
	if lp.msg == nil || prev.msg == nil || lp.status != "input_required" || prev.status != "input_required" {
		return ""
	}
	var d, dp struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	_ = json.Unmarshal(lp.msg.Result, &d)
	_ = json.Unmarshal(prev.msg.Result, &dp)
	a, _ := json.Marshal(d.InputRequests)
	b, _ := json.Marshal(dp.InputRequests)
	if string(compact(a)) != string(compact(b)) {
		return ""
	}
	var keys []string
	for k := range d.InputRequests {
		a, ok := t.answered[k]
		if !ok || strings.HasPrefix(a, "not answered") {
			return ""
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("tasks/update answered %s and was acknowledged, yet the task still asked the same in input_required %s later", strings.Join(keys, ", "), c.dur.Round(100*time.Millisecond))
}

// listenWithoutExtension judges B30b: a subscriptions/listen naming task ids from a client that
// did not declare the extension is refused with -32021 (the extension's notifications exist
// only for clients that declared it).
func listenWithoutExtension(ctx context.Context, r *runner, ev evidence) finding {
	if !r.offersTasks() {
		return finding{status: Skip, seen: r.noTasks(), alt: true}
	}
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	m, err := r.send(lctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{ev.taskID()}}}, req{noExt: true})
	switch {
	case errors.Is(err, errBudget) && ctx.Err() == nil:
		return found("subscriptions/listen without the extension declared was not refused: the stream stayed open for 3s")
	case err != nil:
		return failed(err)
	case m.Error != nil && m.Error.Code == rpc.CodeMethodNotFound:
		return finding{status: Skip, seen: "the server offers no subscriptions (" + describe(m, nil) + ")", alt: true}
	}
	return found(r.wantError(m, nil, rpc.CodeMissingCapability, http.StatusBadRequest))
}

// legacyTaskParam judges B22c: a hybrid server honours the 2025-11-25 task param under
// 2026-07-28 and makes a task for a client that did not declare the extension. SEP-2663 says a
// 2026-07-28 server ignores the param; EXT §Capability Negotiation that without the extension
// no task is returned. It calls the quickest task tool that also ran without the extension
// once more, without the extension and with task: {}.
func legacyTaskParam(ctx context.Context, r *runner, ev evidence) finding {
	var pick *call
	for _, t := range r.tools {
		if pc := t.plainCall; pc != nil && pc.plain != nil && (pick == nil || pc.dur < pick.dur) {
			pick = pc
		}
	}
	if pick == nil {
		_, why := refusedCalls(r, ev)
		if len(ev.tasks) > 0 {
			why = "no task tool also ran without the extension declared"
		}
		return skipped(why)
	}
	if !r.budgetLeft(ctx) {
		return failed(errBudget)
	}
	args := pick.args
	if args == nil {
		args = map[string]any{}
	}
	pctx, cancel := context.WithTimeout(ctx, r.longAfter(0)+pick.dur)
	defer cancel()
	m, err := r.send(pctx, "tools/call", map[string]any{"name": pick.tool.name, "arguments": args, "task": map[string]any{}}, req{noExt: true, tool: pick.tool})
	name := pick.tool.name
	switch {
	case err != nil:
		return failed(err, name)
	case m.Error != nil:
		return found(fmt.Sprintf("%s: called without the extension and with the 2025-11-25 task param, it got %s, though the same call without the param ran; a 2026-07-28 server ignores the param", name, describe(m, nil)), name)
	}
	if res := obj(m.Result); str(res["resultType"]) == "task" || res["task"] != nil {
		if id := firstNonEmpty(str(res["taskId"]), str(obj(res["task"])["taskId"])); id != "" {
			_, _ = r.send(ctx, "tasks/cancel", map[string]any{"taskId": id}, req{})
		}
		return found(fmt.Sprintf("%s: called without the extension and with the 2025-11-25 task param, it answered with a task (%s): a hybrid of the two generations", name, quote(m.Result)), name)
	}
	return found("", name)
}
