package follow

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// ErrTimeout is the cause of the context that Options.Timeout ends.
var ErrTimeout = errors.New("timeout reached")

// errDetached is the cause of the context that Stop ends.
var errDetached = errors.New("detached")

// Options tune an Engine. The zero value follows tasks to their end by polling, writing
// nothing to any ledger, and ends a task that asks a question as EndInputRequired.
type Options struct {
	// Ledger is the state file whose records follow the tasks; nil writes nothing. The engine
	// writes it through a ledger.Writer of its own, closed when Run returns.
	Ledger *state.Store
	// Writer, when set, is used instead of Ledger: the writer a command shares with the
	// engine, so that the command's own changes and the engine's land in the order they were
	// made. Run flushes it when it returns; its owner closes it.
	Writer *ledger.Writer
	// Keep keeps the record of a finished task as history, marked shown (--keep), instead of
	// dropping it.
	Keep bool
	// Timeout bounds the follow (--timeout), from Run: past it, every unfinished task ends as
	// EndTimeout and keeps running. Zero means no bound.
	Timeout time.Duration
	// Deadline, when set, is the same bound as a point in time (a command whose --timeout
	// also covered what came before the follow).
	Deadline time.Time
	// MinInterval is --interval: polling can only be slowed by it.
	MinInterval time.Duration
	// Once looks at each task once (--timeout 0): the task at hand, or one tasks/get when
	// there is none, and ends an unfinished task as EndStillRunning.
	Once bool
	// NoPush polls only: no subscriptions/listen, 2025-11-25 notifications/tasks/status
	// ignored (--no-push).
	NoPush bool
	// Answerer answers questions without a person (--answer, --answers, --on-input decline or
	// exec).
	Answerer Answerer
	// Listen keeps a task that asks a question no Answerer takes followed: the question goes
	// out as events (Requests) and waits for an Answer command. Set it when someone listens
	// (the live view); otherwise such a task ends as EndInputRequired.
	Listen bool
	// Later leaves a question no Answerer takes open for a later 'mcptask update' (--on-input
	// fail without a terminal): elicitation is declared, so that the server may ask rather
	// than refuse, and the task ends as EndInputRequired with its questions. A 2025-11-25
	// question, which comes as elicitation/create on tasks/result, is taken and left
	// unanswered: the follow drops that tasks/result, as a client may at any time (MCP
	// 2025-11-25, Tasks, §Input Required Status), and the server asks again on the next one.
	Later bool
	// LeaveResults ends a completed or failed task without fetching its result, and keeps its
	// record so that 'mcptask result' can show it later (cancel --wait).
	LeaveResults bool
	// RequestTimeout bounds one tasks/get (DefaultRequestTimeout when zero).
	RequestTimeout time.Duration
	// MaxInFlight caps the polls in flight across every task (DefaultMaxInFlight when zero).
	MaxInFlight int
	// Warn gets a line for every ledger write that failed.
	Warn func(string)
}

// Engine follows tasks on any number of servers to their end and reports what happens to
// them as one stream of events. Build it with New, add each server's tasks (Server, then
// Follow or Unreachable), then Run it. Cancel, Answer and Stop may be called from any
// goroutine while it runs.
type Engine struct {
	opts   Options
	sinks  []Sink
	ledger *ledger.Writer

	emitMu sync.Mutex

	mu         sync.Mutex
	servers    []*Server
	tasks      []*task
	byID       map[string]*task
	stopped    bool
	cancelWait context.CancelCauseFunc
}

// New returns an engine that reports to sinks.
func New(opts Options, sinks ...Sink) *Engine {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	return &Engine{opts: opts, sinks: sinks, byID: map[string]*task{}}
}

// Server is one connection the engine follows tasks through: a server (and for 2025-11-25 a
// session). Its tasks share one backoff and one push stream.
type Server struct {
	e    *Engine
	name string
	key  string

	mu    sync.Mutex
	c     *rpc.Client
	tasks []*task
	byID  map[string]*task
	// byToken maps the progressToken a task was created with to its id.
	byToken map[string]string
	hub     *pushHub
	health  health
	asks    int
}

// Server declares a connection before it is made: name is how a person knows the server, key
// its identity in the ledger (state.Server.Key). Make the client with ClientOptions, so that
// the server's notifications and questions reach the engine.
func (e *Engine) Server(name, key string) *Server {
	s := &Server{e: e, name: name, key: key, byID: map[string]*task{}}
	e.mu.Lock()
	e.servers = append(e.servers, s)
	e.mu.Unlock()
	return s
}

