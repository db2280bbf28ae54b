package output

import (
	"encoding/json"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Envelope is the --json output of the commands that show tasks, results and tools: the wire
// objects as the server sent them, in a small, additive-only wrapper (type, taskId, status,
// era, server). It is also the created and result event of --jsonl.
type Envelope struct {
	Type   string          `json:"type"`
	TaskID string          `json:"taskId,omitempty"`
	Status rpc.TaskStatus  `json:"status,omitempty"`
	Era    rpc.Era         `json:"era,omitempty"`
	Server string          `json:"server,omitempty"`
	Task   json.RawMessage `json:"task,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpc.Error      `json:"error,omitempty"`
	Ack    json.RawMessage `json:"ack,omitempty"`
	Tools  json.RawMessage `json:"tools,omitempty"`
	// Input lists outstanding input requests by key (status input_required).
	Input map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Warnings are human notes a script may log.
	Warnings []string `json:"warnings,omitempty"`
	// Tool is the tool that created the task (resume, list).
	Tool string `json:"tool,omitempty"`
	// Code and Message give one task's exit code and error in a many-task document.
	Code    *int   `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Tasks holds one envelope per task (watch, resume, cancel of several ids).
	Tasks []Envelope `json:"tasks,omitempty"`
	// Records holds ledger records (list).
	Records any `json:"records,omitempty"`
	// Remote holds a server's own tasks/list answer (list --remote).
	Remote json.RawMessage `json:"remote,omitempty"`
	// Local marks a result that no server task stands behind: the server answered call
	// --detach with a plain result, which mcptask kept in the ledger under taskId
	// (state.LocalPrefix) for 'mcptask result'.
	Local bool `json:"local,omitempty"`
}

// The --jsonl events besides the Envelope ones (created, result). Their fields are declared
// in the order of their JSON names, the order they have always been written in.

// StatusEvent is a change of a task's status or status message.
type StatusEvent struct {
	Status        rpc.TaskStatus `json:"status"`
	StatusMessage string         `json:"statusMessage,omitempty"`
	TaskID        string         `json:"taskId"`
	Time          string         `json:"time"`
	Type          string         `json:"type"` // "status"
	Via           follow.Via     `json:"via"`
}

// InputRequiredEvent lists the questions a task waits for; it is also what --on-input fail
// prints on stdout.
type InputRequiredEvent struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	TaskID        string                     `json:"taskId"`
	Type          string                     `json:"type"` // "input_required"
}

// PollErrorEvent is a failed poll that will be retried.
type PollErrorEvent struct {
	Failures  int    `json:"failures"`
	Message   string `json:"message"`
	RetryInMs int64  `json:"retryInMs"`
	TaskID    string `json:"taskId"`
	Time      string `json:"time"`
	Transient bool   `json:"transient"`
	Type      string `json:"type"` // "error"
}

// ProgressEvent is a notifications/progress: a task's, or (no taskId) the call's before it
// answered. Total is absent when the server gave none. Like the progress lines, at most one
// per task every ProgressEvery, besides the first and the one that reaches the total.
type ProgressEvent struct {
	Message  string   `json:"message,omitempty"`
	Progress float64  `json:"progress"`
	TaskID   string   `json:"taskId,omitempty"`
	Time     string   `json:"time"`
	Total    *float64 `json:"total,omitempty"`
	Type     string   `json:"type"` // "progress"
}

// The documents of the commands that do not show a task.

// Update is the --json output of update.
type Update struct {
	Answered []string       `json:"answered"`
	Era      rpc.Era        `json:"era"`
	Server   string         `json:"server"`
	Status   rpc.TaskStatus `json:"status,omitempty"`
	TaskID   string         `json:"taskId"`
	Type     string         `json:"type"` // "update"
}

