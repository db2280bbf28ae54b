package rpc

import (
	"encoding/json"
	"time"

	"github.com/mcptask/mcptask/internal/taskstatus"
)

// Protocol versions and extension identifiers mcptask speaks.
const (
	// VersionLegacy is MCP 2025-11-25, with tasks as an experimental core utility ("Gen-A").
	VersionLegacy = "2025-11-25"
	// VersionModern is MCP 2026-07-28; tasks come from the TasksExtension ("Gen-B").
	VersionModern = "2026-07-28"
	// TasksExtension is the extension identifier declared in clientCapabilities.extensions.
	TasksExtension = "io.modelcontextprotocol/tasks"

	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// Era names the protocol generation a server was reached with. It is persisted with each
// task, because task ids of one era cannot be used with the methods of the other.
type Era string

const (
	EraLegacy Era = "2025-11-25"
	EraModern Era = "2026-07-28"
)

// TaskStatus is a task's status as defined by both generations.
type TaskStatus string

const (
	StatusWorking       TaskStatus = taskstatus.Working
	StatusInputRequired TaskStatus = taskstatus.InputRequired
	StatusCompleted     TaskStatus = taskstatus.Completed
	StatusFailed        TaskStatus = taskstatus.Failed
	StatusCancelled     TaskStatus = taskstatus.Cancelled
)

// Terminal reports whether no further transition is allowed from s (taskstatus.Terminal).
func (s TaskStatus) Terminal() bool { return taskstatus.Terminal(string(s)) }

// Valid reports whether s is one of the five statuses of the spec.
func (s TaskStatus) Valid() bool {
	switch s {
	case StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// Task is the era-neutral view of a task. Gen-A's ttl/pollInterval and Gen-B's
// ttlMs/pollIntervalMs both land in TTL and PollInterval. The Gen-B DetailedTask extras
// (inputRequests, result, error) are filled only when the server sent them.
type Task struct {
	TaskID        string
	Status        TaskStatus
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is the retention counted from CreatedAt. Nil means unlimited (JSON null).
	TTL *time.Duration
	// PollInterval is the server's suggested interval; 0 when the server gave none or an
	// invalid (non-positive) value.
	PollInterval time.Duration

	// InputRequests holds Gen-B inputRequests, by key, as sent.
	InputRequests map[string]json.RawMessage
	// Result is the Gen-B inline result of a completed task (a CallToolResult for tools/call).
	Result json.RawMessage
	// Error is the Gen-B inline error of a failed task.
	Error *Error

	// Raw is the task object exactly as it came off the wire: the flat Task of tasks/get, or
	// for Gen-A CreateTaskResult the whole result (with its nested task and _meta).
	Raw json.RawMessage
}

// ExpiresAt returns when the server may discard the task, and false when the TTL is unlimited
// or the creation time is unknown.
func (t *Task) ExpiresAt() (time.Time, bool) {
	if t.TTL == nil || t.CreatedAt.IsZero() {
		return time.Time{}, false
	}
	return t.CreatedAt.Add(*t.TTL), true
}

// Content is one item of a CallToolResult's content array. Only the fields mcptask prints are
// decoded; Raw keeps the rest.
type Content struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Data     string          `json:"data,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// ToolResult is a CallToolResult.
type ToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	// Raw is the CallToolResult exactly as received.
	Raw json.RawMessage `json:"-"`
}

// ResultKind says which of the shapes a tools/call answered with.
type ResultKind int

const (
	// KindComplete is a plain CallToolResult (resultType "complete" or absent).
	KindComplete ResultKind = iota
	// KindTask is a CreateTaskResult (Gen-A nested {task}, Gen-B resultType "task").
	KindTask
	// KindInputRequired is a Gen-B MRTR InputRequiredResult of tools/call.
	KindInputRequired
)

// CallResult is what a tools/call returned, decoded by era.
type CallResult struct {
	Kind ResultKind
	// Tool is set for KindComplete.
	Tool *ToolResult
	// Task is set for KindTask.
	Task *Task
	// InputRequests and RequestState are set for KindInputRequired (MRTR).
	InputRequests map[string]json.RawMessage
	RequestState  string
	// Raw is the JSON-RPC result object as received.
	Raw json.RawMessage
}

// Tool is an entry of tools/list.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Execution   *struct {
		TaskSupport string `json:"taskSupport,omitempty"`
	} `json:"execution,omitempty"`
	// Raw is the tool object as received.
	Raw json.RawMessage `json:"-"`
}

// TaskSupport returns the Gen-A execution.taskSupport of t, "forbidden" when absent as
// C25-SCHEMA ToolExecution says.
func (t *Tool) TaskSupport() string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return "forbidden"
	}
	return t.Execution.TaskSupport
}
