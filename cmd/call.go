package cmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/toolargs"
	"github.com/mcptask/mcptask/internal/tui"
	"github.com/spf13/cobra"
)

// CallOptions are the inputs of `mcptask call`.
type CallOptions struct {
	f *Factory

	Tool     string
	ArgsJSON string
	Arg      []string
	TTL      time.Duration
	Detach   bool
	Timeout  time.Duration
	Interval time.Duration
	// Once is --timeout 0: check once and exit (8 when still running).
	Once bool
	AnswerFlags
	// server is the URL of the demo's own server when `mcptask demo` runs the call.
	server string
}

// NewCmdCall returns `mcptask call`. runF replaces runCall in tests.
func NewCmdCall(f *Factory, runF func(context.Context, *CallOptions) error) *cobra.Command {
	opts := &CallOptions{f: f}
	c := &cobra.Command{
		Use:   "call <tool> [--args JSON | --args @file | --arg key=value...]",
		Short: "Call a tool, and follow the task it starts to its end",
		Long: `Call a tool with tools/call, asking for a task where the server and tool allow it.

A plain result is printed when the call answers; until then a terminal shows a spinner
and the notifications/progress the server sends. A task is polled with tasks/get at the
interval the server suggests (re-read on every answer), with one line per status change
on stderr, and its result is printed on stdout when it ends. With --detach, only the task id is
printed, for a later 'mcptask get', 'result' or 'cancel'.

Arguments come from --args (a JSON object, or @file.json, or @- for stdin) and from
--arg key=value, whose values are typed from the tool's inputSchema (numbers, booleans,
objects); --arg wins over --args for the same key.

On MCP 2025-11-25 a task is requested only when the server declares task support for
tools/call and the tool's execution.taskSupport is "optional" or "required"; --ttl asks
for a task lifetime. On MCP 2026-07-28 the server alone decides whether to answer with
a task.

EXIT STATUS
  0 completed with a non-error result, or --detach printed the id; 1 transport or
  protocol error; 2 usage error (nothing sent); 3 task failed or isError; 4 cancelled;
  5 input required; 6 expired or unknown; 7 auth; 124 --timeout; 130 interrupted.
  See 'mcptask help exit-codes'.`,
		Example: `  mcptask call echo --arg text=hello --server http://127.0.0.1:8080/mcp
  mcptask call sleep --args '{"seconds": 10}' --timeout 1m
  id=$(mcptask call sleep --arg seconds=600 --detach) && echo "started $id"`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Tool = args[0]
			opts.Once = c.Flags().Changed("timeout") && opts.Timeout == 0
			if opts.Timeout < 0 || opts.Interval < 0 || opts.TTL < 0 {
				return flagErrorf("--timeout, --interval and --ttl must not be negative")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runCall(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.ArgsJSON, "args", "", "tool arguments as a JSON object, or @file.json, or @- for stdin")
	c.Flags().StringArrayVar(&opts.Arg, "arg", nil, "one tool argument `key=value`, typed from the tool's inputSchema (repeatable)")
	c.Flags().DurationVar(&opts.TTL, "ttl", 0, "requested task lifetime (MCP 2025-11-25 only; the server may override it)")
	c.Flags().BoolVar(&opts.Detach, "detach", false, "print only the task id and exit once the task is created")
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up waiting after this long (exit 124); 0 checks once (exit 8 while still running); the task keeps running")
	c.Flags().DurationVar(&opts.Interval, "interval", 0, "poll no faster than this (can only slow the server's suggested interval)")
	opts.AnswerFlags.AddFlags(c.Flags())
	f.Workflow.AddFlags(c.Flags())
	addJSONLFlag(c, f)
	return c
}

// callInputs are what call reads before it connects: a usage error sends nothing.
type callInputs struct {
	args    map[string]any
	pairs   []toolargs.Pair
	answers follow.Answerer
	live    bool // a person answers and watches at a terminal
}

func (opts *CallOptions) inputs() (in callInputs, err error) {
	f := opts.f
	if in.args, err = toolargs.ParseJSON(opts.ArgsJSON, f.IO.In); err != nil {
		return in, argsErr(err)
	}
	if in.pairs, err = toolargs.ParsePairs(opts.Arg); err != nil {
		return in, argsErr(err)
	}
	if in.answers, err = opts.AnswerFlags.parse(f.IO.In, f.IO.ErrOut); err != nil {
		return in, err
	}
	onInput, err := opts.AnswerFlags.onInput(f.useTUI() && !opts.Detach)
	in.live = onInput == "prompt" && !opts.Once && opts.Timeout == 0 && !opts.Detach
	return in, err
}

func runCall(ctx context.Context, opts *CallOptions) error {
	f := opts.f
	in, err := opts.inputs()
	if err != nil {
		return err
	}
	ref, hdr, err := f.serverRefTo(opts.server)
	if err != nil {
		return err
	}
	// --timeout bounds the whole call from the start of the command: connecting, the
	// opening, OAuth, the tools/call and the follow after it.
	deadline := f.deadline(opts.Timeout)
	wctx, cancel := withDeadline(ctx, deadline)
	defer cancel()

	// The engine is built first, so that the client carries its hooks.
	v := opts.view(ref, deadline, in)
	srv := v.e.Server(ref.String(), toServer(ref).Key())
	// After --detach a later update, watch or resume answers the task's questions; a
	// 2025-11-25 session is initialized only once, so it must declare now what they can
	// answer, or the server fails the task when it asks.
	c, ref, err := f.connectRef(wctx, ref, hdr, srv.ClientOptions(rpc.ClientOptions{Elicitation: opts.Detach}))
	if err != nil {
		return err
	}
	defer c.Close()
	call := opts.mrtr(v.e, ref, in, v.printer)
	if v.spin != nil {
		// A person at the terminal sees the call wait, and its progress, until it answers;
		// the questions of a multi-round-trip call have the screen while they are asked.
		ask := call.Ask
		call.Ask = func(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			v.spin.Stop()
			defer v.spin.Start()
			return ask(ctx, reqs)
		}
		v.spin.Start()
	}
	res, err := follow.CallTool(ctx, wctx, c, call)
	if v.spin != nil {
		v.spin.Stop()
	}
	if err != nil {
		return exitErr(output.CallFailed(opts.Tool, err, errors.Is(context.Cause(wctx), errTimeout), opts.Timeout))
	}
	if res.Kind != rpc.KindTask {
		env, text, code, err := output.Called(opts.Tool, res, c.Era(), ref.String())
		return cmp.Or(f.printer().Print(env, writeText(text)), exitErr(code, err))
	}
	t := res.Task
	// The task id must be safe before anything is printed (PROTOCOL.md §5 rule 26).
	opts.save(ctx, c, ref, t)
	if opts.Detach {
		return f.printer().Print(envelope{Type: "created", TaskID: t.TaskID, Status: t.Status, Era: c.Era(), Server: ref.String(), Task: t.Raw},
			func(w io.Writer) error { _, err := fmt.Fprintln(w, t.TaskID); return err })
	}
	srv.Follow(c, follow.Target{ID: t.TaskID, Tool: opts.Tool, Task: t, Created: true, ProgressToken: call.Params.ProgressToken})
	if in.live {
		initial := map[string]tui.Snapshot{t.TaskID: snapshot(follow.Event{Tool: opts.Tool, Server: ref.String(), Era: c.Era()}, t)}
		return runLive(ctx, f, v.e, v.feed, v.rep, []string{t.TaskID}, initial, tui.Options{})
	}
	v.e.Run(ctx)
	return v.rep.err
}

// callView is the engine of a call and what shows its task.
type callView struct {
	e       *follow.Engine
	rep     *reporter
	printer *output.Progress
	feed    *tui.Feed    // the live view's, when a person watches
	spin    *callSpinner // the line a person sees while the call waits for its answer
}

// view builds the engine of a call. Elicitation is declared only when something can answer
// questions (C26-MRTR §Server Requirements): the live view on a terminal, or --answer. Plain
// call polls only.
func (opts *CallOptions) view(ref ServerRef, deadline time.Time, in callInputs) callView {
	f := opts.f
	v := callView{rep: newReporter(f, "call", opts.Timeout, false), printer: newProgressPrinter(f)}
	v.rep.server(ref.String(), ref)
	sinks := []follow.Sink{v.printer, v.rep}
	if in.live {
		v.feed = tui.NewFeed()
		v.rep.hold = true
		sinks = []follow.Sink{viewSink{v.feed}, v.rep}
		if f.IO.IsStderrTTY() {
			v.spin = newCallSpinner(f, opts.Tool)
			sinks = append(sinks, v.spin)
		}
	}
	v.e = f.newEngine(followOptions{Deadline: deadline, Interval: opts.Interval, Once: opts.Once, Answers: in.answers, Live: in.live, NoPush: !in.live}, sinks...)
	return v
}

// save writes the new task t to the ledger; a failure is a warning that names the id.
func (opts *CallOptions) save(ctx context.Context, c *rpc.Client, ref ServerRef, t *rpc.Task) {
	f := opts.f
	if err := recordTask(ctx, f, c, ref, opts.Tool, t); err != nil {
		var ce *state.CorruptError
		if errors.As(err, &ce) {
			f.warnf("%v; task %s was saved in the new ledger", ce, t.TaskID)
		} else {
			f.warnf("task %s was created but could not be saved in the ledger: %v; keep its id", t.TaskID, err)
		}
	}
}

// mrtr is the tools/call of call, with its multi-round-trip input (C26-MRTR): the answers
// given come first; on a terminal, the person answers the rest (the same forms as the live
// view).
func (opts *CallOptions) mrtr(e *follow.Engine, ref ServerRef, in callInputs, printer *output.Progress) follow.Call {
	call := follow.Call{
		Params: rpc.CallParams{
			Name: opts.Tool, Arguments: in.args, TTL: opts.TTL,
			ProgressToken: "mcptask-" + uuid.NewString(),
		},
		Pairs:    in.pairs,
		Guard:    opts.f.guard(ref),
		Answerer: e.Answerer(),
		About:    follow.Request{Tool: opts.Tool, Server: ref.String()},
	}
	if in.live {
		call.Ask = func(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			return askMRTR(ctx, opts.f, opts.Tool, reqs)
		}
	} else {
		call.Retry = func(keys []string) {
			printer.Note("-", "answered "+strings.Join(keys, ", ")+"; calling "+opts.Tool+" again")
		}
	}
	return call
}

// argsErr makes toolargs' usage errors FlagErrors (exit 2, nothing sent).
func argsErr(err error) error {
	if ue := (*exitcode.UsageError)(nil); errors.As(err, &ue) {
		return &FlagError{Err: ue.Err}
	}
	return err
}
