package follow

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// task is the follow of one task: a goroutine that polls it at its interval, takes what the
// push stream and the commands bring, answers its questions and ends it.
type task struct {
	e           *Engine
	s           *Server
	index       int
	id, tool    string
	rec         *state.Record
	created     bool
	unreachable error
	inFlight    chan struct{}
	spread      bool

	// Shared with the hooks and commands that reach the task from other goroutines.
	mu       sync.Mutex
	wake     chan struct{} // a push, a command or the push stream's state: look again
	pushed   *rpc.Task
	cmds     []command
	asks     []*ask // 2025-11-25 questions waiting for the person
	result   *legacyResult
	ended    bool
	answered map[string]bool
	// answerErr is a wrong answer to a 2025-11-25 question (the Answerer's error), left
	// unanswered: it ends the follow.
	answerErr error

	// The loop's own state.
	t           *rpc.Task // as last seen
	failures    int
	retryAt     time.Time
	retryDelay  time.Duration
	lastSent    time.Time
	pollNow     bool
	keptSession bool
	dropped     bool
	resultOpen  bool // a 2025-11-25 tasks/result is open, so that questions can arrive
	resultSeen  bool // it returned; the next look tells whether the task still waits
	resultBack  bool // it returned and a look since found the task still waiting for input
	stopResult  context.CancelFunc
}

// command is one thing asked of a task while it is followed: cancel, or answer key.
type command struct {
	cancel   bool
	key      string
	response json.RawMessage
}

// ask is a 2025-11-25 question waiting for the person's answer.
type ask struct {
	req    Request
	answer chan json.RawMessage
}

// legacyResult is what a 2025-11-25 tasks/result kept open for questions returned, so that it
// need not be asked again.
type legacyResult struct {
	tr   *rpc.ToolResult
	rerr *rpc.Error
	err  error
}

// setTask records the task as last seen; other goroutines read it under mu.
func (k *task) setTask(t *rpc.Task) {
	k.mu.Lock()
	k.t = t
	k.mu.Unlock()
}

func (k *task) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// push hands the task a state that came by push; only the latest matters.
func (k *task) push(t *rpc.Task) {
	k.mu.Lock()
	k.pushed = t
	k.mu.Unlock()
	k.signal()
}

func (k *task) command(c command) {
	k.mu.Lock()
	if k.ended {
		k.mu.Unlock()
		return
	}
	k.cmds = append(k.cmds, c)
	k.mu.Unlock()
	k.signal()
}

// event returns an event of kind about the task, with what every event carries.
func (k *task) event(kind Kind) Event {
	k.mu.Lock()
	t := k.t
	k.mu.Unlock()
	ev := Event{Kind: kind, TaskID: k.id, Tool: k.tool, Server: k.s.name, Task: t}
	if c := k.s.c; c != nil {
		ev.Era = c.Era()
	}
	return ev
}

// run follows the task to its end and returns how it ended; its last event is the
// KindResult that carries the outcome. ctx is the run's context (interrupts), wctx the
// follow's (with the timeout and Stop).
func (k *task) run(ctx, wctx context.Context) (out Outcome) {
	defer func() { k.emitResult(&out) }()
	if out, done := k.begin(wctx); done {
		return out
	}
	timer := time.NewTimer(time.Hour) // one timer per follow, reset for every poll
	defer timer.Stop()
	for {
		if out, done := k.takeSignals(wctx); done {
			return out
		}
		if out, done := k.settle(ctx, wctx); done {
			return out
		}
		now := time.Now()
		due, _, _ := k.plan(now)
		timer.Reset(max(due.Sub(now), 0))
		select {
		case <-wctx.Done():
			timer.Stop()
			return k.abandoned(wctx)
		case <-k.wake:
			timer.Stop()
			continue
		case <-timer.C:
		}
		if out, done := k.poll(wctx); done {
			return out
		}
	}
}

