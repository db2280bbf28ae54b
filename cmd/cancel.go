package cmd

import (
	"context"
	"fmt"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// CancelOptions are the inputs of `mcptask cancel`.
type CancelOptions struct {
	f      *Factory
	TaskID string
}

// NewCmdCancel returns `mcptask cancel`.
func NewCmdCancel(f *Factory, runF func(context.Context, *CancelOptions) error) *cobra.Command {
	opts := &CancelOptions{f: f}
	return &cobra.Command{
		Use:   "cancel <task-id>",
		Short: "Ask the server to cancel a task (tasks/cancel)",
		Long: `Send tasks/cancel and print what the server acknowledged.

On MCP 2025-11-25 the server moves the task to cancelled before it answers, and refuses
to cancel a task that has already ended. On MCP 2026-07-28 cancellation is cooperative:
the answer is only an acknowledgement, and the task may still complete or fail.

EXIT STATUS
  0 the server accepted the cancellation; 1 transport or protocol error (including a
  task that has already ended, on 2025-11-25); 6 the server does not know the task;
  7 auth. See 'mcptask help exit-codes'.`,
		Example: `  mcptask cancel "$id" --server http://127.0.0.1:8080/mcp`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskID = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runCancel(c.Context(), opts)
		},
	}
}

func runCancel(ctx context.Context, opts *CancelOptions) error {
	f := opts.f
	c, ref, rec, err := f.connectTask(ctx, opts.TaskID, rpc.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	out := &outcome{f: f, c: c, ref: ref}
	t, ack, err := c.CancelTask(ctx, opts.TaskID)
	if err != nil {
		if rec != nil && rpc.IsUnknownTask(err) {
			out.markExpired(opts.TaskID)
		}
		return taskErr(opts.TaskID, err)
	}
	if rec != nil && t != nil {
		// 2025-11-25 answers with the task, already cancelled. The record (and the session
		// the task lives in) stays until 'mcptask result' has shown the outcome or 'prune'.
		out.saveStatus(ctx, t)
	}
	if f.Global.JSON {
		e := envelope{Type: "cancel", TaskID: opts.TaskID, Era: c.Era(), Server: ref.String(), Ack: ack}
		if t != nil {
			e.Status, e.Task = t.Status, t.Raw
		}
		return writeJSON(f.IO.Out, e)
	}
	if t != nil {
		// C25-TASKS §Task Cancellation: the server MUST move the task to cancelled first.
		msg := fmt.Sprintf("task %s is %s", termsafe.Line(t.TaskID), t.Status)
		if t.StatusMessage != "" {
			msg += ": " + termsafe.Line(t.StatusMessage)
		}
		fmt.Fprintln(f.IO.Out, msg)
		return nil
	}
	// EXT §Task Cancellation: the ack does not mean the task is cancelled.
	fmt.Fprintf(f.IO.Out, "cancellation of task %s requested\n", termsafe.Line(opts.TaskID))
	fmt.Fprintf(f.IO.ErrOut, "Cancellation is cooperative on MCP %s: the task may still complete or fail.\nFollow it with: %s\n", c.Era(), followHint(ref, opts.TaskID))
	return nil
}
