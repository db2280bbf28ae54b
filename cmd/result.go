package cmd

import (
	"cmp"
	"context"
	"fmt"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/tui"
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
the server's interval and prints one line per status change on stderr. On a terminal
the live view shows the task instead (keys: i answer, c cancel, q detach, ? help).

A task whose outcome was shown stays in the ledger, finished, so asking again works
(until 'mcptask prune' or 'forget'). A local id (local-...) is a result the server gave
at once to 'call --detach', kept in the ledger: it is printed with nothing sent.

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
	onInput, err := opts.AnswerFlags.onInput(f.useTUI())
	if err != nil {
		return err
	}
	// On a terminal the live view shows the task until it ends, as call, watch and resume do.
	live := onInput == "prompt" && !opts.Once && opts.Timeout == 0
	rec, err := f.findTask(opts.TaskID)
	if err != nil {
		return err
	}
	opts.TaskID = wholeID(opts.TaskID, rec)
	if rec != nil && rec.Local {
		return showLocal(f, rec)
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
	sinks := []follow.Sink{newProgressPrinter(f), rep}
	var feed *tui.Feed
	if live {
		feed = tui.NewFeed()
		rep.hold = true
		sinks = []follow.Sink{viewSink{feed}, rep}
	}
	e := f.newEngine(followOptions{Deadline: deadline, Interval: opts.Interval, Once: opts.Once, Answers: answers, Live: live, NoPush: !live}, sinks...)
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
	if live {
		initial := map[string]tui.Snapshot{opts.TaskID: snapshot(follow.Event{Tool: tg.Tool, Server: ref.String(), Era: c.Era()}, t)}
		return runLive(ctx, f, e, feed, rep, []string{opts.TaskID}, initial, tui.Options{})
	}
	e.Run(ctx)
	return rep.err
}

// showLocal prints the result kept in local record rec (call --detach answered without a
// task) as 'result' prints a task's, exit 3 for isError, and marks it shown; it stays for
// another look until prune or forget. Nothing is sent.
func showLocal(f *Factory, rec *state.Record) error {
	tr, err := rpc.DecodeToolResult(rec.Result)
	if err != nil {
		return fmt.Errorf("the result kept for %s in the ledger does not read: %w", rec.TaskID, err)
	}
	env, text, code, rerr := output.Result(tr, nil, rpc.Era(rec.Era), fromServer(rec.Server).String())
	env.TaskID, env.Status, env.Local = rec.TaskID, rpc.StatusCompleted, true
	led := f.newLedger()
	led.Shown(rec.Server.Key(), rec.TaskID, true)
	led.Close()
	return cmp.Or(f.printer().Print(env, writeText(text)), exitErr(code, rerr))
}