// begin takes the task's first state: the one it was handed, else a first look at the
// server, else what the ledger knows while the server cannot be reached. done says the
// follow already ended, with out.
func (k *task) begin(wctx context.Context) (out Outcome, done bool) {
	if k.unreachable != nil {
		return Outcome{End: EndError, Err: k.unreachable, Unreachable: true}, true
	}
	if k.created {
		k.e.emit(k.event(KindCreated))
	}
	if k.t == nil {
		t, err := k.firstLook(wctx)
		switch {
		case err == nil:
			k.setTask(t)
		case rpc.IsUnknownTask(err):
			return k.expired(err), true
		case wctx.Err() != nil:
			k.setTask(k.fromRecord())
			return k.abandoned(wctx), true
		case !Retryable(err):
			return k.broken(err), true
		default:
			// The server is unreachable right now: start from what the ledger knows and back
			// off until it answers again.
			k.setTask(k.fromRecord())
			k.failed(err)
		}
	}
	k.observe(k.t, ViaPoll, true)
	return Outcome{}, false
}

// emitResult marks the follow ended, fills in out what every outcome carries and emits the
// KindResult event with it.
func (k *task) emitResult(out *Outcome) {
	k.mu.Lock()
	k.ended = true
	k.mu.Unlock()
	if k.stopResult != nil {
		k.stopResult()
	}
	out.TaskID, out.Tool, out.Server, out.Task = k.id, k.tool, k.s.name, k.t
	if c := k.s.c; c != nil {
		out.Era = c.Era()
	}
	ev := k.event(KindResult)
	ev.Outcome = out
	ev.Requests = out.Requests
	k.e.emit(ev)
}

// firstLook asks for a task the engine was handed without its state. With many such tasks
// the first looks are spread at random over one interval (the one the ledger remembers) and
// share the cap on polls in flight, so that a resume of a thousand tasks does not open with a
// thousand requests at once; the polls that follow keep that spread.
func (k *task) firstLook(ctx context.Context) (*rpc.Task, error) {
	if k.spread {
		var pi time.Duration
		if k.rec != nil {
			pi = k.rec.PollInterval.Duration()
		}
		interval, _ := Interval(&rpc.Task{PollInterval: pi}, k.e.opts.MinInterval)
		timer := time.NewTimer(time.Duration(rand.Int64N(int64(interval))))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
	t, sent, err := getTask(ctx, k.s.c, k.id, k.inFlight, k.e.opts.RequestTimeout)
	if !sent.IsZero() {
		k.lastSent = sent
	}
	return t, err
}

// fromRecord is the task as the ledger last knew it, working when it knew nothing better.
func (k *task) fromRecord() *rpc.Task {
	t := &rpc.Task{TaskID: k.id, Status: rpc.StatusWorking}
	if r := k.rec; r != nil {
		t.Status, t.StatusMessage, t.CreatedAt, t.PollInterval = rpc.TaskStatus(r.Status), r.StatusMessage, r.CreatedAt, r.PollInterval.Duration()
		if r.TTL != nil {
			d := r.TTL.Duration()
			t.TTL = &d
		}
	}
	if !t.Status.Valid() || t.Status.Terminal() {
		t.Status = rpc.StatusWorking
	}
	return t
}

// poll sends one tasks/get.
func (k *task) poll(wctx context.Context) (Outcome, bool) {
	k.pollNow = false
	t, sent, err := getTask(wctx, k.s.c, k.id, k.inFlight, k.e.opts.RequestTimeout)
	if !sent.IsZero() {
		k.lastSent = sent
	}
	if err != nil {
		switch {
		case wctx.Err() != nil:
			return k.abandoned(wctx), true
		case rpc.IsUnknownTask(err):
			return k.expired(err), true
		case !Retryable(err):
			return k.broken(err), true
		}
		k.failed(err)
		return Outcome{}, false
	}
	k.failures = 0
	k.s.health.ok()
	k.observe(t, ViaPoll, false)
	if k.resultSeen {
		k.resultSeen, k.resultBack = false, true
	}
	return Outcome{}, false
}

// failed records a failed poll worth retrying: the task, and every task of its server, backs
// off (never sooner than a Retry-After), and the failure is reported.
func (k *task) failed(err error) {
	k.failures++
	interval, _ := Interval(k.t, k.e.opts.MinInterval)
	d := max(Backoff(k.failures, interval), retryAfter(err))
	d = k.s.health.fail(d, interval)
	now := time.Now()
	k.retryAt, k.retryDelay = now.Add(d), d
	ev := k.event(KindError)
	ev.Op, ev.Err, ev.Transient, ev.Failures, ev.RetryIn = "poll", err, true, k.failures, d
	ev.Next, ev.Interval, ev.Source = k.plan(now)
	k.e.emit(ev)
}

// observe takes a new state of the task, from a poll or a push: the ledger and the sinks hear
// of it, as a change (KindStatus) or not (KindPolled).
func (k *task) observe(t *rpc.Task, via Via, first bool) {
	prev := k.t
	k.setTask(t)
	changed := first || prev == nil || prev.Status != t.Status || prev.StatusMessage != t.StatusMessage
	if changed {
		k.e.ledger.Status(k.s.key, t)
	}
	if !t.Status.Terminal() && !k.keptSession {
		// A task that is not finished is bound to its 2025-11-25 session: keep it open.
		k.s.c.KeepSession(true)
		k.keptSession = true
	}
	kind := KindPolled
	if changed {
		kind = KindStatus
	}
	ev := k.event(kind)
	ev.Via = via
	ev.Requests = k.requests()
	if !t.Status.Terminal() {
		ev.Next, ev.Interval, ev.Source = k.plan(time.Now())
	}
	k.e.emit(ev)
}

// requests lists the questions the task waits on that are not answered yet.
func (k *task) requests() []Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.t == nil || k.t.Status != rpc.StatusInputRequired {
		return nil
	}
	if len(k.asks) > 0 {
		out := make([]Request, 0, len(k.asks))
		for _, a := range k.asks {
			out = append(out, a.req)
		}
		return out
	}
	return requestsOf(k.t, k.answered, k.about())
}

