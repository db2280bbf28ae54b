package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// ResumeOptions are the inputs of `mcptask resume`.
type ResumeOptions struct {
	f       *Factory
	TaskIDs []string
	WaitFlags
	AnswerFlags
}

// NewCmdResume returns `mcptask resume`.
func NewCmdResume(f *Factory, runF func(context.Context, *ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{f: f}
	c := &cobra.Command{
		Use:   "resume [task-id...]",
		Short: "Re-attach to every unfinished task in the ledger",
		Long: `Re-attach to the unfinished tasks in the ledger (or only the ones named), after
a crash, a reboot or a detached call, and follow them all at once, each on its own
server at that server's poll interval.

Each server is reached again as the ledger recorded it: the URL or the stdio
command, the era, and for 2025-11-25 the session the task was created in. Secrets
are not stored: the --bearer-env variable must be set again and --header values
given again. On a terminal the live view shows the tasks (keys: i answer, c cancel,
q detach, ? help); otherwise progress goes to stderr, one line per change, and each
task's result goes to stdout as it finishes. On 2026-07-28 updates also come by push
(subscriptions/listen; --no-push turns it off). A task the server no longer knows is
reported as expired.

EXIT STATUS
  0 every task completed well; otherwise the most severe outcome among the tasks:
  130 interrupted, 124 timeout, 2 usage, 1 error, 7 auth, 3 failed, 4 cancelled, 5 input
  required, 6 expired. See 'mcptask help exit-codes'.`,
		Example: `  mcptask resume
  mcptask resume 786512e2-9e0d-44bd-8f29-789f320fe840 --timeout 10m
  mcptask resume --json > outcomes.json`,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskIDs = args
			if f.Global.JSONL {
				f.Global.JSON = true
			}
			if err := opts.WaitFlags.resolve(c); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runResume(c.Context(), opts)
		},
	}
	opts.WaitFlags.AddFlags(c)
	opts.AnswerFlags.AddFlags(c.Flags())
	addJSONLFlag(c, f)
	return c
}

// severity orders exit codes for a many-task outcome: the first in this list that occurs wins.
var severity = []int{ExitInterrupted, ExitTimeout, ExitUsage, ExitFailure, ExitAuth, ExitTaskFailed, ExitCancelled, ExitInputRequired, ExitExpired, ExitStillRunning, ExitOK}

// worstCode returns the most severe of codes.
func worstCode(codes []int) int {
	best := len(severity)
	for _, c := range codes {
		i := slices.Index(severity, c)
		if i < 0 {
			i = slices.Index(severity, ExitFailure)
		}
		best = min(best, i)
	}
	if best == len(severity) {
		return ExitOK
	}
	return severity[best]
}

// resumeGroup is one connection: the tasks of one server (and one 2025-11-25 session).
type resumeGroup struct {
	rec     state.Record
	recs    []state.Record
	connect func(context.Context, rpc.ClientOptions) (*rpc.Client, ServerRef, error)
}

func groupKey(r state.Record) string { return r.Server.Key() + "\x00" + r.Era + "\x00" + r.SessionID }

// groupSet gathers ledger records into one group per connection (server, era and session).
type groupSet struct {
	groups []*resumeGroup
	byKey  map[string]*resumeGroup
}

func (gs *groupSet) add(f *Factory, r state.Record) {
	if gs.byKey == nil {
		gs.byKey = map[string]*resumeGroup{}
	}
	k := groupKey(r)
	g := gs.byKey[k]
	if g == nil {
		g = &resumeGroup{rec: r, connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
			return f.connectRecord(ctx, &r, o)
		}}
		gs.byKey[k] = g
		gs.groups = append(gs.groups, g)
	}
	g.recs = append(g.recs, r)
}