// ToolDoc is the --json output of tools NAME: the tool as received, whether it runs as a task
// (TaskSupport), and its arguments as read from its inputSchema.
type ToolDoc struct {
	Arguments   []ToolArg       `json:"arguments"`
	Era         rpc.Era         `json:"era"`
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	TaskSupport string          `json:"taskSupport"`
	Tool        json.RawMessage `json:"tool"`
	Type        string          `json:"type"` // "tool"
}

// ToolArg is one argument of a tool: a property of its inputSchema.
type ToolArg struct {
	Default     json.RawMessage `json:"default,omitempty"`
	Description string          `json:"description,omitempty"`
	Enum        []string        `json:"enum,omitempty"`
	Name        string          `json:"name"`
	Required    bool            `json:"required"`
	Type        string          `json:"type,omitempty"`
}

// Forget is the --json output of forget.
type Forget struct {
	Forgotten []string `json:"forgotten"`
	Missing   []string `json:"missing"`
	Type      string   `json:"type"` // "forget"
}

// Prune is the --json output of prune.
type Prune struct {
	Removed []string `json:"removed"`
	Type    string   `json:"type"` // "prune"
}

// Adopt is the --json output of adopt.
type Adopt struct {
	Tasks []AdoptTask `json:"tasks"`
	Type  string      `json:"type"` // "adopt"
}

// AdoptTask is one record adopt looked at.
type AdoptTask struct {
	TaskID string `json:"taskId"`
	Server string `json:"server"`
	// Grants says what resuming the task gives its server or runs here (state.Server.Grants).
	Grants []string `json:"grants"`
	// Adopted is false when the record was already this user's.
	Adopted bool `json:"adopted"`
}

// Servers is the --json output of servers.
type Servers struct {
	Servers []Server `json:"servers"`
	Type    string   `json:"type"` // "servers"
}

// Server is one named server of a config file: an HTTP URL or a stdio command line.
type Server struct {
	Command []string `json:"command,omitempty"`
	Name    string   `json:"name"`
	// Scope is whose file it is: explicit (--config), user or project.
	Scope string `json:"scope"`
	// ShadowedBy names the file whose entry of the same name wins.
	ShadowedBy string `json:"shadowedBy,omitempty"`
	Source     string `json:"source"`
	// Trust is the TRUST column: user, explicit, trusted, untrusted or shadowed.
	Trust string `json:"trust"`
	URL   string `json:"url,omitempty"`
}

// Check is the --json output of check.
type Check struct {
	Budget  CheckBudget `json:"budget"`
	Results any         `json:"results"`
	Server  string      `json:"server"`
	Summary any         `json:"summary"`
	Tools   any         `json:"tools"`
	Type    string      `json:"type"` // "check"
}

// CheckBudget is how much of its time budget a check used, and what the budget cut.
type CheckBudget struct {
	Cut     []string `json:"cut"`
	LimitMs int64    `json:"limitMs"`
	UsedMs  int64    `json:"usedMs"`
}

// AuthLogin is the --json output of auth login.
type AuthLogin struct {
	Credential any    `json:"credential"`
	Type       string `json:"type"` // "auth-login"
}

// AuthStatus is the --json output of auth status.
type AuthStatus struct {
	Credentials any    `json:"credentials"`
	Type        string `json:"type"` // "auth-status"
}

// AuthLogout is the --json output of auth logout.
type AuthLogout struct {
	Count       int    `json:"count"`
	Credentials any    `json:"credentials"`
	Type        string `json:"type"` // "auth-logout"
}

// Error is the object written on stderr on every failure with --json, and with --jsonl also as
// the last event on stdout. Name is the exit code's name in the exit-code table.
type Error struct {
	Code    int             `json:"code"`
	Name    string          `json:"error"`
	Message string          `json:"message"`
	Reason  string          `json:"reason,omitempty"`
	RPCCode *int64          `json:"rpcCode,omitempty"`
	RPCData json.RawMessage `json:"rpcData,omitempty"`
	Type    string          `json:"type"` // "error"
}