// about is what every question of the task carries: the task, its tool and its server.
func (k *task) about() Request { return Request{TaskID: k.id, Tool: k.tool, Server: k.s.name} }

// plan works out when the next poll is due, the delay in use and where it comes from.
func (k *task) plan(now time.Time) (time.Time, time.Duration, string) {
	interval, src := Interval(k.t, k.e.opts.MinInterval)
	delay := interval
	// The interval runs from when the last poll went out, so that the gap between polls is
	// the server's interval and not the interval plus the answer's latency.
	due := now.Add(interval)
	if !k.lastSent.IsZero() {
		due = k.lastSent.Add(interval)
	}
	if k.failures > 0 {
		due = k.retryAt
		if k.retryDelay > interval {
			delay, src = k.retryDelay, backoffSource(k.failures)
		}
	}
	if hold, n := k.s.health.hold(); hold > due.Sub(now) {
		// Another task of the server failed: every task of it holds off together.
		due = now.Add(hold)
		if hold > delay {
			delay, src = hold, backoffSource(n)
		}
	}
	if k.s.hub.live(k.id) {
		// Push updates arrive on a listen stream; polling stays as the safety net, relaxed
		// (EXT §Task Status Notifications: clients MAY rely on them instead of polling).
		delay = min(max(interval*5, pushedPollFloor), MaxInterval)
		due, src = now.Add(delay), "relaxed while updates come by push"
	}
	if k.pollNow {
		due = now
	}
	return alignPoll(due, interval), delay, src
}

