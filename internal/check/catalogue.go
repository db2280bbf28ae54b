package check

// Rule describes one rule of the checker: its id, era, what it checks, the spec section it
// comes from, and what it needs from the server's tools to be judged.
type Rule struct {
	ID  string `json:"id"`
	Era string `json:"era"`
	// Title is the rule in a few words: the title of its results, defined here only.
	Title string `json:"title"`
	// Doc is the rule as docs/guide/check.md states it, when it says more than the title (how
	// a SHOULD is reported, what a schema result is per kind); Doc() gives it.
	Doc string `json:"doc,omitempty"`
	// Alt is the title of a result that cannot judge the whole rule (a header probe skipped
	// on stdio, the task probes skipped without the extension, server/discover unanswered).
	Alt     string `json:"-"`
	Section string `json:"section"`
	Needs   string `json:"needs"`
	// Level says what breaking the rule means: a failure for a MUST, a warning for a SHOULD.
	Level Level `json:"-"`
}

// Level is how strongly the spec states a rule.
type Level int

const (
	Must Level = iota
	Should
)

// broken is the status of a result that breaks a rule of this level.
func (l Level) broken() Status {
	if l == Should {
		return Warn
	}
	return Fail
}

const (
	needsNothing  = "nothing (a probe the checker sends itself)"
	needsHTTP     = "Streamable HTTP (skipped on stdio)"
	needsTask     = "any tool that answers with a task"
	needsFinished = "a tool whose task finishes"
	needsInput    = "a tool whose task asks for input (answered from its requestedSchema)"
	needsLong     = "a tool whose task is still working when it is cancelled (one that runs long, or is slow enough to cancel at once)"
	needsToolErr  = "a tool that reports a tool error (a result with isError)"
)

