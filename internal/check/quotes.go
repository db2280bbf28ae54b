package check

// Quotes holds, for each 2025-11-25 rule, the sentence of the specification it enforces
// (C25-TASKS unless said otherwise), so that a failure says which words the server broke, not
// only which section. docs/check-2025-11-25.md lists the same sentences with their rules.
var Quotes = map[string]string{
	"A1":   "Servers and clients that support task-augmented requests MUST declare a tasks capability during initialization. (The schema: each of list, cancel, requests.tools.call is an object.)",
	"A1b":  "Receivers that do not declare the task capability for a request type MUST process requests of that type normally, ignoring any task-augmentation metadata if present.",
	"A2":   "Receivers that accept a task-augmented request MUST return a CreateTaskResult as the response.",
	"A3":   "If execution.taskSupport is \"required\", clients MUST invoke the tool as a task. Servers MUST return a -32601 (Method not found) error if a client does not attempt to do so.",
	"A3b":  "If execution.taskSupport is not present or \"forbidden\", clients MUST NOT attempt to invoke the tool as a task. Servers SHOULD return a -32601 (Method not found) error if a client attempts to do so.",
	"A4":   "Tasks MUST begin in the working status when created.",
	"A5":   "Receivers MUST include a createdAt [and a lastUpdatedAt] ISO 8601-formatted timestamp in all task responses … Receivers MUST include the actual ttl duration (or null for unlimited) in tasks/get responses.",
	"A6":   "Tasks with a completed, failed, or cancelled status are in a terminal state and MUST NOT transition to any other status.",
	"A6b":  "The notification includes the full Task object … Tasks with a completed, failed, or cancelled status are in a terminal state and MUST NOT transition to any other status.",
	"A7":   "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602 (Invalid params).",
	"A7b":  "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602 (Invalid params).",
	"A7c":  "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602 (Invalid params).",
	"A7d":  "For the tasks/get, tasks/result, and tasks/cancel operations, the taskId parameter in the request MUST be used as the source of truth for identifying the target task. … receivers MUST ignore such metadata if present in favor of the RPC method parameter.",
	"A8":   "Upon receiving a valid cancellation request, receivers … MUST transition the task to cancelled status before sending the response. Once a task is cancelled, it MUST remain in cancelled status even if execution continues to completion or fails.",
	"A8b":  "Receivers MUST reject cancellation requests for tasks already in a terminal status (completed, failed, or cancelled) with error code -32602 (Invalid params).",
	"A9":   "The tasks/result operation MUST include this metadata [io.modelcontextprotocol/related-task] in its response, as the result structure itself does not contain the task ID.",
	"A9b":  "When a receiver receives a tasks/result request for a task in any other non-terminal status (working or input_required), it MUST block the response until the task reaches a terminal status.",
	"A9c":  "For tasks in a terminal status, receivers MUST return from tasks/result exactly what the underlying request would have returned, whether that is a successful result or a JSON-RPC error.",
	"A10":  "For tasks that wrap tool call requests, when the tool result has isError set to true, the task should reach failed status.",
	"A11":  "The receiver MUST include the io.modelcontextprotocol/related-task metadata in the request to associate it with the task.",
	"A12":  "For the tasks/get, tasks/list, and tasks/cancel operations, receivers SHOULD NOT include io.modelcontextprotocol/related-task metadata in the result messages. … the notifications/tasks/status notification SHOULD NOT include the io.modelcontextprotocol/related-task metadata.",
	"A13":  "If a task is retrievable via tasks/get for a requestor, it MUST be retrievable via tasks/list for that requestor.",
	"A13b": "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: … Invalid or nonexistent cursor in tasks/list: -32602 (Invalid params).",
	"A16":  "C25-TRANS: If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request.",
	"A36":  "Task IDs MUST be unique among all tasks controlled by the receiver. … If context-binding is unavailable, receivers MUST generate cryptographically secure task IDs with enough entropy to prevent guessing.",
	"A38":  "After a task's ttl lifetime has elapsed, receivers MAY delete the task and its results, regardless of the task status.",
}
