package cmd

import (
	"context"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/tui"
)

// The wiring between the commands that wait for tasks and the follow engine: which engine
// options their flags mean, which sinks show what happens, and how the outcomes end the
// command. Following itself is internal/follow's.

// requestTimeout bounds one tasks/get (follow.Options.RequestTimeout). A variable so fault
// tests can shorten it.
var requestTimeout = follow.DefaultRequestTimeout

// followOptions are what a command's flags ask of the engine.
type followOptions struct {
	Timeout, Interval time.Duration
	// Deadline, when set, ends the follow instead of Timeout (call counts --timeout from
	// before the tools/call).
	Deadline time.Time
	Once     bool
	Answers  follow.Answerer
	// Live is the live view: a person answers what Answers does not.
	Live bool
	// NoPush polls only, whatever --no-push says.
	NoPush bool
	// LeaveResults is cancel --wait: the result stays for 'mcptask result'.
	LeaveResults bool
}

// newEngine builds the follow engine for a command, reporting to sinks.
func (f *Factory) newEngine(o followOptions, sinks ...follow.Sink) *follow.Engine {
	opts := follow.Options{
		// An outcome that was shown stays answerable: 'mcptask result ID' again shows it (from
		// the server, while it knows the task), until 'mcptask prune' or 'forget'.
		Keep: true, Timeout: o.Timeout, Deadline: o.Deadline, MinInterval: o.Interval, Once: o.Once,
		NoPush: f.Global.NoPush || o.NoPush, Listen: o.Live, Later: !o.Live, LeaveResults: o.LeaveResults,
		RequestTimeout: requestTimeout, Warn: func(msg string) { f.warnf("%s", msg) },
	}
	if st, err := f.ledger(); err == nil {
		opts.Ledger = st
	}
	if o.Answers != nil {
		opts.Answerer = o.Answers
	}
	// The workflow sink comes last: a task's annotation follows its result and last lines.
	return follow.New(opts, append(sinks, f.wf)...)
}

// newLedger is the ledger writer of a command that changes records (get, cancel, update);
// failures of its batched writes are warnings. Close it before returning. A command that also
// follows should give the same writer to the engine (follow.Options.Writer) and close it
// after the run, so that its changes and the engine's land in the order they were made.
func (f *Factory) newLedger() *ledger.Writer {
	st, err := f.ledger()
	if err != nil {
		st = nil
	}
	return ledger.New(st, ledger.Options{OnError: func(err error) { f.warnf("%v", err) }})
}

// addRecord puts ledger record r in the follow group of its connection, reached again as the
// ledger recorded it (connectRecord); a record that fails connect.Connector.Check is isolated.
func addRecord(f *Factory, gs *follow.Groups, r state.Record) {
	gs.Add(r, f.connector().Check(r) != nil, func() *follow.Group {
		return newGroup(f, fromServer(r.Server), func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
			return f.connectRecord(ctx, &r, o)
		})
	})
}

// newGroup is the follow group of the server ref, reached with connect; ref also gives the
// hints of its tasks.
func newGroup(f *Factory, ref ServerRef, connect func(context.Context, rpc.ClientOptions) (*rpc.Client, ServerRef, error)) *follow.Group {
	f.wf.server(ref.String(), ref)
	return &follow.Group{Name: ref.String(), Key: toServer(ref).Key(), Connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, error) {
		c, _, err := connect(ctx, o)
		return c, err
	}}
}

// followMany follows the tasks of every group to their end at once (one connection per
// group), reports each outcome as it comes, and returns the most severe exit code. watch and
// resume share it so that one task or a thousand get the same contract. On a terminal, with
// nobody's answers given, the live view shows them.
func followMany(ctx context.Context, f *Factory, kind string, groups []*follow.Group, o followOptions, prompt bool) error {
	o.Live = f.useTUI() && prompt && !o.Once && o.Timeout == 0 && o.Answers == nil
	if o.Deadline.IsZero() {
		// --timeout counts from the start of the command: connecting included.
		o.Deadline = f.deadline(o.Timeout)
	}
	rep := newReporter(f, kind, o.Timeout, true)
	var feed *tui.Feed
	var sinks []follow.Sink
	if o.Live {
		feed = tui.NewFeed()
		rep.hold = true
		sinks = []follow.Sink{viewSink{feed}, rep}
	} else {
		rep.Progress = newProgressPrinter(f)
		sinks = []follow.Sink{rep.Progress, rep}
	}
	e := f.newEngine(o, sinks...)
	cctx, cancel := withDeadline(ctx, o.Deadline)
	defer cancel()
	ids, answered, clients := e.FollowGroups(cctx, groups)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	if o.Live {
		server := ""
		if len(groups) == 1 {
			server = groups[0].Name
		}
		return runLive(ctx, f, e, feed, rep, ids, nil, tui.Options{Answered: answered, Server: server})
	}
	e.Run(ctx)
	return rep.finish()
}
