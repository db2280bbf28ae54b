package follow

import (
	"context"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// LookRequest is one task to look at once, without waiting (mcptask get, and the first look
// of mcptask result before its engine follows the task).
type LookRequest struct {
	TaskID string
	// Key is the ledger key of the task's server; Record its ledger record, nil when it has
	// none (then nothing is written).
	Key    string
	Record *state.Record
	// Ledger gets the changes; nil writes nothing.
	Ledger *ledger.Writer
	// Status writes the status seen into the record (get); result leaves that to its engine.
	Status bool
	// Guard bounds the wait for the answer.
	Guard Guard
}

// Look sends one tasks/get for r.TaskID on c and keeps the task's record in step: a task the
// server does not know (rpc.IsUnknownTask) is marked expired, and with r.Status the status
// seen is written.
func Look(ctx context.Context, c *rpc.Client, r LookRequest) (*rpc.Task, error) {
	var t *rpc.Task
	err := r.Guard.run(ctx, "tasks/get", func(ctx context.Context) (err error) {
		t, err = c.GetTask(ctx, r.TaskID)
		return err
	})
	switch {
	case r.Record == nil:
	case err != nil:
		if rpc.IsUnknownTask(err) {
			r.Ledger.Expired(r.Key, r.TaskID)
		}
	case r.Status:
		r.Ledger.Status(r.Key, t)
	}
	return t, err
}