// ClientOptions returns base with the engine's hooks: notifications (progress, 2025-11-25
// notifications/tasks/status) reach the engine, and when something can answer questions (an
// Answerer, a listener, or a later 'mcptask update': Options.Later) elicitation is declared
// and 2025-11-25 questions are taken; sampling is declared when the Answerer samples (a
// program, --on-input exec). C26-MRTR §Server Requirements: a client declares elicitation only
// when something will answer.
func (s *Server) ClientOptions(base rpc.ClientOptions) rpc.ClientOptions {
	if s.e.opts.Answerer != nil || s.e.opts.Listen || s.e.opts.Later {
		base.Elicitation = true
		base.OnRequest = s.onRequest
	}
	if s.e.opts.Answerer != nil && Samples(s.e.opts.Answerer) {
		base.Sampling = true
	}
	inner := base.OnNotify
	base.OnNotify = func(method string, params json.RawMessage) {
		s.onNotify(method, params)
		if inner != nil {
			inner(method, params)
		}
	}
	return base
}

// Target is one task to follow.
type Target struct {
	ID   string
	Tool string
	// Task is the task as last seen (a CreateTaskResult just received, a tasks/get just
	// made); nil makes the engine ask tasks/get first (spread over an interval when there are
	// many).
	Task *rpc.Task
	// Record is the task's ledger record, when it has one: where following starts while the
	// server cannot be reached, and the keys answered before, which are never answered again.
	Record *state.Record
	// Created reports the task as created by this run (a KindCreated event first).
	Created bool
	// ProgressToken is the _meta.progressToken of the tools/call that created the task: on
	// 2025-11-25 it "MUST stay in use for the whole life of the task" (MCP 2025-11-25,
	// Progress, §Behavior Requirements), so notifications/progress carrying it are the
	// task's.
	ProgressToken string
}

// Follow adds targets, reached through c, to the tasks the engine follows.
func (s *Server) Follow(c *rpc.Client, targets ...Target) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
	s.add(targets, nil)
}

// Unreachable adds targets whose server could not be reached: each ends at once as EndError
// with err, marked Unreachable.
func (s *Server) Unreachable(err error, targets ...Target) {
	s.add(targets, err)
}

func (s *Server) add(targets []Target, unreachable error) {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tg := range targets {
		k := &task{e: e, s: s, id: tg.ID, tool: tg.Tool, t: tg.Task, rec: tg.Record, created: tg.Created,
			unreachable: unreachable, answered: map[string]bool{}, wake: make(chan struct{}, 1)}
		if tg.Record != nil {
			for _, key := range tg.Record.AnsweredKeys {
				k.answered[key] = true // answered before a crash: never again
			}
			if k.tool == "" {
				k.tool = tg.Record.Tool
			}
		}
		if _, dup := s.byID[tg.ID]; !dup {
			s.byID[tg.ID] = k
		}
		if tg.ProgressToken != "" {
			if s.byToken == nil {
				s.byToken = map[string]string{}
			}
			s.byToken[tg.ProgressToken] = tg.ID
		}
		if _, dup := e.byID[tg.ID]; !dup {
			e.byID[tg.ID] = k
		}
		k.index = len(e.tasks)
		s.tasks = append(s.tasks, k)
		e.tasks = append(e.tasks, k)
	}
}

// Run follows every task added to its end and returns their outcomes, in the order they were
// added. ctx ends the run as EndInterrupted; Options.Timeout as EndTimeout; Stop as
// EndDetached. The results of tasks already seen finished are still fetched while ctx lasts.
func (e *Engine) Run(ctx context.Context) []Outcome {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := e.opts.Deadline
	if e.opts.Timeout > 0 && deadline.IsZero() {
		deadline = time.Now().Add(e.opts.Timeout)
	}
	if !deadline.IsZero() {
		var stop context.CancelFunc
		wctx, stop = context.WithDeadlineCause(wctx, deadline, ErrTimeout)
		defer stop()
	}
	e.mu.Lock()
	e.cancelWait = cancel
	if e.stopped {
		cancel(errDetached)
	}
	tasks := e.tasks
	servers := e.servers
	e.mu.Unlock()

	defer e.openLedger()()
	inFlight := make(chan struct{}, e.opts.MaxInFlight)
	waiting := 0
	for _, k := range tasks {
		if k.t == nil && k.unreachable == nil {
			waiting++
		}
	}
	// A few tasks are looked at at once; past what the in-flight cap lets out together, the
	// first looks are spread over an interval instead of queueing behind the cap.
	spread := waiting > e.opts.MaxInFlight

	outs := make([]Outcome, len(tasks))
	var wg sync.WaitGroup
	for _, s := range servers {
		e.followServer(ctx, wctx, s, &wg, outs, inFlight, spread)
	}
	for i, k := range tasks {
		if k.unreachable != nil {
			outs[i] = k.run(ctx, wctx)
		}
	}
	wg.Wait()
	return outs
}