// selectResume picks the records to resume: the unfinished ones, or the named ones.
func selectResume(f *Factory, file *state.File, ids []string) ([]state.Record, error) {
	now := f.Now()
	if len(ids) == 0 {
		var out []state.Record
		for _, r := range file.Tasks {
			if r.Unfinished(now) {
				out = append(out, r)
			}
		}
		return out, nil
	}
	var out []state.Record
	var missing []string
	for _, id := range ids {
		found := false
		for _, r := range file.Tasks {
			if r.TaskID == id {
				out = append(out, r)
				found = true
			}
		}
		if !found {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, flagErrorf("not in the ledger: %v; 'mcptask list --all' shows what is there", missing)
	}
	return out, nil
}

func runResume(ctx context.Context, opts *ResumeOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In)
	if err != nil {
		return err
	}
	onInput, err := opts.AnswerFlags.onInput(f.useTUI())
	if err != nil {
		return err
	}
	st, err := f.ledger()
	if err != nil {
		return err
	}
	file, err := st.Load()
	if err != nil {
		return err
	}
	recs, err := selectResume(f, file, opts.TaskIDs)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if f.Global.JSON {
			return writeJSON(f.IO.Out, envelope{Type: "resume", Tasks: []envelope{}})
		}
		fmt.Fprintf(f.IO.ErrOut, "nothing to resume: no unfinished tasks in %s\n", st.Path())
		return nil
	}
	var gs groupSet
	for _, r := range recs {
		gs.add(f, r)
	}
	return followMany(ctx, f, "resume", gs.groups, followOptions{Timeout: opts.Timeout, Interval: opts.Interval, Once: opts.Once, Answers: answers, Prompt: onInput == "prompt"})
}

// followOptions tune followMany.
type followOptions struct {
	Timeout, Interval time.Duration
	Once              bool
	Answers           answerSet
	// Prompt is --on-input prompt: the live view may ask.
	Prompt bool
	// inFlight caps the polls in flight across all tasks, batch writes their status updates
	// together, and spreadFirst spreads their first polls over an interval when there are
	// more than the cap (all set by followMany).
	inFlight    chan struct{}
	batch       *statusBatch
	spreadFirst bool
}

// maxPollsInFlight caps concurrent tasks/get across a run, protecting both sides when a
// thousand tasks are followed at once.
const maxPollsInFlight = 64

