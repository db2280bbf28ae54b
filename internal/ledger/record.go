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
	applyTask(&r, t, now.UTC())
	return r
}

// SeenEvery is how stale a record's SeenAt may grow while the status it records does not
// change: a poll that sees the same status again moves SeenAt only once it is this old, so
// that following a task that says nothing new does not rewrite the ledger at every poll
// (state.Store.PatchMany leaves an unchanged record unwritten).
const SeenEvery = 30 * time.Second

// ApplyTask copies what the server said about t, just now, into r. A good update clears the
// last error.
func ApplyTask(r *state.Record, t *rpc.Task) { applyTask(r, t, time.Now().UTC()) }

func applyTask(r *state.Record, t *rpc.Task, seen time.Time) {
	before := *r
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
	r.SeenAt = seen
	if sameStatus(before, *r) && seen.Sub(before.SeenAt) < SeenEvery && !before.SeenAt.After(seen) {
		r.SeenAt = before.SeenAt
	}
}

// sameStatus reports whether a and b record the same status of their task (all that
// applyTask writes but SeenAt).
func sameStatus(a, b state.Record) bool {
	return a.Status == b.Status && a.StatusMessage == b.StatusMessage && a.LastError == b.LastError &&
		a.PollInterval == b.PollInterval && a.LastUpdatedAt.Equal(b.LastUpdatedAt) &&
		(a.TTL == nil) == (b.TTL == nil) && (a.TTL == nil || *a.TTL == *b.TTL)
}