// takeSignals applies what reached the task from other goroutines: a pushed state, commands,
// the end of a 2025-11-25 tasks/result.
func (k *task) takeSignals(wctx context.Context) (Outcome, bool) {
	k.mu.Lock()
	pushed, cmds, res := k.pushed, k.cmds, k.result
	k.pushed, k.cmds = nil, nil
	k.mu.Unlock()
	if pushed != nil && !k.t.Status.Terminal() {
		k.observe(pushed, ViaPush, false)
	}
	if res != nil && k.resultOpen {
		// tasks/result returned: the task is finished, or the question went unanswered. Look
		// at once rather than at the next poll.
		k.resultOpen, k.resultSeen, k.pollNow = false, true, true
	}
	for _, c := range cmds {
		if c.cancel {
			k.cancel(wctx)
		} else {
			k.answer(wctx, c.key, c.response)
		}
	}
	return Outcome{}, false
}

// cancel sends tasks/cancel. EXT §Task Cancellation: the acknowledgement "does not mean the
// task is cancelled"; it may still end completed or failed, so the follow goes on until a
// terminal status, looking again at once.
func (k *task) cancel(wctx context.Context) {
	t, _, err := k.s.c.CancelTask(wctx, k.id)
	if err != nil {
		ev := k.event(KindError)
		ev.Op, ev.Err = "cancel", err
		k.e.emit(ev)
		return
	}
	k.e.emit(k.event(KindCancelRequested))
	if t != nil && !k.t.Status.Terminal() {
		k.observe(t, ViaPoll, false) // C25-TASKS §Task Cancellation: already cancelled
		return
	}
	k.pollNow = true
}

// answer sends the person's answer to a 2026-07-28 question with tasks/update (EXT §Task
// Update Requests: only currently outstanding keys), and looks again at once.
func (k *task) answer(wctx context.Context, key string, resp json.RawMessage) {
	if err := k.s.c.UpdateTask(wctx, k.id, map[string]json.RawMessage{key: resp}); err != nil {
		ev := k.event(KindError)
		ev.Op, ev.Err, ev.Keys = "answer", err, []string{key}
		k.e.emit(ev)
		return
	}
	k.markAnswered([]string{key})
	k.pollNow = true
}

// markAnswered records answered keys: the ledger remembers them, so a resumed follow never
// answers them again (EXT §Task Update Requests: clients SHOULD track keys already answered).
func (k *task) markAnswered(keys []string) {
	k.mu.Lock()
	for _, key := range keys {
		k.answered[key] = true
	}
	k.mu.Unlock()
	k.e.ledger.Answered(k.s.key, k.id, keys)
	ev := k.event(KindAnswered)
	ev.Keys = keys
	k.e.emit(ev)
	ev = k.event(KindInput)
	ev.Requests = k.requests()
	k.e.emit(ev)
}

// settle decides what the task's state means: a terminal status ends the follow with its
// result; a question is answered, handed to the listener, or ends the follow; --timeout 0
// ends it after one look.
func (k *task) settle(ctx, wctx context.Context) (Outcome, bool) {
	t := k.t
	if t.Status.Terminal() {
		return k.finish(ctx), true
	}
	k.mu.Lock()
	answerErr := k.answerErr
	k.mu.Unlock()
	if answerErr != nil {
		// The question was left unanswered and the task as it was: the follow ends with why.
		return k.broken(answerErr), true
	}
	if t.Status == rpc.StatusInputRequired {
		if out, done := k.input(wctx); done {
			return out, true
		}
	}
	if k.e.opts.Once {
		return Outcome{End: EndStillRunning, Err: errStillRunning}, true
	}
	return Outcome{}, false
}

var errStillRunning = errors.New("still running")

