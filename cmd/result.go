package cmd

import (
	"context"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/cobra"
)

// ResultOptions are the inputs of `mcptask result`.
type ResultOptions struct {
	f      *Factory
	TaskID string
	WaitFlags
	AnswerFlags
}

// NewCmdResult returns `mcptask result`.
func NewCmdResult(f *Factory, runF func(context.Context, *ResultOptions) error) *cobra.Command {
	opts := &ResultOptions{f: f}
	c := &cobra.Command{
		Use:   "result <task-id>",
		Short: "Wait for a task to end and print its result",
		Long: `Print the result of a task, waiting for it to end first.

On MCP 2025-11-25 the result comes from tasks/result; on MCP 2026-07-28 it is the
result (or error) inlined in tasks/get. While the task runs, mcptask polls tasks/get at
the server's interval and prints one line per status change on stderr.

EXIT STATUS
  0 completed with a non-error result; 1 transport or protocol error; 3 the task failed
  or its result has isError; 4 cancelled; 5 input required; 6 expired or unknown;
  7 auth; 8 still running at --timeout 0; 124 --timeout; 130 interrupted.`,
		Example: `  mcptask result "$id" --server http://127.0.0.1:8080/mcp --timeout 10m
  mcptask result "$id" --json | jq '.result.content[0].text'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskID = args[0]
			if err := opts.WaitFlags.resolve(c); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runResult(c.Context(), opts)
		},
	}
	opts.WaitFlags.AddFlags(c)
	opts.AnswerFlags.AddFlags(c.Flags())
	f.Workflow.AddFlags(c.Flags())
	return c
}

func runResult(ctx context.Context, opts *ResultOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In, f.IO.ErrOut)
	if err != nil {
		return err
	}
	if _, err := opts.AnswerFlags.onInput(false); err != nil {
		return err // result never shows the live view: prompt is refused
	}
	rec, err := f.findTask(opts.TaskID)
	if err != nil {
		return err
	}
	ref, err := f.refOf(rec)
	if err != nil {
		return err
	}
	deadline := f.deadline(opts.Timeout)
	wctx, cancel := withDeadline(ctx, deadline)
	defer cancel()
	rep := newReporter(f, "result", opts.Timeout, false)
	rep.server(ref.String(), ref)
	e := f.newEngine(followOptions{Deadline: deadline, Interval: opts.Interval, Once: opts.Once, Answers: answers, NoPush: true}, newProgressPrinter(f), rep)
	srv := e.Server(ref.String(), toServer(ref).Key())
	c, _, err := f.connectFound(wctx, rec, srv.ClientOptions(rpc.ClientOptions{}))
	if err != nil {
		return err
	}
	defer c.Close()
	// The first look is one tasks/get: bounded like the opening, and by --timeout.
	led := f.newLedger()
	t, err := follow.Look(wctx, c, follow.LookRequest{TaskID: opts.TaskID, Key: toServer(ref).Key(), Record: rec, Ledger: led, Guard: f.guard(ref)})
	led.Close()
	if err != nil {
		return taskErr(opts.TaskID, err)
	}
	tg := follow.Target{ID: opts.TaskID, Task: t, Record: rec}
	if rec != nil {
		tg.Tool = rec.Tool
	}
	srv.Follow(c, tg)
	e.Run(ctx)
	return rep.err
}
