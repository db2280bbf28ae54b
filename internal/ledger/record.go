package ledger

import (
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// Origin is where a task was created: what its record keeps besides what the server says
// about the task.
type Origin struct {
	// Server says how to reach the server again; it holds no secret.
	Server state.Server
	// Era and Protocol are the negotiated era ("2025-11-25", "2026-07-28") and version.
	Era, Protocol string
	// SessionID is the 2025-11-25 session the task was created in.
	SessionID string
	// Tool is the tool called.
	Tool string
	// Via is "proxy" for a task a host created through `mcptask proxy`.
	Via string
}

// NewRecord builds the record of task t, just created as o says. A task without a creation
// time counts from now.
func NewRecord(o Origin, t *rpc.Task, now time.Time) state.Record {
	r := state.Record{TaskID: t.TaskID, Server: o.Server, Era: o.Era, Protocol: o.Protocol,
		SessionID: o.SessionID, Tool: o.Tool, CreatedAt: t.CreatedAt, Via: o.Via}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	ApplyTask(&r, t)
	return r
}

// ApplyTask copies what the server said about t into r. A good update clears the last error.
func ApplyTask(r *state.Record, t *rpc.Task) {
	if t.TTL != nil {
		ms := state.Millis(t.TTL.Milliseconds())
		r.TTL = &ms
	} else {
		r.TTL = nil
	}
	if t.PollInterval > 0 {
		r.PollInterval = state.Millis(t.PollInterval.Milliseconds())
	}
	r.Status = string(t.Status)
	r.StatusMessage = t.StatusMessage
	r.LastError = ""
	if !t.LastUpdatedAt.IsZero() {
		r.LastUpdatedAt = t.LastUpdatedAt
	}
}