// openLedger sets up the run's ledger writer, the one given in Options or one of its own, and
// returns what ends it when the run does: a flush of the one given, a close of its own.
func (e *Engine) openLedger() (end func()) {
	if e.opts.Writer != nil {
		e.ledger = e.opts.Writer
		return e.ledger.Flush
	}
	var onError func(error)
	if warn := e.opts.Warn; warn != nil {
		onError = func(err error) { warn(err.Error()) }
	}
	e.ledger = ledger.New(e.opts.Ledger, ledger.Options{OnError: onError})
	return e.ledger.Close
}

// followServer starts following s's reachable tasks, each in a goroutine counted in wg that
// puts its outcome in outs, with s's push stream beside them on a 2026-07-28 server; once
// they all ended, the stream stops and s releases its session.
func (e *Engine) followServer(ctx, wctx context.Context, s *Server, wg *sync.WaitGroup, outs []Outcome, inFlight chan struct{}, spread bool) {
	s.mu.Lock()
	c, stasks := s.c, s.tasks
	s.mu.Unlock()
	if c == nil || len(stasks) == 0 {
		return
	}
	// 2026-07-28: push updates on a listen stream, polling as the safety net.
	var pushDone chan struct{}
	pctx, stopPush := context.WithCancel(wctx)
	if c.Era() == rpc.EraModern && !e.opts.NoPush && !e.opts.Once {
		pushDone = s.startPush(pctx, c, stasks)
	}
	var swg sync.WaitGroup
	for _, k := range stasks {
		if k.unreachable != nil {
			continue
		}
		i := k.index
		k.inFlight, k.spread = inFlight, spread
		swg.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer swg.Done()
			outs[i] = k.run(ctx, wctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		swg.Wait()
		stopPush()
		if pushDone != nil {
			<-pushDone
		}
		s.release(stasks)
	}()
}

// startPush opens s's push hub for stasks over c and returns a channel closed when it ends
// (when ctx does).
func (s *Server) startPush(ctx context.Context, c *rpc.Client, stasks []*task) chan struct{} {
	ids := make([]string, 0, len(stasks))
	for _, k := range stasks {
		ids = append(ids, k.id)
	}
	h := &pushHub{srv: s}
	s.mu.Lock()
	s.hub = h
	s.mu.Unlock()
	pushDone := make(chan struct{})
	go func() {
		defer close(pushDone)
		h.run(ctx, c, ids)
	}()
	return pushDone
}

// release ends a 2025-11-25 session once no unfinished task is bound to it: the client's
// Close then sends DELETE. A record kept as history (--keep) keeps its session, so the task
// can still be looked at.
func (s *Server) release(tasks []*task) {
	c := s.c
	sid := c.SessionID()
	if sid == "" || s.e.opts.Keep {
		return
	}
	dropped := false
	for _, k := range tasks {
		dropped = dropped || k.dropped
	}
	if dropped && !s.e.ledger.SessionInUse(s.key, sid, time.Now()) {
		c.KeepSession(false)
	}
}

// Stop detaches: every task not finished ends as EndDetached and keeps running; the results
// of tasks already seen finished are still fetched.
func (e *Engine) Stop() {
	e.mu.Lock()
	e.stopped = true
	cancel := e.cancelWait
	e.mu.Unlock()
	if cancel != nil {
		cancel(errDetached)
	}
}

// Cancel asks the server to cancel task id (tasks/cancel). The answer comes as events: a
// KindCancelRequested (and the cancelled status, on 2025-11-25), or a KindError with Op
// "cancel".
func (e *Engine) Cancel(id string) {
	if k := e.task(id); k != nil {
		k.command(command{cancel: true})
	}
}

// Answer answers the question key of task id with response, the spec's result object for its
// kind: an ElicitResult, a ListRootsResult. On 2026-07-28 it goes out as tasks/update, on
// 2025-11-25 as the response to the waiting elicitation/create. The outcome comes as events:
// KindAnswered, or a KindError with Op "answer" and the key, after which the question may be
// answered again.
func (e *Engine) Answer(id, key string, response json.RawMessage) {
	k := e.task(id)
	if k == nil {
		return
	}
	if k.answerAsk(key, response) {
		return
	}
	k.command(command{key: key, response: response})
}

// Answerer returns the engine's Answerer (nil when none): the same answers serve the questions
// a tools/call asks before it starts (C26-MRTR, see Respond).
func (e *Engine) Answerer() Answerer { return e.opts.Answerer }

func (e *Engine) task(id string) *task {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byID[id]
}

// emit hands ev to every sink, one event at a time.
func (e *Engine) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	for _, s := range e.sinks {
		s.Event(ev)
	}
}

