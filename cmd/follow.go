package cmd

import (
	"context"
	"sync"
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
		Keep: f.Global.Keep, Timeout: o.Timeout, Deadline: o.Deadline, MinInterval: o.Interval, Once: o.Once,
		NoPush: f.Global.NoPush || o.NoPush, Listen: o.Live, LeaveResults: o.LeaveResults,
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

// resumeGroup is one connection: the tasks of one server (and one 2025-11-25 session).
type resumeGroup struct {
	ref     ServerRef
	recs    []state.Record
	connect func(context.Context, rpc.ClientOptions) (*rpc.Client, ServerRef, error)
}

// groupKey is the connection a record is followed on. A record that may not be resumed as it
// stands (connect.Connector.Check) gets a group of its own: it must neither lend its credentials to the
// user's records nor take the user's tasks down with it.
func groupKey(f *Factory, r state.Record) string {
	k := r.Server.Key() + "\x00" + r.Era + "\x00" + r.SessionID
	if f.connector().Check(r) != nil {
		k += "\x00untrusted\x00" + r.TaskID
	}
	return k
}

// groupSet gathers ledger records into one group per connection (server, era and session).
type groupSet struct {
	groups []*resumeGroup
	byKey  map[string]*resumeGroup
}

func (gs *groupSet) add(f *Factory, r state.Record) {
	if gs.byKey == nil {
		gs.byKey = map[string]*resumeGroup{}
	}
	k := groupKey(f, r)
	g := gs.byKey[k]
	if g == nil {
		g = &resumeGroup{ref: fromServer(r.Server), connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
			return f.connectRecord(ctx, &r, o)
		}}
		gs.byKey[k] = g
		gs.groups = append(gs.groups, g)
	}
	g.recs = append(g.recs, r)
}

// followMany follows the tasks of every group to their end at once (one connection per
// group), reports each outcome as it comes, and returns the most severe exit code. watch and
// resume share it so that one task or a thousand get the same contract. On a terminal, with
// nobody's answers given, the live view shows them.
func followMany(ctx context.Context, f *Factory, kind string, groups []*resumeGroup, o followOptions, prompt bool) error {
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
		rep.printer = newProgressPrinter(f)
		sinks = []follow.Sink{rep.printer, rep}
	}
	e := f.newEngine(o, sinks...)
	cctx, cancel := withDeadline(ctx, o.Deadline)
	defer cancel()
	ids, answered, clients := connectGroups(cctx, e, rep, groups)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	if o.Live {
		server := ""
		if len(groups) == 1 {
			server = groups[0].ref.String()
		}
		return runLive(ctx, f, e, feed, rep, ids, nil, tui.Options{Answered: answered, Server: server})
	}
	e.Run(ctx)
	return rep.finish()
}

// connectGroups connects every group at once and hands its tasks to e; a server that cannot
// be reached fails its own tasks only. It returns the task ids in order, the keys already
// answered of each task, and the clients to close when the run ends.
func connectGroups(ctx context.Context, e *follow.Engine, rep *reporter, groups []*resumeGroup) (ids []string, answered map[string][]string, clients []*rpc.Client) {
	answered = map[string][]string{}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, g := range groups {
		srv := e.Server(g.ref.String(), toServer(g.ref).Key())
		rep.server(g.ref.String(), g.ref)
		targets := make([]follow.Target, 0, len(g.recs))
		for i := range g.recs {
			r := &g.recs[i]
			targets = append(targets, follow.Target{ID: r.TaskID, Tool: r.Tool, Record: r})
			ids = append(ids, r.TaskID)
			if len(r.AnsweredKeys) > 0 {
				answered[r.TaskID] = r.AnsweredKeys // a resumed view never offers them again
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := g.connect(ctx, srv.ClientOptions(rpc.ClientOptions{}))
			if err != nil {
				srv.Unreachable(err, targets...)
				return
			}
			mu.Lock()
			clients = append(clients, c)
			mu.Unlock()
			srv.Follow(c, targets...)
		}()
	}
	wg.Wait()
	return ids, answered, clients
}