// followMany follows the tasks of every group to their end at once (one connection per
// group), prints each outcome as it comes, and returns the most severe exit code. resume and
// watch share it so that one task or a thousand get the same contract.
func followMany(ctx context.Context, f *Factory, kind string, groups []*resumeGroup, opts followOptions) error {
	if f.useTUI() && opts.Prompt && !opts.Once && opts.Timeout == 0 && opts.Answers == nil {
		return followTUI(ctx, f, kind, groups)
	}
	wctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	opts.inFlight = make(chan struct{}, maxPollsInFlight)
	total := countTasks(groups)
	// A few tasks are looked at at once; past what the in-flight cap lets out together, the
	// first looks are spread over an interval instead of queueing behind the cap.
	opts.spreadFirst = total > maxPollsInFlight
	if st, err := f.ledger(); err == nil && total > 1 {
		opts.batch = newStatusBatch(st, f.warnf)
		defer opts.batch.close()
	}
	printer := newProgressPrinter(f.IO.ErrOut, f.Now)
	if f.Global.JSONL {
		printer.events = f.IO.Out
	}
	var (
		mu      sync.Mutex
		results []envelope
		wg      sync.WaitGroup
	)
	report := func(e envelope, text []byte) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, e)
		if f.Global.JSONL {
			if e.Type == "status" {
				e.Type = "result"
			}
			_ = writeJSON(f.IO.Out, e) // each outcome as it comes
		}
		if !f.Global.JSON && len(text) > 0 {
			fmt.Fprintf(f.IO.Out, "── task %s (%s): %s\n", termsafe.Line(e.TaskID), termsafe.Line(e.Tool), e.Status)
			_, _ = f.IO.Out.Write(text)
		}
	}
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, 0, len(g.recs))
			for _, r := range g.recs {
				ids = append(ids, r.TaskID)
			}
			hub := newPushHub(ids)
			// 2025-11-25: notifications/tasks/status arriving on any stream are updates too.
			onNotify := func(method string, params json.RawMessage) {
				if method == "notifications/tasks/status" {
					if t, err := rpc.DecodeTask(params); err == nil {
						hub.deliver(t.TaskID, t)
					}
					return
				}
				notifyPrinter(printer)(method, params)
			}
			c, ref, err := g.connect(wctx, answerOptions(rpc.ClientOptions{OnNotify: onNotify}, opts.Answers, func(msg string) { printer.Note("-", msg) }))
			if err != nil {
				for _, r := range g.recs {
					code := exitCode(ctx, err)
					printer.Note(r.TaskID, "cannot reach "+ref.String()+": "+termsafe.Line(err.Error()))
					report(envelope{Type: "error", TaskID: r.TaskID, Tool: r.Tool, Era: rpc.Era(r.Era), Server: ref.String(), Code: &code, Message: err.Error()}, nil)
				}
				return
			}
			defer c.Close()
			// 2026-07-28: push updates on a listen stream, polling as the safety net.
			if c.Era() == rpc.EraModern && !opts.Once && !f.Global.NoPush {
				lctx, stop := context.WithCancel(wctx)
				defer stop()
				go hub.run(lctx, c, func(msg string) { printer.Note("-", msg) })
			}
			if f.Global.NoPush {
				hub = nil
			}
			var gwg sync.WaitGroup
			health := &serverHealth{} // one backoff for every task on this connection
			for _, r := range g.recs {
				gwg.Add(1)
				go func() {
					defer gwg.Done()
					e, text := resumeOne(ctx, wctx, f, c, ref, r, printer, opts, hub, health)
					report(e, text)
				}()
			}
			gwg.Wait()
		}()
	}
	wg.Wait()

	codes := make([]int, 0, len(results))
	for _, e := range results {
		codes = append(codes, *e.Code)
	}
	code := worstCode(codes)
	if f.Global.JSON && !f.Global.JSONL {
		slices.SortFunc(results, func(a, b envelope) int { return cmpString(a.TaskID, b.TaskID) })
		if err := writeJSON(f.IO.Out, envelope{Type: kind, Tasks: results}); err != nil {
			return err
		}
	}
	if code == ExitOK {
		return nil
	}
	var msg string
	switch code {
	case ExitTimeout:
		msg = fmt.Sprintf("timeout after %s; unfinished tasks keep running: mcptask resume", opts.Timeout)
	case ExitInterrupted:
		msg = "interrupted; unfinished tasks keep running: mcptask resume"
	case ExitStillRunning:
		msg = "tasks still running (--timeout 0 checks once): mcptask resume"
	default:
		msg = fmt.Sprintf("%d of %d task(s) did not complete well", countBad(codes), len(codes))
	}
	return &ExitError{Code: code, Err: errors.New(msg)}
}

// countTasks is how many tasks the groups follow.
func countTasks(groups []*resumeGroup) int {
	n := 0
	for _, g := range groups {
		n += len(g.recs)
	}
	return n
}

// followTUI connects every group (declaring elicitation: the view can answer it) and hands
// the tasks to the live view.
func followTUI(ctx context.Context, f *Factory, kind string, groups []*resumeGroup) error {
	var entries []*tuiEntry
	var codes []int
	p := newTUIPoller()
	var batch *statusBatch
	if st, err := f.ledger(); err == nil && countTasks(groups) > 1 {
		batch = newStatusBatch(st, f.warnf) // as followMany does: many first statuses, one write
		defer batch.close()
	}
	for _, g := range groups {
		c, ref, err := g.connect(ctx, rpc.ClientOptions{Elicitation: true, OnRequest: p.onRequest})
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "mcptask: cannot reach %s: %v\n", g.rec.Server.Display(), err)
			codes = append(codes, exitCode(ctx, err))
			continue
		}
		defer c.Close()
		for _, r := range g.recs {
			entries = append(entries, &tuiEntry{rec: r, out: &outcome{f: f, c: c, ref: ref, batch: batch}})
		}
	}
	if len(entries) == 0 {
		return &ExitError{Code: worstCode(codes), Err: fmt.Errorf("no server could be reached")}
	}
	err := runTUI(ctx, f, kind, p, entries)
	if len(codes) > 0 {
		codes = append(codes, exitCode(ctx, err))
		return &ExitError{Code: worstCode(codes), Err: fmt.Errorf("some servers could not be reached")}
	}
	return err
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func countBad(codes []int) int {
	n := 0
	for _, c := range codes {
		if c != ExitOK {
			n++
		}
	}
	return n
}

