package cmd

import (
	"context"

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
  7 auth; 124 --timeout; 130 interrupted. See 'mcptask help exit-codes'.`,
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
	return c
}

func runResult(ctx context.Context, opts *ResultOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In)
	if err != nil {
		return err
	}
	if _, err := opts.AnswerFlags.onInput(false); err != nil {
		return err // result never shows the live view: prompt is refused
	}
	printer := newProgressPrinter(f.IO.ErrOut, f.Now)
	copts := answerOptions(rpc.ClientOptions{OnNotify: notifyPrinter(printer)}, answers, func(msg string) { printer.Note(opts.TaskID, msg) })
	c, ref, rec, err := f.connectTask(ctx, opts.TaskID, copts)
	if err != nil {
		return err
	}
	defer c.Close()
	wctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	out := &outcome{f: f, c: c, ref: ref, answers: answers, answered: map[string]bool{}}
	if rec != nil {
		for _, k := range rec.AnsweredKeys {
			out.answered[k] = true
		}
	}
	t, err := c.GetTask(wctx, opts.TaskID)
	if err != nil {
		if rec != nil && rpc.IsUnknownTask(err) {
			out.markExpired(opts.TaskID)
		}
		return taskErr(opts.TaskID, err)
	}
	if !t.Status.Terminal() {
		printer.Task(t)
	}
	return out.follow(wctx, ctx, t, pollOptions{UserMin: opts.Interval, StopOnInput: true, Once: opts.Once}, printer, opts.Timeout)
}
