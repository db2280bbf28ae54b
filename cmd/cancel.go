package cmd

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
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
	id = wholeID(id, rec)
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
	e, text, note, code, verr := output.Cancel(id, c.Era(), ref, out, opts.Timeout)
	if err != nil {
		return &e, taskErr(id, err)
	}
	if p := f.printer(); !p.JSON() {
		fmt.Fprint(f.IO.Out, text)
		fmt.Fprint(f.IO.ErrOut, note)
		if text != "" && code != ExitOK {
			return &e, &ExitError{Code: code, Err: verr, Silent: true} // the text said it
		}
	}
	return &e, exitErr(code, verr)
}
