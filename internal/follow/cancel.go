package follow

import (
	"context"
	"encoding/json"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// CancelRequest is one task to cancel (mcptask cancel).
type CancelRequest struct {
	TaskID string
	// Key is the ledger key of the task's server; Record its ledger record, nil when it has none.
	Key    string
	Record *state.Record
	// Ledger is the state file the record is kept in step with; nil writes nothing. Warn gets
	// a line for every ledger write that failed.
	Ledger *state.Store
	Warn   func(string)
	// Guard bounds each wait for an answer.
	Guard Guard
	// Follow, when set, follows the task to its real end after the acknowledgement (cancel
	// --wait), as a task of the server named Server. The engine should leave results
	// (Options.LeaveResults): a task that completes anyway keeps its record for 'mcptask result'.
	Follow *Engine
	Server string
}

// Cancelled is what Cancel learnt.
type Cancelled struct {
	// Acked reports that the server accepted the cancellation.
	Acked bool
	// Ack is the answer to tasks/cancel as received (on 2026-07-28 only an acknowledgement).
	Ack json.RawMessage
	// Task is the 2025-11-25 answer to tasks/cancel: the task, already cancelled; nil after a
	// bare acknowledgement.
	Task *rpc.Task
	// Outcome is how the followed task ended (with Follow, once the task was followed).
	Outcome *Outcome
}

// Cancel sends tasks/cancel for one task on c, keeps its ledger record in step, and with
// r.Follow follows it to its real end. The era decides what the answer means: on 2025-11-25
// the server moves the task to cancelled before it answers, and answers with the task (C25-TASKS
// §Task Cancellation), which the record takes; on 2026-07-28 the answer is only an
// acknowledgement, and the task may still complete or fail (EXT §Task Cancellation), so a
// follow first asks tasks/get. A task the server does not know is marked expired.
//
// wctx bounds the requests (the command's --timeout), ctx the follow (whose engine has its own
// deadline). Cancel's own ledger changes are written before the follow starts, so the engine's changes
// (which drop or keep the record) always land after them.
func Cancel(ctx, wctx context.Context, c *rpc.Client, r CancelRequest) (Cancelled, error) {
	var out Cancelled
	led := ledger.New(r.Ledger, ledger.Options{OnError: func(err error) {
		if r.Warn != nil {
			r.Warn(err.Error())
		}
	}})
	t, err := r.cancel(wctx, c, led, &out)
	led.Close()
	if err != nil || r.Follow == nil {
		return out, err
	}
	r.Follow.Server(r.Server, r.Key).Follow(c, Target{ID: r.TaskID, Task: t, Record: r.Record})
	o := r.Follow.Run(ctx)[0]
	out.Outcome = &o
	return out, nil
}

// cancel sends tasks/cancel and, to follow, makes sure of the task; it returns the task as
// last seen.
func (r CancelRequest) cancel(ctx context.Context, c *rpc.Client, led *ledger.Writer, out *Cancelled) (*rpc.Task, error) {
	err := r.Guard.run(ctx, "tasks/cancel", func(ctx context.Context) (err error) {
		out.Task, out.Ack, err = c.CancelTask(ctx, r.TaskID)
		return err
	})
	if err != nil {
		out.Task = nil
		if r.Record != nil && rpc.IsUnknownTask(err) {
			led.Expired(r.Key, r.TaskID)
		}
		return nil, err
	}
	out.Acked = true
	if out.Task != nil && r.Record != nil {
		// The record (and the session the task lives in) stays until 'mcptask result' has
		// shown the outcome or 'prune'.
		led.Status(r.Key, out.Task)
	}
	if r.Follow == nil || out.Task != nil {
		return out.Task, nil
	}
	var t *rpc.Task
	err = r.Guard.run(ctx, "tasks/get", func(ctx context.Context) (err error) {
		t, err = c.GetTask(ctx, r.TaskID)
		return err
	})
	if err != nil && rpc.IsUnknownTask(err) {
		led.Expired(r.Key, r.TaskID)
	}
	return t, err
}