// input handles a task waiting for input.
func (k *task) input(wctx context.Context) (Outcome, bool) {
	o := k.e.opts
	if k.s.c.Era() == rpc.EraLegacy {
		// C25-TASKS §Input Required Status: the questions come as elicitation/create while
		// tasks/result is open; the Server's OnRequest answers them (or parks them for the
		// listener). tasks/result returns once the task is terminal.
		if o.Answerer == nil && !o.Listen && !o.Later {
			return Outcome{End: EndInputRequired}, true
		}
		if o.Later && k.holding() {
			return Outcome{End: EndInputRequired, Requests: k.requests()}, true
		}
		if k.resultBack && !o.Listen {
			// tasks/result returned and the task still waits: nothing here could answer it.
			k.mu.Lock()
			res := k.result
			k.mu.Unlock()
			if res != nil && res.err != nil && !rpc.IsUnknownTask(res.err) {
				return k.broken(res.err), true
			}
			return Outcome{End: EndInputRequired, Requests: k.requests()}, true
		}
		if k.resultSeen {
			return Outcome{}, false // look first
		}
		k.openResult(wctx)
		return Outcome{}, false
	}
	k.mu.Lock()
	answered := make(map[string]bool, len(k.answered))
	for key := range k.answered {
		answered[key] = true
	}
	k.mu.Unlock()
	if o.Answerer != nil {
		keys, err := SendAnswers(wctx, k.s.c, k.t, o.Answerer, answered, k.about())
		if err != nil {
			if wctx.Err() != nil {
				return k.abandoned(wctx), true
			}
			return k.broken(err), true
		}
		if len(keys) > 0 {
			k.markAnswered(keys)
		}
	}
	pending := k.requests()
	if len(pending) == 0 || o.Listen {
		// Every question is answered and the server has yet to move on (it repeats
		// requests until it has processed their answers), or the listener will answer.
		return Outcome{}, false
	}
	return Outcome{End: EndInputRequired, Requests: pending}, true
}

// openResult keeps a 2025-11-25 tasks/result open while the task waits for input, so that
// its questions can arrive; what it returns is kept as the task's result.
func (k *task) openResult(wctx context.Context) {
	if k.resultOpen {
		return
	}
	k.resultOpen, k.resultSeen, k.resultBack = true, false, false
	k.mu.Lock()
	k.result = nil
	k.mu.Unlock()
	rctx, stop := context.WithCancel(wctx)
	if k.stopResult != nil {
		k.stopResult()
	}
	k.stopResult = stop
	c, id := k.s.c, k.id
	go func() {
		tr, _, err := c.TaskResult(rctx, id)
		res := &legacyResult{tr: tr, err: err}
		var rerr *rpc.Error
		if errors.As(err, &rerr) && !rpc.IsUnknownTask(err) {
			res.rerr, res.err = rerr, nil
		}
		k.mu.Lock()
		k.result = res
		k.mu.Unlock()
		k.signal()
	}()
}

// answerFailed ends the follow of the task with err, the wrong answer an Answerer had for one
// of its 2025-11-25 questions.
func (k *task) answerFailed(err error) {
	k.mu.Lock()
	if k.answerErr == nil {
		k.answerErr = err
	}
	k.mu.Unlock()
	k.signal()
}

// hold keeps a 2025-11-25 question that is left unanswered (Options.Later): the follow ends
// with it.
func (k *task) hold(req Request) {
	k.mu.Lock()
	k.asks = append(k.asks, &ask{req: req})
	k.mu.Unlock()
	k.signal()
}

// holding reports whether a question is held for a later answer.
func (k *task) holding() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.asks) > 0
}

// park hands a 2025-11-25 question to the listener and waits for its answer.
func (k *task) park(ctx context.Context, req Request) json.RawMessage {
	a := &ask{req: req, answer: make(chan json.RawMessage, 1)}
	k.mu.Lock()
	if k.ended {
		k.mu.Unlock()
		return json.RawMessage(`{"action":"cancel"}`)
	}
	k.asks = append(k.asks, a)
	k.mu.Unlock()
	k.emitInput()
	defer func() {
		k.mu.Lock()
		for i, x := range k.asks {
			if x == a {
				k.asks = append(k.asks[:i:i], k.asks[i+1:]...)
				break
			}
		}
		k.mu.Unlock()
		k.emitInput()
	}()
	select {
	case resp := <-a.answer:
		return resp
	case <-ctx.Done():
		return json.RawMessage(`{"action":"cancel"}`)
	}
}

func (k *task) emitInput() {
	ev := k.event(KindInput)
	ev.Requests = k.requests()
	k.e.emit(ev)
}

