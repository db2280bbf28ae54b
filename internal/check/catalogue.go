package check

// Rule describes one rule of the checker: its id, era, what it checks, the spec section it
// comes from, and what it needs from the server's tools to be judged.
type Rule struct {
	ID      string `json:"id"`
	Era     string `json:"era"`
	Title   string `json:"title"`
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
	{"B0", "2026-07-28", "every answer matches the official schema (one result per kind: B0:server/discover, B0:tools/call, B0:errors, …)", "C26-SCHEMA; EXT-SCHEMA", "nothing; each tool call adds answers to validate", Must},
	{"B17", "2026-07-28", "server/discover returns resultType complete and supportedVersions", "C26-DISC", needsNothing, Must},
	{"B17b", "2026-07-28", "the tasks extension is declared with {}; a half-modern server (2026-07-28 listed, only the 2025-11-25 tasks capability) is a warning", "EXT §Capability Negotiation; SEP-2663 §Backward Compatibility", needsNothing, Must},
	{"B17c", "2026-07-28", "server/discover carries _meta serverInfo (SHOULD: a warning)", "C26-DISC", needsNothing, Should},
	{"B17d", "2026-07-28", "server/discover carries the cache hints ttlMs and cacheScope", "C26-SCHEMA DiscoverResult (CacheableResult); C26-DISC", needsNothing, Must},
	{"B17e", "2026-07-28", "every list result carries the cache hints ttlMs and cacheScope: tools/list, and prompts/list, resources/list and resources/templates/list when declared", "C26-SCHEMA ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult (CacheableResult)", needsNothing + "; the prompts and resources lists only when server/discover declares prompts or resources (else named as not judged)", Must},
	{"B18", "2026-07-28", "every result carries resultType: complete, or task / input_required on tools/call only", "C26-BASIC §Result Responses; EXT §Polymorphic Results", needsNothing, Must},
	{"B19", "2026-07-28", "a request without _meta clientCapabilities is refused with -32602 (HTTP 400)", "C26-BASIC §_meta", needsNothing, Must},
	{"B20", "2026-07-28", "an unsupported protocol version is refused with -32022, data.supported and data.requested (HTTP 400)", "C26-VER; C26-HTTP", needsNothing, Must},
	{"B21", "2026-07-28", "a mismatched Mcp-Name on tasks/get is refused with 400 and -32020", "C26-HTTP §Server Validation; EXT §Streamable HTTP: Routing Headers", needsHTTP + "; the tasks extension", Must},
	{"B21b", "2026-07-28", "an MCP-Protocol-Version header that differs from _meta is refused with 400 and -32020", "C26-HTTP §Server Validation, §Protocol Version Header", needsHTTP, Must},
	{"B21c", "2026-07-28", "ping, removed in 2026-07-28, is answered 404 and -32601", "C26-CHLOG (ping removed); C26-HTTP §Server Validation", needsNothing, Must},
	{"B22", "2026-07-28", "tools/call without the extension declared never returns a task", "EXT §Capability Negotiation", needsTask + " (called again without the extension)", Must},
	{"B22b", "2026-07-28", "a tool that runs only as a task, called without the extension, is refused with -32021 naming it (HTTP 400)", "EXT §Capability Negotiation; C26-BASIC (MissingRequiredClientCapability)", "a task tool that refuses to run without the extension", Must},
	{"B24", "2026-07-28", "CreateTaskResult is flat, with taskId, status, timestamps and ttlMs, and no legacy keys", "EXT §Task Creation; EXT-SCHEMA CreateTaskResult", needsTask, Must},
	{"B25", "2026-07-28", "tasks/get right after creation succeeds", "EXT §Task Creation", needsTask, Must},
	{"B26", "2026-07-28", "tasks/get carries the variant's field: inputRequests, result or error", "EXT §Task Polling; §Task Execution Errors", needsTask, Must},
	{"B27", "2026-07-28", "a tool result with isError ends completed with that result, not failed", "EXT §Task Execution Errors", needsToolErr + ", as a task", Must},
	{"B28", "2026-07-28", "tasks/cancel returns an empty ack with resultType complete", "EXT §Task Cancellation", needsLong, Must},
	{"B28b", "2026-07-28", "tasks/cancel of an unknown task is -32602 (SHOULD: a warning)", "EXT §Task Cancellation", "the tasks extension", Should},
	{"B28c", "2026-07-28", "tasks/cancel of a finished task is acknowledged (an error is allowed: a warning)", "EXT §Task Cancellation", needsFinished, Must},
	{"B28d", "2026-07-28", "tasks/update returns an empty ack with resultType complete", "EXT §Task Update Requests", needsInput, Must},
	{"B29", "2026-07-28", "an unknown taskId on tasks/get is -32602", "EXT §Protocol Errors", "the tasks extension", Must},
	{"B30", "2026-07-28", "tasks/get, tasks/update and tasks/cancel without the extension declared are -32021 (HTTP 400)", "EXT §Protocol Errors; C26-BASIC (MissingRequiredClientCapability)", "the tasks extension", Must},
	{"B31", "2026-07-28", "tasks/result, removed in 2026-07-28, is answered 404 and -32601", "SEP-2663 §Backward Compatibility; C26-HTTP", needsNothing, Must},
	{"B31a", "2026-07-28", "no 2025-11-25 tasks capability under 2026-07-28", "SEP-2663 §Backward Compatibility", needsNothing, Must},
	{"B31b", "2026-07-28", "tasks/list, removed in 2026-07-28, is answered 404 and -32601", "EXT §Supported Methods; SEP-2663 §Backward Compatibility; C26-HTTP", needsNothing, Must},
	{"B32", "2026-07-28", "inputRequests keys keep their request, and ask only for what the client declared", "EXT §Task Update Requests; C26-MRTR §Server Requirements", needsInput, Must},
	{"B33", "2026-07-28", "status transitions follow the graph; a terminal status never changes", "EXT §Task Status", needsTask, Must},
	{"B33b", "2026-07-28", "a finished task polled again keeps its status and its result", "EXT §Task Status; §Task Polling", needsFinished, Must},
	{"B34", "2026-07-28", "subscriptions/listen acknowledges first, then pushes full tasks to the end (skipped when the server offers no subscriptions)", "EXT §Task Status Notifications; C26-SUBS", "a tool whose task completes without input", Must},
	{"B36", "2026-07-28", "task ids look unguessable", "EXT §Security Considerations", needsTask, Must},
	{"B38", "2026-07-28", "a task stays retrievable until its ttlMs has passed (a warning: the spec says \"may discard after\")", "EXT §Tasks (ttlMs)", needsFinished, Should},

	{"A0", "2025-11-25", "every answer matches the official schema (one result per kind: A0:initialize, A0:tasks/get, A0:errors, …)", "C25-SCHEMA", "nothing; each tool call adds answers to validate", Must},
	{"A1", "2025-11-25", "the tasks capability uses list, cancel and requests.tools.call", "C25-TASKS §Server Capabilities", needsNothing, Must},
	{"A1b", "2025-11-25", "a server that declares no tasks.requests.tools.call answers a task-augmented call normally, never with a task", "C25-TASKS §Capabilities; §Task Support and Handling", "a tool the checker may call (only when tasks.requests.tools.call is not declared; else it passes)", Must},
	{"A2", "2025-11-25", "a task-augmented call returns a CreateTaskResult {task:{…}}", "C25-TASKS §Result Retrieval, §Creating Tasks", "a tool with taskSupport optional or required", Must},
	{"A3", "2025-11-25", "a tool with taskSupport required, called without task, is refused with -32601 (-32600 accepted)", "C25-TASKS §Tool-Level Negotiation", "a tool with taskSupport required", Must},
	{"A3b", "2025-11-25", "a tool without task support, called with task, is refused with -32601 (SHOULD: a warning)", "C25-TASKS §Tool-Level Negotiation", "a tool without task support that answers quickly", Should},
	{"A4", "2025-11-25", "the first status of a task is working", "C25-TASKS §Task Status Lifecycle", needsTask, Must},
	{"A5", "2025-11-25", "tasks carry taskId, status, createdAt, lastUpdatedAt (ISO 8601) and ttl", "C25-TASKS §TTL and Resource Management; C25-SCHEMA Task", needsTask, Must},
	{"A6", "2025-11-25", "status transitions follow the graph; a terminal status never changes (watched for four more polls after the end, and after a cancel)", "C25-TASKS §Task Status Lifecycle", needsTask, Must},
	{"A6b", "2025-11-25", "every notifications/tasks/status (on any stream, the GET stream included) is a full Task of this session, and never changes a terminal status", "C25-TASKS §Task Status Notification, §Task Status Lifecycle; C25-SCHEMA TaskStatusNotification", needsTask + "; a server that sends the notifications (they are optional: skipped with the reason when none came)", Must},
	{"A7", "2025-11-25", "an unknown taskId on tasks/get is -32602", "C25-TASKS §Error Handling", "the tasks capability", Must},
	{"A7b", "2025-11-25", "an unknown taskId on tasks/result is -32602", "C25-TASKS §Error Handling", "the tasks capability", Must},
	{"A7c", "2025-11-25", "an unknown taskId on tasks/cancel is -32602", "C25-TASKS §Error Handling", "the tasks capability", Must},
	{"A7d", "2025-11-25", "tasks/get names its task by taskId, whatever related-task metadata the request carries", "C25-TASKS §Associating Task-Related Messages", needsTask, Must},
	{"A8", "2025-11-25", "tasks/cancel answers the task as cancelled, and it stays cancelled", "C25-TASKS §Task Cancellation", needsLong + "; tasks.cancel", Must},
	{"A8b", "2025-11-25", "tasks/cancel of a finished task is refused with -32602", "C25-TASKS §Task Cancellation", needsFinished + "; tasks.cancel", Must},
	{"A9", "2025-11-25", "tasks/result returns the result with related-task meta", "C25-TASKS §Related Task Metadata", needsFinished + " with a result", Must},
	{"A9b", "2025-11-25", "tasks/result sent while a task is working or input_required answers only once the task is terminal", "C25-TASKS §Result Retrieval", "a tool whose task is still working (or asks for input) when the checker sends tasks/result", Must},
	{"A9c", "2025-11-25", "tasks/result returns what the request would have: for a failed task its error (or the tool result with isError), for a completed one its result", "C25-TASKS §Result Retrieval", needsFinished + " with completed or failed", Must},
	{"A10", "2025-11-25", "a tool result with isError makes the task failed", "C25-TASKS §Task Execution Errors", needsToolErr + ", as a task", Must},
	{"A11", "2025-11-25", "requests sent for a task in input_required carry related-task meta", "C25-TASKS §Input Required Status, §Associating Task-Related Messages", needsInput, Must},
	{"A12", "2025-11-25", "tasks/get results and notifications/tasks/status carry no related-task meta (SHOULD NOT: a warning)", "C25-TASKS §Associating Task-Related Messages; §Task Notifications", needsTask, Should},
	{"A13", "2025-11-25", "tasks/list shows every task tasks/get can retrieve", "C25-TASKS §Task Listing", needsTask + "; tasks.list", Must},
	{"A13b", "2025-11-25", "tasks/list with a cursor the server never gave is -32602", "C25-TASKS §Error Handling; §Task Listing", "tasks.list", Must},
	{"A16", "2025-11-25", "an invalid MCP-Protocol-Version is refused with 400", "C25-TRANS §Protocol Version Header", needsHTTP, Must},
	{"A36", "2025-11-25", "task ids are unique and look unguessable (a warning only when the requests carry an authorization context)", "C25-TASKS §Task ID Requirements; §Security Considerations", needsTask, Must},
	{"A38", "2025-11-25", "a task stays retrievable until its ttl has passed (a warning: the spec says \"MAY delete\" after)", "C25-TASKS §TTL and Resource Management", needsFinished, Should},
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