// Rules lists every rule, in report order. The table in docs/guide/check.md is checked against it.
var Rules = []Rule{
	{ID: "B0", Era: "2026-07-28", Title: "every answer matches the official schema", Doc: "every answer matches the official schema (one result per kind: B0:server/discover, B0:tools/call, B0:errors, …)", Section: "C26-SCHEMA; EXT-SCHEMA", Needs: "nothing; each tool call adds answers to validate"},
	{ID: "B17", Era: "2026-07-28", Title: "server/discover returns resultType complete and supportedVersions", Alt: "server/discover answers", Section: "C26-DISC", Needs: needsNothing},
	{ID: "B17b", Era: "2026-07-28", Title: "tasks extension declared in capabilities.extensions with {}", Doc: "the tasks extension is declared with {}; a half-modern server (2026-07-28 listed, only the 2025-11-25 tasks capability) is a warning", Section: "EXT §Capability Negotiation; SEP-2663 §Backward Compatibility", Needs: needsNothing},
	{ID: "B17c", Era: "2026-07-28", Title: "server/discover carries _meta serverInfo (SHOULD)", Doc: "server/discover carries _meta serverInfo (SHOULD: a warning)", Section: "C26-DISC", Needs: needsNothing, Level: Should},
	{ID: "B17d", Era: "2026-07-28", Title: "server/discover carries the cache hints ttlMs and cacheScope", Section: "C26-SCHEMA DiscoverResult (CacheableResult); C26-DISC", Needs: needsNothing},
	{ID: "B17e", Era: "2026-07-28", Title: "every list result carries the cache hints ttlMs and cacheScope: tools/list, and prompts/list, resources/list and resources/templates/list when declared", Section: "C26-SCHEMA ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult (CacheableResult)", Needs: needsNothing + "; the prompts and resources lists only when server/discover declares prompts or resources (else named as not judged)"},
	{ID: "B18", Era: "2026-07-28", Title: "every result carries resultType: complete, or task / input_required on tools/call only", Section: "C26-BASIC §Result Responses; EXT §Polymorphic Results", Needs: needsNothing},
	{ID: "B19", Era: "2026-07-28", Title: "a request without _meta clientCapabilities is refused with -32602 (HTTP 400)", Section: "C26-BASIC §_meta", Needs: needsNothing},
	{ID: "B20", Era: "2026-07-28", Title: "an unsupported protocol version is refused with -32022, data.supported and data.requested (HTTP 400)", Section: "C26-VER; C26-HTTP", Needs: needsNothing},
	{ID: "B21", Era: "2026-07-28", Title: "a mismatched Mcp-Name on tasks/get is refused with 400 and -32020", Alt: "a mismatched Mcp-Name on tasks/get is refused", Section: "C26-HTTP §Server Validation; EXT §Streamable HTTP: Routing Headers", Needs: needsHTTP + "; the tasks extension"},
	{ID: "B21b", Era: "2026-07-28", Title: "an MCP-Protocol-Version header that differs from _meta is refused with 400 and -32020", Alt: "an MCP-Protocol-Version header that differs from _meta is refused", Section: "C26-HTTP §Server Validation, §Protocol Version Header", Needs: needsHTTP},
	{ID: "B21c", Era: "2026-07-28", Title: "ping, removed in 2026-07-28, is answered 404 and -32601", Section: "C26-CHLOG (ping removed); C26-HTTP §Server Validation", Needs: needsNothing},
	{ID: "B22", Era: "2026-07-28", Title: "tools/call without the extension declared never returns a task", Section: "EXT §Capability Negotiation", Needs: needsTask + " (called again without the extension)"},
	{ID: "B22b", Era: "2026-07-28", Title: "a tool that runs only as a task, called without the extension, is refused with -32021 naming it (HTTP 400)", Section: "EXT §Capability Negotiation; C26-BASIC (MissingRequiredClientCapability)", Needs: "a task tool that refuses to run without the extension"},
	{ID: "B24", Era: "2026-07-28", Title: "CreateTaskResult is flat, with taskId, status, timestamps and ttlMs, and no legacy keys", Section: "EXT §Task Creation; EXT-SCHEMA CreateTaskResult", Needs: needsTask},
	{ID: "B25", Era: "2026-07-28", Title: "tasks/get right after creation succeeds", Section: "EXT §Task Creation", Needs: needsTask},
	{ID: "B26", Era: "2026-07-28", Title: "tasks/get carries the variant's field: inputRequests, result or error", Section: "EXT §Task Polling; §Task Execution Errors", Needs: needsTask},
	{ID: "B27", Era: "2026-07-28", Title: "a tool result with isError ends completed with that result, not failed", Section: "EXT §Task Execution Errors", Needs: needsToolErr + ", as a task"},
	{ID: "B28", Era: "2026-07-28", Title: "tasks/cancel returns an empty ack with resultType complete", Section: "EXT §Task Cancellation", Needs: needsLong},
	{ID: "B28b", Era: "2026-07-28", Title: "tasks/cancel of an unknown task is -32602 (SHOULD)", Doc: "tasks/cancel of an unknown task is -32602 (SHOULD: a warning)", Section: "EXT §Task Cancellation", Needs: "the tasks extension", Level: Should},
	{ID: "B28c", Era: "2026-07-28", Title: "tasks/cancel of a finished task is acknowledged (an error is allowed)", Doc: "tasks/cancel of a finished task is acknowledged (an error is allowed: a warning)", Section: "EXT §Task Cancellation", Needs: needsFinished},
	{ID: "B28d", Era: "2026-07-28", Title: "tasks/update returns an empty ack with resultType complete", Section: "EXT §Task Update Requests", Needs: needsInput},
	{ID: "B29", Era: "2026-07-28", Title: "an unknown taskId on tasks/get is -32602", Section: "EXT §Protocol Errors", Needs: "the tasks extension"},
	{ID: "B30", Era: "2026-07-28", Title: "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021 (HTTP 400)", Alt: "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021", Section: "EXT §Protocol Errors; C26-BASIC (MissingRequiredClientCapability)", Needs: "the tasks extension"},
	{ID: "B31", Era: "2026-07-28", Title: "tasks/result, removed in 2026-07-28, is answered 404 and -32601", Section: "SEP-2663 §Backward Compatibility; C26-HTTP", Needs: needsNothing},
	{ID: "B31a", Era: "2026-07-28", Title: "no 2025-11-25 tasks capability under 2026-07-28", Section: "SEP-2663 §Backward Compatibility", Needs: needsNothing},
	{ID: "B31b", Era: "2026-07-28", Title: "tasks/list, removed in 2026-07-28, is answered 404 and -32601", Section: "EXT §Supported Methods; SEP-2663 §Backward Compatibility; C26-HTTP", Needs: needsNothing},
	{ID: "B32", Era: "2026-07-28", Title: "inputRequests keys keep their request, and ask only for what the client declared", Section: "EXT §Task Update Requests; C26-MRTR §Server Requirements", Needs: needsInput},
	{ID: "B33", Era: "2026-07-28", Title: "status transitions follow the graph; a terminal status never changes", Section: "EXT §Task Status", Needs: needsTask},
	{ID: "B33b", Era: "2026-07-28", Title: "a finished task polled again keeps its status and its result", Section: "EXT §Task Status; §Task Polling", Needs: needsFinished},
	{ID: "B34", Era: "2026-07-28", Title: "subscriptions/listen acknowledges first, then pushes full tasks to the end", Doc: "subscriptions/listen acknowledges first, then pushes full tasks to the end (skipped when the server offers no subscriptions)", Section: "EXT §Task Status Notifications; C26-SUBS", Needs: "a tool whose task completes without input"},
	{ID: "B36", Era: "2026-07-28", Title: "task ids look unguessable", Section: "EXT §Security Considerations", Needs: needsTask},
	{ID: "B38", Era: "2026-07-28", Title: "a task stays retrievable until its ttlMs has passed (may discard after)", Doc: "a task stays retrievable until its ttlMs has passed (a warning: the spec says \"may discard after\")", Section: "EXT §Tasks (ttlMs)", Needs: needsFinished, Level: Should},

	{ID: "A0", Era: "2025-11-25", Title: "every answer matches the official schema", Doc: "every answer matches the official schema (one result per kind: A0:initialize, A0:tasks/get, A0:errors, …)", Section: "C25-SCHEMA", Needs: "nothing; each tool call adds answers to validate"},
	{ID: "A1", Era: "2025-11-25", Title: "tasks capability uses list, cancel and requests.tools.call", Doc: "the tasks capability uses list, cancel and requests.tools.call", Section: "C25-TASKS §Server Capabilities", Needs: needsNothing},
	{ID: "A1b", Era: "2025-11-25", Title: "a server that declares no tasks.requests.tools.call answers a task-augmented call normally, never with a task", Section: "C25-TASKS §Capabilities; §Task Support and Handling", Needs: "a tool the checker may call (only when tasks.requests.tools.call is not declared; else it passes)"},
	{ID: "A2", Era: "2025-11-25", Title: "a task-augmented call returns a CreateTaskResult {task:{…}}", Section: "C25-TASKS §Result Retrieval, §Creating Tasks", Needs: "a tool with taskSupport optional or required"},
	{ID: "A3", Era: "2025-11-25", Title: "a tool with taskSupport required, called without task, is refused with -32601", Doc: "a tool with taskSupport required, called without task, is refused with -32601 (-32600 accepted)", Section: "C25-TASKS §Tool-Level Negotiation", Needs: "a tool with taskSupport required"},
	{ID: "A3b", Era: "2025-11-25", Title: "a tool without task support, called with task, is refused with -32601 (SHOULD)", Doc: "a tool without task support, called with task, is refused with -32601 (SHOULD: a warning)", Section: "C25-TASKS §Tool-Level Negotiation", Needs: "a tool without task support that answers quickly", Level: Should},
	{ID: "A4", Era: "2025-11-25", Title: "the first status of a task is working", Section: "C25-TASKS §Task Status Lifecycle", Needs: needsTask},
	{ID: "A5", Era: "2025-11-25", Title: "tasks carry taskId, status, createdAt, lastUpdatedAt (ISO 8601) and ttl", Section: "C25-TASKS §TTL and Resource Management; C25-SCHEMA Task", Needs: needsTask},
	{ID: "A6", Era: "2025-11-25", Title: "status transitions follow the graph; a terminal status never changes", Doc: "status transitions follow the graph; a terminal status never changes (watched for four more polls after the end, and after a cancel)", Section: "C25-TASKS §Task Status Lifecycle", Needs: needsTask},
	{ID: "A6b", Era: "2025-11-25", Title: "every notifications/tasks/status (on any stream, the GET stream included) is a full Task of this session, and never changes a terminal status", Section: "C25-TASKS §Task Status Notification, §Task Status Lifecycle; C25-SCHEMA TaskStatusNotification", Needs: needsTask + "; a server that sends the notifications (they are optional: skipped with the reason when none came)"},
	{ID: "A7", Era: "2025-11-25", Title: "an unknown taskId on tasks/get is -32602", Section: "C25-TASKS §Error Handling", Needs: "the tasks capability"},
	{ID: "A7b", Era: "2025-11-25", Title: "an unknown taskId on tasks/result is -32602", Section: "C25-TASKS §Error Handling", Needs: "the tasks capability"},
	{ID: "A7c", Era: "2025-11-25", Title: "an unknown taskId on tasks/cancel is -32602", Section: "C25-TASKS §Error Handling", Needs: "the tasks capability"},
	{ID: "A7d", Era: "2025-11-25", Title: "tasks/get names its task by taskId, whatever related-task metadata the request carries", Section: "C25-TASKS §Associating Task-Related Messages", Needs: needsTask},
	{ID: "A8", Era: "2025-11-25", Title: "tasks/cancel answers the task as cancelled, and it stays cancelled", Section: "C25-TASKS §Task Cancellation", Needs: needsLong + "; tasks.cancel"},
	{ID: "A8b", Era: "2025-11-25", Title: "tasks/cancel of a finished task is refused with -32602", Section: "C25-TASKS §Task Cancellation", Needs: needsFinished + "; tasks.cancel"},
	{ID: "A9", Era: "2025-11-25", Title: "tasks/result returns the result with related-task meta", Section: "C25-TASKS §Related Task Metadata", Needs: needsFinished + " with a result"},
	{ID: "A9b", Era: "2025-11-25", Title: "tasks/result sent while a task is working or input_required answers only once the task is terminal", Section: "C25-TASKS §Result Retrieval", Needs: "a tool whose task is still working (or asks for input) when the checker sends tasks/result"},
	{ID: "A9c", Era: "2025-11-25", Title: "tasks/result returns what the request would have: for a failed task its error (or the tool result with isError), for a completed one its result", Section: "C25-TASKS §Result Retrieval", Needs: needsFinished + " with completed or failed"},
	{ID: "A10", Era: "2025-11-25", Title: "a tool result with isError makes the task failed", Section: "C25-TASKS §Task Execution Errors", Needs: needsToolErr + ", as a task"},
	{ID: "A11", Era: "2025-11-25", Title: "requests sent for a task in input_required carry related-task meta", Section: "C25-TASKS §Input Required Status, §Associating Task-Related Messages", Needs: needsInput},
	{ID: "A12", Era: "2025-11-25", Title: "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT)", Doc: "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT: a warning)", Section: "C25-TASKS §Associating Task-Related Messages; §Task Notifications", Needs: needsTask, Level: Should},
	{ID: "A13", Era: "2025-11-25", Title: "tasks/list shows every task tasks/get can retrieve", Section: "C25-TASKS §Task Listing", Needs: needsTask + "; tasks.list"},
	{ID: "A13b", Era: "2025-11-25", Title: "tasks/list with a cursor the server never gave is -32602", Section: "C25-TASKS §Error Handling; §Task Listing", Needs: "tasks.list"},
	{ID: "A16", Era: "2025-11-25", Title: "an invalid MCP-Protocol-Version is refused with 400", Section: "C25-TRANS §Protocol Version Header", Needs: needsHTTP},
	{ID: "A36", Era: "2025-11-25", Title: "task ids are unique and look unguessable (a warning only when the requests carry an authorization context)", Section: "C25-TASKS §Task ID Requirements; §Security Considerations", Needs: needsTask},
	{ID: "A38", Era: "2025-11-25", Title: "a task stays retrievable until its ttl has passed (may delete after)", Doc: "a task stays retrievable until its ttl has passed (a warning: the spec says \"MAY delete\" after)", Section: "C25-TASKS §TTL and Resource Management", Needs: needsFinished, Level: Should},
}

// Description is the rule as the guide states it: its Doc, or its title.
func (r Rule) Description() string {
	if r.Doc != "" {
		return r.Doc
	}
	return r.Title
}

// ruleOf returns the catalogue entry of a result id ("B0:tools/call" is B0's).
func ruleOf(id string) (Rule, bool) {
	if i := len(id); i > 2 && (id[:3] == "A0:" || id[:3] == "B0:") {
		id = id[:2]
	}
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
