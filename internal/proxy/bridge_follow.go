package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptask/mcptask/internal/rpc"
)

// What the bridge needs from whoever follows its tasks (issue 21). The proxy relays and
// inspects; how a task is followed to its end (poll cadence, push, answering its questions with
// --on-input) is the follow engine's. The proxy does not import the engine: it states here what
// it needs, and internal/bridge gives it with the engine. The proxy keeps everything about the
// host (its streams, its capabilities, its answers, the ledger and the record).

// TaskFollower follows the tasks the bridge makes to their end (BridgeOptions.Follow).
type TaskFollower interface {
	// Answers reports whether the follower answers a task's questions itself (--on-input
	// decline or exec:); Samples whether those answers include sampling/createMessage
	// (exec: only). The proxy declares the capabilities that makes answerable.
	Answers() bool
	Samples() bool
	// Follow prepares the follow of one task; nothing is sent before FollowRun.Run.
	Follow(t FollowedTask) FollowRun
}

// FollowRun is the follow of one task.
type FollowRun interface {
	// Run follows the task until it ends, or until ctx ends, and says how it ended.
	Run(ctx context.Context) TaskEnd
	// Cancel cancels the task on the server (the host cancelled its call).
	Cancel()
	// Stop stops following; the task keeps running (the host went away).
	Stop()
}

// FollowedTask is one task a bridged call made (or is answering), and how to reach its server
// and its host.
type FollowedTask struct {
	ID, Tool string
	// Task is the task as last seen; nil to ask the server first.
	Task *rpc.Task
	// Created is set when this call made the task.
	Created bool
	// ServerName and ServerKey name the server as the ledger does.
	ServerName, ServerKey string
	// Transport reaches the server; Client holds the client's protocol version and name, Era
	// and Session the era and the host's session the client assumes.
	Transport rpc.Transport
	Client    rpc.ClientOptions
	Era       rpc.Era
	Session   string
	// Where a question goes. With HostCan nil, to AskHost first (a 2025-11-25 host that
	// declared the capability), then to --on-input. Else (a 2026-07-28 host that declared
	// what it can answer), HostAnswers (the host's answers of a retried round) answer what
	// HostCan says the host can, and --on-input the rest.
	AskHost     func(ctx context.Context, q Question) (json.RawMessage, bool, error)
	HostCan     func(q Question) bool
	HostAnswers map[string]json.RawMessage
	// OnStatus is told of every status the follower sees (via is "push" or "poll"), OnRetry
	// of an error it retries after.
	OnStatus func(t *rpc.Task, via string)
	OnRetry  func(err error)
}

// Question is one question a task asks: its key (the inputRequests key, or one the follower
// made up for a 2025-11-25 request), method and params.
type Question struct {
	Key    string
	Method string
	Params json.RawMessage
}

// TaskEndKind says how the follow of a bridged task ended.
type TaskEndKind uint8

// The ends of a bridged task's follow.
const (
	// TaskLost: the follower gave no outcome at all.
	TaskLost TaskEndKind = iota
	// TaskResult: the task completed or failed (Result or Error).
	TaskResult
	// TaskCancelled: the task was cancelled.
	TaskCancelled
	// TaskInputRequired: the task waits for input nobody here could give (Questions).
	TaskInputRequired
	// TaskExpired: the server no longer knows the task.
	TaskExpired
	// TaskStopped: following ended early (Err says why, when known); the task may still run.
	TaskStopped
)

// TaskEnd is how the follow of a bridged task ended.
type TaskEnd struct {
	Kind TaskEndKind
	// Result is the task's CallToolResult, Error the JSON-RPC error it failed with
	// (TaskResult).
	Result json.RawMessage
	Error  *rpc.Error
	// Questions are the questions left open (TaskInputRequired).
	Questions []Question
	// Err is what ended the follow (TaskStopped).
	Err error
}