// onNotify takes a server's notifications: 2025-11-25 notifications/tasks/status as updates
// (unless NoPush), notifications/progress as progress events.
func (s *Server) onNotify(method string, params json.RawMessage) {
	switch method {
	case "notifications/tasks/status":
		if s.e.opts.NoPush || s.e.opts.Once {
			return
		}
		if t, err := rpc.DecodeTask(params); err == nil {
			s.deliver(t, ViaPush)
		}
	case "notifications/progress":
		var n struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    *float64        `json:"total"`
			Message  string          `json:"message"`
		}
		if json.Unmarshal(params, &n) != nil {
			return
		}
		// The task is the one its token was sent for, or the one related-task meta names; with
		// neither, the progress is a request's still in flight (a tools/call's, TaskID "").
		id := relatedTask(params)
		if id == "" {
			var tok string
			if json.Unmarshal(n.Token, &tok) != nil {
				tok = string(n.Token)
			}
			s.mu.Lock()
			id = s.byToken[tok]
			s.mu.Unlock()
		}
		s.e.emit(Event{Kind: KindProgress, TaskID: id, Server: s.name, Progress: n.Progress, Total: n.Total, Message: n.Message})
	}
}

// deliver hands a pushed task to its follow.
func (s *Server) deliver(t *rpc.Task, via Via) {
	s.mu.Lock()
	k := s.byID[t.TaskID]
	s.mu.Unlock()
	if k != nil {
		k.push(t)
	}
}

// wakeAll makes every task of the server work its schedule out again (the push stream's state
// changed).
func (s *Server) wakeAll() {
	s.mu.Lock()
	tasks := s.tasks
	s.mu.Unlock()
	for _, k := range tasks {
		k.signal()
	}
}

// onRequest takes a 2025-11-25 server-to-client request that arrived while tasks/result was
// open (C25-TASKS §Input Required Status): an Answerer's answer, else the person listening,
// else it is cancelled (elicitation) or refused. A wrong answer (the Answerer's error) is not
// sent: the question is left unanswered, the task as it was, and its follow ends with the
// error, as on 2026-07-28.
func (s *Server) onRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	e := s.e
	req, answerable := legacyRequest(e.opts.Answerer, method, params)
	if method == "sampling/createMessage" && !answerable {
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not sample language models"}
	}
	id := req.TaskID
	s.mu.Lock()
	k := s.byID[id]
	s.mu.Unlock()
	if k != nil {
		req.Tool = k.tool
	}
	req.Server = s.name
	if e.opts.Answerer != nil && answerable {
		resp, ok, err := e.opts.Answerer.Answer(ctx, req)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, rpc.NoResponse // the stream that asked is gone (the follow ended)
		case err != nil && k != nil:
			k.answerFailed(err)
			return nil, rpc.NoResponse
		case err != nil:
			e.emit(Event{Kind: KindNote, TaskID: id, Server: s.name, Message: err.Error() + "; cancelling the question"})
			return json.RawMessage(`{"action":"cancel"}`), nil
		case ok:
			e.emit(Event{Kind: KindAnswered, TaskID: id, Server: s.name, Era: rpc.EraLegacy, Keys: []string{req.Key}})
			return resp, nil
		}
	}
	if e.opts.Listen && k != nil {
		// C25-TASKS §Input Required Status: requests for a task carry related-task meta; the
		// person at the view answers them.
		s.mu.Lock()
		s.asks++
		req.Key = "question-" + strconv.Itoa(s.asks)
		s.mu.Unlock()
		return k.park(ctx, req), nil
	}
	if method != "elicitation/create" {
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not handle " + method}
	}
	if e.opts.Later && k != nil {
		// Left open for 'mcptask update': the follow ends with the question, unanswered.
		k.hold(req)
		return nil, rpc.NoResponse
	}
	e.emit(Event{Kind: KindNote, TaskID: id, Server: s.name, Message: "the server asked a question and no --answer elicitation=… was given; cancelling it"})
	return json.RawMessage(`{"action":"cancel"}`), nil
}