// answerAsk answers a parked 2025-11-25 question; false when key is not one.
func (k *task) answerAsk(key string, resp json.RawMessage) bool {
	k.mu.Lock()
	var a *ask
	for _, x := range k.asks {
		if x.req.Key == key {
			a = x
		}
	}
	k.mu.Unlock()
	if a == nil {
		return false
	}
	select {
	case a.answer <- resp:
	default:
		return true // answered already
	}
	ev := k.event(KindAnswered)
	ev.Keys = []string{key}
	k.e.emit(ev)
	return true
}

// finish ends the follow of a terminal task: its result is fetched, and its record dropped
// (or, with --keep, marked shown). ctx is the run's: a timeout does not stop a result that is
// ready from being fetched.
func (k *task) finish(ctx context.Context) Outcome {
	t := k.t
	led, key := k.e.ledger, k.s.key
	// The last status is recorded even when no poll saw it change (a task already finished
	// when first asked): a record kept with --keep must say how the task ended.
	led.Status(key, t)
	if t.Status == rpc.StatusCancelled {
		led.Shown(key, k.id, k.e.opts.Keep)
		k.dropped = true
		return Outcome{End: EndCancelled}
	}
	if k.e.opts.LeaveResults {
		return Outcome{End: EndResult}
	}
	tr, rerr, err := k.fetchResult(ctx)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return Outcome{End: EndInterrupted, Err: ctx.Err()}
		case rpc.IsUnknownTask(err):
			return k.expired(err)
		}
		return k.broken(err)
	}
	led.Shown(key, k.id, k.e.opts.Keep)
	k.dropped = true
	return Outcome{End: EndResult, Result: tr, RPCError: rerr}
}

// fetchResult gets the outcome of a terminal task: 2025-11-25 tasks/result, 2026-07-28 the
// inline result or error of tasks/get (EXT §Task Polling). A JSON-RPC error as the task's
// outcome comes back as rerr, distinct from a failure to fetch.
func (k *task) fetchResult(ctx context.Context) (*rpc.ToolResult, *rpc.Error, error) {
	c, t := k.s.c, k.t
	if c.Era() == rpc.EraModern {
		if t.Result == nil && t.Error == nil {
			// A CreateTaskResult that is already terminal carries no result (EXT §Task
			// Creation): ask tasks/get for it.
			nt, _, err := getTask(ctx, c, k.id, nil, k.e.opts.RequestTimeout)
			if err != nil {
				return nil, nil, err
			}
			k.setTask(nt)
			t = nt
		}
		tr, _, err := rpc.ModernResult(t)
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			return nil, rerr, nil
		}
		return tr, nil, err
	}
	k.mu.Lock()
	res := k.result
	k.mu.Unlock()
	if res != nil && res.err == nil {
		return res.tr, res.rerr, nil
	}
	tr, _, err := c.TaskResult(ctx, k.id)
	var rerr *rpc.Error
	if errors.As(err, &rerr) && !rpc.IsUnknownTask(err) {
		// C25-TASKS §Result Retrieval: tasks/result returns the underlying JSON-RPC error.
		return nil, rerr, nil
	}
	return tr, nil, err
}

// expired ends the follow of a task the server no longer knows, and marks its record.
func (k *task) expired(err error) Outcome {
	k.e.ledger.Expired(k.s.key, k.id)
	return Outcome{End: EndExpired, Err: err}
}

// broken ends the follow with an error; the record is marked with it and stays resumable.
func (k *task) broken(err error) Outcome {
	k.e.ledger.Error(k.s.key, k.id, err)
	return Outcome{End: EndError, Err: err}
}

// abandoned ends the follow before the task ended: timeout, interrupt or detach.
func (k *task) abandoned(wctx context.Context) Outcome {
	cause := context.Cause(wctx)
	switch {
	case errors.Is(cause, errDetached):
		return Outcome{End: EndDetached, Err: cause}
	case errors.Is(cause, ErrTimeout):
		return Outcome{End: EndTimeout, Err: cause}
	}
	return Outcome{End: EndInterrupted, Err: cause}
}
