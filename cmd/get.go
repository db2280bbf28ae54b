package cmd

import (
	"context"
	"io"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/cobra"
)

// GetOptions are the inputs of `mcptask get`.
type GetOptions struct {
	f      *Factory
	TaskID string
}

// NewCmdGet returns `mcptask get`.
func NewCmdGet(f *Factory, runF func(context.Context, *GetOptions) error) *cobra.Command {
	opts := &GetOptions{f: f}
	return &cobra.Command{
		Use:   "get <task-id>",
		Short: "Show a task's current status (one tasks/get)",
		Long: `Send one tasks/get and show the task: status, message, times, TTL left and, on
MCP 2026-07-28, any outstanding input requests. It never waits.

EXIT STATUS
  0 the server answered; 1 transport or protocol error; 6 the server does not know the
  task (expired or never existed); 7 auth. See 'mcptask help exit-codes'.`,
		Example: `  mcptask get 786512e2-9e0d-44bd-8f29-789f320fe840 --server http://127.0.0.1:8080/mcp
  mcptask get "$id" --json | jq -r .status`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskID = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runGet(c.Context(), opts)
		},
	}
}

func runGet(ctx context.Context, opts *GetOptions) error {
	f := opts.f
	if rec, err := f.findTask(opts.TaskID); err == nil && rec != nil && rec.Local {
		// A result kept by call --detach: it completed when the server answered; nothing is sent.
		t := &rpc.Task{TaskID: rec.TaskID, Status: rpc.StatusCompleted, StatusMessage: rec.StatusMessage, CreatedAt: rec.CreatedAt, LastUpdatedAt: rec.LastUpdatedAt}
		ref := fromServer(rec.Server)
		return f.printer().Print(envelope{Type: "task", TaskID: rec.TaskID, Status: t.Status, Era: rpc.Era(rec.Era), Server: ref.String(), Local: true},
			func(w io.Writer) error {
				output.Task(w, t, rpc.Era(rec.Era), ref.String(), f.Now(), f.statusStyle())
				return nil
			})
	}
	c, ref, rec, err := f.connectTask(ctx, opts.TaskID, rpc.ClientOptions{})
	if err != nil {
		return err
	}
	opts.TaskID = wholeID(opts.TaskID, rec)
	defer c.Close()
	led := f.newLedger()
	defer led.Close()
	// get never waits: its one tasks/get is bounded like the opening (--connect-timeout).
	t, err := follow.Look(ctx, c, follow.LookRequest{TaskID: opts.TaskID, Key: toServer(ref).Key(), Record: rec, Ledger: led, Status: true, Guard: f.guard(ref)})
	if err != nil {
		return taskErr(opts.TaskID, err)
	}
	return f.printer().Print(envelope{Type: "task", TaskID: t.TaskID, Status: t.Status, Era: c.Era(), Server: ref.String(), Task: t.Raw},
		func(w io.Writer) error {
			output.Task(w, t, c.Era(), ref.String(), f.Now(), f.statusStyle())
			return nil
		})
}

// taskErr maps a failed tasks/* request: -32602 means the server does not know the task.
func taskErr(id string, err error) error {
	if rpc.IsUnknownTask(err) {
		return &ExitError{Code: ExitExpired, Err: err}
	}
	return err
}