// resumeOne follows one task to its end and returns its envelope (with its exit code) and
// the text its result printed.
func resumeOne(ctx, wctx context.Context, f *Factory, c *rpc.Client, ref ServerRef, r state.Record, printer *progressPrinter, opts followOptions, hub *pushHub, health *serverHealth) (envelope, []byte) {
	var buf bytes.Buffer
	var got *envelope
	o := &outcome{f: f, c: c, ref: ref, w: &buf, emit: func(e envelope) error { got = &e; return nil }, answers: opts.Answers, answered: map[string]bool{}, batch: opts.batch}
	for _, k := range r.AnsweredKeys {
		o.answered[k] = true // answered before a crash: never again
	}
	base := envelope{Type: "status", TaskID: r.TaskID, Tool: r.Tool, Era: c.Era(), Server: ref.String(), Status: rpc.TaskStatus(r.Status)}
	finish := func(err error) (envelope, []byte) {
		code := exitCode(ctx, err)
		e := base
		if got != nil {
			e = *got
			e.Tool = r.Tool
		}
		e.Code = &code
		if err != nil && code != ExitExpired && code != ExitTimeout && code != ExitInterrupted && code != ExitStillRunning {
			// The task itself is fine as far as anyone knows: mark its record with what went
			// wrong, keep it resumable, and let the other tasks carry on.
			o.markError(r.TaskID, err)
		}
		if err != nil {
			e.Message = err.Error()
			if code == ExitExpired {
				e.Status = "expired"
			}
			if !f.Global.JSON {
				printer.Note(r.TaskID, termsafe.Line(err.Error()))
			}
		}
		return e, buf.Bytes()
	}
	t, err := firstPoll(wctx, c, r, opts)
	if err != nil {
		if rpc.IsUnknownTask(err) {
			o.markExpired(r.TaskID)
			return finish(&ExitError{Code: ExitExpired, Err: fmt.Errorf("task %s is no longer known to %s (expired, or the server lost it)", r.TaskID, ref)})
		}
		if wctx.Err() != nil {
			return finish(o.abandoned(ctx, wctx, &rpc.Task{TaskID: r.TaskID, Status: rpc.TaskStatus(r.Status)}, err, opts.Timeout))
		}
		if !retryable(err) {
			return finish(fmt.Errorf("task %s: %w", r.TaskID, err))
		}
		// The server is unreachable right now: start from what the ledger knows and let the
		// wait back off until it answers again.
		printer.Note(r.TaskID, "first poll failed ("+termsafe.Line(err.Error())+"); waiting for the server")
		t = &rpc.Task{TaskID: r.TaskID, Status: rpc.TaskStatus(r.Status), StatusMessage: r.StatusMessage, CreatedAt: r.CreatedAt,
			PollInterval: r.PollInterval.Duration()}
		if !t.Status.Valid() || t.Status.Terminal() {
			t.Status = rpc.StatusWorking
		}
		health.fail(0)
	}
	base.Status = t.Status
	o.saveStatus(ctx, t)
	printer.Task(t)
	po := pollOptions{UserMin: opts.Interval, StopOnInput: true, Once: opts.Once, InFlight: opts.inFlight, Server: health}
	if hub != nil {
		po.Push, po.PushLive = hub.ch[r.TaskID], hub.live(r.TaskID)
	}
	return finish(o.follow(wctx, ctx, t, po, printer, opts.Timeout))
}

// firstPoll asks for a resumed task's state. With many tasks the first polls are spread at
// random over one interval (the one the ledger remembers) and share the cap on polls in
// flight, so that a resume of a thousand tasks does not open with a thousand requests at once;
// the polls that follow keep that spread.
func firstPoll(ctx context.Context, c *rpc.Client, r state.Record, opts followOptions) (*rpc.Task, error) {
	if opts.spreadFirst {
		interval := pollInterval(&rpc.Task{PollInterval: r.PollInterval.Duration()}, opts.Interval)
		timer := time.NewTimer(time.Duration(rand.Int64N(int64(interval))))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
	t, _, err := getTask(ctx, c, r.TaskID, opts.inFlight)
	return t, err
}
