package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// CancelOptions are the inputs of `mcptask cancel`.
type CancelOptions struct {
	f        *Factory
	TaskIDs  []string
	Wait     bool
	Timeout  time.Duration
	Interval time.Duration
}

// NewCmdCancel returns `mcptask cancel`.
func NewCmdCancel(f *Factory, runF func(context.Context, *CancelOptions) error) *cobra.Command {
	opts := &CancelOptions{f: f}
	c := &cobra.Command{
		Use:   "cancel <task-id>...",
		Short: "Ask the server to cancel tasks (tasks/cancel)",
		Long: `Send tasks/cancel and print what the server acknowledged.

On MCP 2025-11-25 the server moves the task to cancelled before it answers, and refuses
to cancel a task that has already ended. On MCP 2026-07-28 cancellation is cooperative:
the answer is only an acknowledgement, and the task may still complete or fail.

With --wait, mcptask then follows each task to its real end and says honestly how it
ended: cancelled, or completed or failed because the cancellation came too late.

EXIT STATUS
  0 the server accepted the cancellation (with --wait: the task ended cancelled, or
  completed anyway); 1 transport or protocol error (including a task that has already
  ended, on 2025-11-25); 3 with --wait, the task failed anyway; 6 the server does not
  know the task; 7 auth; 124 --timeout reached. With several ids, the most severe.
  See 'mcptask help exit-codes'.`,
		Example: `  mcptask cancel "$id"
  mcptask cancel "$a" "$b" --wait --timeout 2m --json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskIDs = args
			if opts.Timeout < 0 || opts.Interval < 0 {
				return flagErrorf("--timeout and --interval must not be negative")
			}
			if !opts.Wait && c.Flags().Changed("timeout") {
				return flagErrorf("--timeout applies to cancel --wait only")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runCancel(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.Wait, "wait", false, "follow each task to its real end after the cancellation is acknowledged")
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up waiting after this long (exit 124)")
	c.Flags().DurationVar(&opts.Interval, "interval", 0, "with --wait, poll no faster than this")
	f.Workflow.AddFlags(c.Flags())
	return c
}

func runCancel(ctx context.Context, opts *CancelOptions) error {
	f, p := opts.f, opts.f.printer()
	// --timeout bounds the whole command: every cancellation and every wait after it.
	deadline := f.deadline(opts.Timeout)
	if len(opts.TaskIDs) == 1 {
		e, err := cancelOne(ctx, deadline, opts, opts.TaskIDs[0])
		if e != nil {
			return cmp.Or(p.Print(*e, nil), err)
		}
		return err
	}
	var results []envelope
	var codes []int
	for _, id := range opts.TaskIDs {
		e, err := cancelOne(ctx, deadline, opts, id)
		code := exitCode(ctx, err)
		if e == nil {
			e = &envelope{Type: "error", TaskID: id}
		}
		e.Code = &code
		if err != nil {
			e.Message = termsafe.Cut(f.redactor().Text(err.Error()))
			fmt.Fprintf(f.IO.ErrOut, "mcptask: %s\n", f.errorText(err))
		}
		results = append(results, *e)
		codes = append(codes, code)
	}
	if err := p.Print(envelope{Type: "cancel", Tasks: results}, nil); err != nil {
		return err
	}
	if code := worstCode(codes); code != ExitOK {
		return &ExitError{Code: code, Err: fmt.Errorf("%d of %d cancellation(s) did not end well", countBad(codes), len(codes)), Silent: !p.JSON()}
	}
	return nil
}

// cancelOne cancels one task and, with --wait, follows it to its end. The envelope is what
// --json shows for it.
func cancelOne(ctx context.Context, deadline time.Time, opts *CancelOptions, id string) (*envelope, error) {
	f := opts.f
	wctx, cancel := withDeadline(ctx, deadline)
	defer cancel()
	c, ref, rec, err := f.connectTask(wctx, id, rpc.ClientOptions{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	req := follow.CancelRequest{TaskID: id, Key: toServer(ref).Key(), Record: rec, Guard: f.guard(ref), Warn: func(msg string) { f.warnf("%s", msg) }}
	if st, err := f.ledger(); err == nil {
		req.Ledger = st
	}
	if opts.Wait {
		// Follow the task to its real end (EXT §Task Cancellation: a task may still complete
		// or fail after a cancellation request). A result is left for 'mcptask result'.
		f.wf.server(ref.String(), ref)
		f.wf.setTimeout(opts.Timeout)
		req.Server = ref.String()
		req.Follow = f.newEngine(followOptions{Deadline: deadline, Interval: opts.Interval, NoPush: true, LeaveResults: true}, newProgressPrinter(f))
	}
	out, err := follow.Cancel(ctx, wctx, c, req)
	if !out.Acked {
		return nil, taskErr(id, err)
	}
	e := &envelope{Type: "cancel", TaskID: id, Era: c.Era(), Server: ref.String(), Ack: out.Ack}
	if t := out.Task; t != nil {
		e.Status, e.Task = t.Status, t.Raw
	}
	switch {
	case err != nil:
		return e, taskErr(id, err)
	case out.Outcome != nil:
		return e, opts.verdict(*out.Outcome, e, ref, id)
	case f.printer().JSON():
	case out.Task != nil:
		// C25-TASKS §Task Cancellation: the server MUST move the task to cancelled first.
		msg := fmt.Sprintf("task %s is %s", termsafe.Line(out.Task.TaskID), out.Task.Status)
		if out.Task.StatusMessage != "" {
			msg += ": " + termsafe.Line(out.Task.StatusMessage)
		}
		fmt.Fprintln(f.IO.Out, msg)
	default:
		// EXT §Task Cancellation: the ack does not mean the task is cancelled.
		fmt.Fprintf(f.IO.Out, "cancellation of task %s requested\n", termsafe.Line(id))
		fmt.Fprintf(f.IO.ErrOut, "Cancellation is cooperative on MCP %s: the task may still complete or fail.\nFollow it with: %s (or use --wait)\n", c.Era(), followHint(ref, id))
	}
	return e, nil
}

// verdict says how a task followed after its cancellation really ended, into e and on stdout.
func (opts *CancelOptions) verdict(o follow.Outcome, e *envelope, ref ServerRef, id string) error {
	p := opts.f.printer()
	switch o.End {
	case follow.EndCancelled, follow.EndResult:
	default:
		_, _, err := describe(o, ref, opts.Timeout)
		return err
	}
	last := o.Task
	e.Status, e.Task = last.Status, last.Raw
	var verdict string
	var result error
	switch last.Status {
	case rpc.StatusCancelled:
		verdict = "cancelled" // and the record is gone: nothing more to show
	case rpc.StatusCompleted:
		// The record stays until 'mcptask result' shows what the task produced.
		verdict = "completed anyway: the cancellation came too late; its result: " + followHint(ref, id)
	default:
		verdict = "failed anyway: the cancellation came too late; details: " + followHint(ref, id)
		result = &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("task %s failed before the cancellation took effect", id), Silent: !p.JSON()}
	}
	_ = p.Print(nil, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "task %s %s\n", termsafe.Line(id), verdict)
		return err
	})
	return result
}
