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
	"github.com/mcptask/mcptask/internal/termsafe"
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
		Long: `Call a tool with tools/call, asking for a task where the server and tool allow it. A
plain result is printed when it comes, a task's when it ends, with one line per status change
(on a terminal, the live view or progress) on stderr. A misspelled tool or argument, or a ledger that cannot be
written, stops the call before anything is sent.

--detach prints an id that 'mcptask result' answers: a task's, or the local-... id of a plain
result kept in the ledger (--json says which). Without a terminal, a question nobody answers
(no --answer, --answers or --on-input) ends the call with exit 5 and the questions as JSON.`,
		Example: `  mcptask call echo --arg text=hello --server http://127.0.0.1:8080/mcp
  mcptask call sleep --args '{"seconds": 10}' --timeout 1m
  id=$(mcptask call sleep --arg seconds=600 --detach) && echo "started $id"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeToolNames(f),
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
	c.Flags().StringVar(&opts.ArgsJSON, "args", "", "tool arguments as a `JSON` object, @file.json, or @- for stdin")
	c.Flags().StringArrayVar(&opts.Arg, "arg", nil, "one tool argument `key=value`, typed by the inputSchema (repeatable)")
	c.Flags().DurationVar(&opts.TTL, "ttl", 0, "requested task lifetime (MCP 2025-11-25; the server may change it)")
	c.Flags().BoolVar(&opts.Detach, "detach", false, "print only the task id and exit once the task is created")
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up after `D` (exit 124, the task runs on); 0 checks once (exit 8)")
	c.Flags().DurationVar(&opts.Interval, "interval", 0, "poll no faster than every `D` (only slows the server's interval)")
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
	// A task id is written down before anything is printed about it: a ledger that could not
	// keep it stops the call before the server is asked for a task.
	if err := f.writableLedger(); err != nil {
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
	if res.Kind == rpc.KindComplete && opts.Detach {
		return opts.keepResult(c, ref, res)
	}
	if res.Kind != rpc.KindTask {
		env, text, code, err := output.Called(opts.Tool, res, c.Era(), ref.String())
		p := f.printer()
		return cmp.Or(p.Print(env, writeText(p.ResultText(env, text))), exitErr(code, err))
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
// questions (C26-MRTR §Server Requirements): the live view on a terminal, --answer, or, with
// --on-input fail, a later 'mcptask update' (the call ends with exit 5 and the questions).
// Plain call polls only.
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

// keepResult is --detach answered without a task: a script that asked for an id gets one,
// never the result in its place. The result is kept in the ledger under a local id
// (state.LocalPrefix), which is printed; 'mcptask result ID' gives the result back and 'get'
// says it completed. --json says so with "local": true. Should the ledger refuse it after all,
// the result is printed rather than lost, with exit 1.
func (opts *CallOptions) keepResult(c *rpc.Client, ref ServerRef, res *rpc.CallResult) error {
	f := opts.f
	now := f.Now().UTC()
	r := state.Record{
		TaskID: state.LocalPrefix + uuid.NewString(), Server: toServer(ref), Era: string(c.Era()), Protocol: c.ProtocolVersion(),
		Tool: opts.Tool, CreatedAt: now, LastUpdatedAt: now, Status: string(rpc.StatusCompleted),
		StatusMessage: "answered at once, without a task", Local: true, Result: res.Tool.Raw,
	}
	f.connector().Sign(&r)
	st, err := f.ledger()
	if err == nil {
		err = st.Put(r)
	}
	if err != nil {
		env, text, _, _ := output.Called(opts.Tool, res, c.Era(), ref.String())
		perr := f.printer().Print(env, writeText(text))
		return cmp.Or(perr, error(&ExitError{Code: ExitFailure, Err: fmt.Errorf("tool %s answered at once, without a task, and its result could not be kept in the ledger (%w); it was printed instead of an id", opts.Tool, err)}))
	}
	fmt.Fprintf(f.IO.ErrOut, "mcptask: %s answered at once, without a task; its result is kept in the ledger as %s ('mcptask result %s' prints it)\n",
		termsafe.Line(opts.Tool), r.TaskID, r.TaskID)
	return f.printer().Print(envelope{Type: "result", TaskID: r.TaskID, Status: rpc.StatusCompleted, Era: c.Era(), Server: ref.String(), Result: res.Tool.Raw, Local: true},
		func(w io.Writer) error { _, err := fmt.Fprintln(w, r.TaskID); return err })
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
