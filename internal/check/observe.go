package check

// This file chooses the tools to exercise by observation: it lists the tools, calls every one
// it can call safely (arguments built from the inputSchema, never a tool annotated
// destructiveHint unless the user named it), follows every task to its end, answers input
// requests, and keeps everything it saw as the evidence the rules are judged on.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// toolInfo is a tool of tools/list and what the checker does with it.
type toolInfo struct {
	name        string
	schema      json.RawMessage
	support     string // 2025-11-25 execution.taskSupport; "" when absent
	destructive bool
	named       bool // --tool
	args        map[string]any
	// reason says why it is not called (NotCalledNone: it is), why says so in words.
	reason NotCalled
	why    string
	// plainCall is a 2026-07-28 call without the extension declared (B22, B22b, B27).
	plainCall *call
}

// call is one tools/call of the catalogue and everything that followed from it.
type call struct {
	tool  *toolInfo
	args  map[string]any
	start time.Time
	dur   time.Duration // until the answer (plain) or the end of the task
	// The answer: exactly one of err, rpcErr, plain, task.
	err    error
	rpcErr *rpc.Error
	plain  json.RawMessage // CallToolResult
	// again marks a call the cancel phase made (the catalogue's calls judge what a tool does).
	again bool
	// mrtr holds the answers given in 2026-07-28 multi round-trip rounds.
	mrtr []string
	task *taskObs
}

// taskObs is everything seen of one task.
type taskObs struct {
	id     string
	create json.RawMessage // the whole CreateTaskResult
	inner  json.RawMessage // the task object inside it (2025-11-25: its "task")
	got    time.Time       // when the CreateTaskResult arrived
	ttl    *time.Duration  // from the CreateTaskResult; nil = unlimited or unknown
	poll   time.Duration   // the server's suggested interval

	mu sync.Mutex
	// pollMu serialises the tasks/get of one task (the follower's and the one after
	// tasks/result), so that statuses are in the order the server gave them.
	pollMu   sync.Mutex
	polls    []poll
	statuses []string // the creation status, then each tasks/get's
	// vanished is the error of a tasks/get that said the task is unknown, and when.
	vanished   error
	vanishedAt time.Time
	long       bool // still working when the checker stopped waiting
	budgetLong bool // ... and it stopped because the budget left no more time
	cut        bool // the budget ended the following
	other      error
	// Input: 2026-07-28 answers by key, the tasks/update acks, keys whose request changed.
	answered  map[string]string
	keyReqs   map[string]json.RawMessage
	keyReuse  string
	updates   []*rpc.Message
	updateErr []error
	asked     bool // input_required was seen
	// payload is the 2025-11-25 tasks/result answer.
	payload    *rpc.Message
	payloadErr error
	payloadCh  chan struct{}
	// payloadSent is the last status seen when tasks/result was sent, payloadAfter the status
	// a tasks/get sent right after its answer gave (A9b: it must block until the end).
	payloadSent, payloadAfter string
	payloadIdx                int  // the index of payloadAfter in statuses
	early                     bool // its tasks/result holds one of the maxEarly slots
	// cancel evidence
	cancelMsg   *rpc.Message
	cancelErr   error
	afterCancel []string
	// finishedCancel is the answer to tasks/cancel sent after the task had finished.
	finishedCancel    *rpc.Message
	finishedCancelErr error
}

type poll struct {
	at     time.Time
	msg    *rpc.Message
	err    error
	status string
}

func (t *taskObs) last() *poll {
	for i := len(t.polls) - 1; i >= 0; i-- {
		if t.polls[i].msg != nil && t.polls[i].msg.Result != nil {
			return &t.polls[i]
		}
	}
	return nil
}

// terminal returns the first terminal status seen, or "".
func (t *taskObs) terminal() string {
	for _, s := range t.statuses {
		if rpc.TaskStatus(s).Terminal() {
			return s
		}
	}
	return ""
}

// finalPoll returns the first tasks/get that showed a terminal status.
func (t *taskObs) finalPoll() *poll {
	for i := range t.polls {
		if t.polls[i].msg != nil && rpc.TaskStatus(t.polls[i].status).Terminal() {
			return &t.polls[i]
		}
	}
	return nil
}

// listTools fetches every page of tools/list.
func (r *runner) listTools(ctx context.Context) ([]*rpc.Message, error) {
	var pages []*rpc.Message
	cursor := ""
	seen := map[string]bool{}
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		m, err := r.send(ctx, "tools/list", params, req{})
		if err != nil {
			return pages, err
		}
		if m.Error != nil {
			return pages, m.Error
		}
		pages = append(pages, m)
		var lr struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		_ = json.Unmarshal(m.Result, &lr)
		for _, raw := range lr.Tools {
			var t struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
				Execution   struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
				Annotations struct {
					Destructive *bool `json:"destructiveHint"`
				} `json:"annotations"`
			}
			if json.Unmarshal(raw, &t) != nil || t.Name == "" {
				continue
			}
			r.tools = append(r.tools, &toolInfo{name: t.Name, schema: t.InputSchema, support: t.Execution.TaskSupport,
				destructive: t.Annotations.Destructive != nil && *t.Annotations.Destructive})
		}
		if lr.NextCursor == "" || seen[lr.NextCursor] {
			break
		}
		seen[lr.NextCursor] = true
		cursor = lr.NextCursor
	}
	return pages, nil
}

// plan decides which tools to call, and with which arguments. Building them is bounded
// (args.go) and ends with the time budget (ctx): a tool the budget left unbuilt is a cut,
// reported like the others, never a failure.
func (r *runner) plan(ctx context.Context) {
	byName := map[string]*toolInfo{}
	for _, t := range r.tools {
		byName[t.name] = t
	}
	for _, spec := range r.o.Tools {
		t := byName[spec.Name]
		if t == nil {
			t = &toolInfo{name: spec.Name, reason: NotListed, why: "the server does not list it"}
			r.tools = append(r.tools, t)
			continue
		}
		t.named = true
		t.args = spec.Args
		if t.args == nil {
			if a, err := buildArgs(ctx, t.schema); err == nil {
				t.args = a
			} else if !r.budgetCut(t, err) {
				t.reason, t.why = NoArguments, "cannot build its arguments ("+err.Error()+"); give them with --args"
			}
		}
	}
	for _, t := range r.tools {
		if t.named || t.reason != NotCalledNone {
			continue
		}
		switch {
		case r.o.NoCall:
			t.reason, t.why = NoCall, "--no-call"
		case t.destructive:
			// A tool that says it may destroy something is never called on a guess.
			t.reason, t.why = Destructive, "its annotations say destructiveHint; name it with --tool to call it"
		default:
			a, err := buildArgs(ctx, t.schema)
			if r.budgetCut(t, err) {
				break
			}
			if err != nil {
				t.reason, t.why = NoArguments, "cannot build its arguments: "+err.Error()+"; give them with --tool "+t.name+" --args JSON"
				break
			}
			t.args = a
		}
	}
	sort.SliceStable(r.tools, func(i, j int) bool { return r.tools[i].name < r.tools[j].name })
}

// budgetCut records that the time budget ended the building of t's arguments (err is
// errBudget): t is not called, and the report's cuts say so.
func (r *runner) budgetCut(t *toolInfo, err error) bool {
	if !errors.Is(err, errBudget) {
		return false
	}
	t.reason, t.why = BudgetCut, "cut by the time budget before its arguments were built"
	r.cut = append(r.cut, r.era+" "+t.name+": not called (the budget ran out while its arguments were built)")
	return true
}

// longAfter is how long a task may work before it counts as long-running: twenty of the
// server's poll intervals (10 s without a hint), at least 1 s, at most 10 s or a quarter of
// the era's share of the budget, whichever is more; and never more than 40% of that share.
func (r *runner) longAfter(poll time.Duration) time.Duration {
	d, _ := r.longWait(poll)
	return d
}

// longWait is longAfter, and whether the budget shortened it.
func (r *runner) longWait(poll time.Duration) (time.Duration, bool) {
	if r.o.LongAfter > 0 {
		return r.o.LongAfter, false
	}
	d := 20 * poll
	if poll <= 0 {
		d = 10 * time.Second // no hint from the server: give it time
	}
	if d < time.Second {
		d = time.Second
	}
	if limit := max(10*time.Second, r.share/4); d > limit {
		d = limit
	}
	if cap := r.share * 4 / 10; d > cap && cap > 0 {
		return cap, true
	}
	return d, false
}

// catalogue calls every planned tool at once (a few at a time) and follows every task.
func (r *runner) catalogue(ctx context.Context) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, t := range r.tools {
		if t.reason != NotCalledNone {
			continue
		}
		t := t
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			c := r.callTool(ctx, t, t.args, false)
			<-sem
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
			if c.task != nil {
				r.follow(ctx, c)
			}
			// B22, B22b, B27: the same call without the extension declared, for every tool
			// that gave a task (declared or not: B17b): the differential probe that tells a
			// tool error reported as failed (the same call run synchronously returns isError).
			if r.modern && c.task != nil && r.budgetLeft(ctx) {
				pctx, cancel := context.WithTimeout(ctx, r.longAfter(c.task.poll))
				t.plainCall = r.callTool(pctx, t, t.args, true)
				cancel()
				if pc := t.plainCall; pc.task != nil {
					// A task it should not have made: cancel it rather than leave it running.
					_, _ = r.send(ctx, "tasks/cancel", map[string]any{"taskId": pc.task.id}, req{})
				}
			}
		}()
	}
	wg.Wait()
}

// callTool sends one tools/call (in 2026-07-28 with the extension declared unless noExt;
// in 2025-11-25 task-augmented when the server and the tool allow it), answering up to three
// multi round-trip input rounds.
func (r *runner) callTool(ctx context.Context, t *toolInfo, args map[string]any, noExt bool) *call {
	c := &call{tool: t, args: args, start: time.Now()}
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": t.name, "arguments": args}
	if !r.modern && r.legacyCaps.call && (t.support == "optional" || t.support == "required") {
		// C25-TASKS §Tool-Level Negotiation.
		params["task"] = map[string]any{}
	}
	for round := 0; ; round++ {
		m, err := r.send(ctx, "tools/call", params, req{noExt: noExt, tool: t})
		c.dur = time.Since(c.start)
		switch {
		case err != nil:
			c.err = err
			return c
		case m.Error != nil:
			c.rpcErr = m.Error
			return c
		}
		res := obj(m.Result)
		rt := str(res["resultType"])
		switch {
		case r.modern && rt == "task", !r.modern && res["task"] != nil:
			c.task = r.newTaskObs(m.Result)
			return c
		case r.modern && rt == "input_required" && round < 3:
			// C26-MRTR: answer every input request and retry with a new id, echoing requestState.
			var ir struct {
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
				RequestState  *string                    `json:"requestState"`
			}
			_ = json.Unmarshal(m.Result, &ir)
			answers := map[string]json.RawMessage{}
			for k, v := range ir.InputRequests {
				a, err := answerEntry(v)
				if err != nil {
					c.err = fmt.Errorf("input request %q: %v", k, err)
					return c
				}
				answers[k] = a
				c.mrtr = append(c.mrtr, k+"="+string(compact(a)))
			}
			params["inputResponses"] = answers
			if ir.RequestState != nil {
				params["requestState"] = *ir.RequestState
			} else {
				delete(params, "requestState")
			}
			continue
		}
		c.plain = m.Result
		return c
	}
}

func (r *runner) newTaskObs(res json.RawMessage) *taskObs {
	inner := res
	if !r.modern {
		inner = obj(res)["task"]
	}
	tm := obj(inner)
	to := &taskObs{create: res, inner: inner, got: time.Now(), id: str(tm["taskId"]),
		answered: map[string]string{}, keyReqs: map[string]json.RawMessage{}}
	if s := str(tm["status"]); s != "" {
		to.statuses = append(to.statuses, s)
	}
	ttlKey, pollKey := "ttlMs", "pollIntervalMs"
	if !r.modern {
		ttlKey, pollKey = "ttl", "pollInterval"
	}
	var ms float64
	if json.Unmarshal(tm[ttlKey], &ms) == nil && ms > 0 {
		d := time.Duration(ms * float64(time.Millisecond))
		to.ttl = &d
	}
	if json.Unmarshal(tm[pollKey], &ms) == nil && ms > 0 {
		to.poll = time.Duration(ms * float64(time.Millisecond))
	}
	return to
}

// pollDelay is the wait between two tasks/get of t: the server's interval, kept between
// 10 ms and 1 s so a check neither hammers a server nor dawdles.
func pollDelay(t *taskObs) time.Duration {
	d := t.poll
	if d <= 0 {
		d = 200 * time.Millisecond
	}
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	if d > time.Second {
		d = time.Second
	}
	return d
}

// follow polls a task from its creation to its end and twice beyond (a finished task must
// stay as it finished), answering its input requests on the way. A task still working after
// longAfter is left running and marked long; the cancel rules use it.
func (r *runner) follow(ctx context.Context, c *call) {
	t := c.task
	if t.id == "" {
		t.other = errors.New("the CreateTaskResult has no taskId")
		return
	}
	wait, capped := r.longWait(t.poll)
	long := time.Now().Add(wait)
	extra := -1 // polls left after the terminal status
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				r.cutTask(c)
				return
			case <-time.After(pollDelay(t)):
			}
		}
		p := r.pollOnce(ctx, t)
		if p.err != nil || p.msg.Error != nil {
			if r.pollFailed(c, p, first) {
				continue
			}
			return
		}
		r.onStatus(ctx, c, p)
		if rpc.TaskStatus(p.status).Terminal() {
			if extra < 0 {
				extra = r.terminalPolls(ctx, t)
			}
			if extra == 0 {
				c.dur = time.Since(c.start)
				return
			}
			extra--
			continue
		}
		if extra >= 0 {
			// A terminal status changed to a live one: keep the evidence and stop.
			return
		}
		if time.Now().After(long) {
			r.markLong(c, wait, capped)
			return
		}
	}
}

// pollFailed records a poll that got no task (the budget's cut, a transport failure, a task
// gone, another error), and says whether to keep following: only after the first poll, whose
// error B25 judges.
func (r *runner) pollFailed(c *call, p poll, first bool) (keep bool) {
	t := c.task
	switch {
	case errors.Is(p.err, errBudget):
		r.cutTask(c)
		return false
	case p.err != nil:
		t.other = p.err
		return false
	case first:
		return true // B25 judges it; keep following
	case p.msg.Error.Code == rpc.CodeInvalidParams:
		t.mu.Lock()
		t.vanished, t.vanishedAt = p.msg.Error, time.Now()
		t.mu.Unlock()
	default:
		t.other = p.msg.Error
	}
	return false
}

// onStatus does what a live status calls for: answer a task that asks for input, or (in
// 2025-11-25) send tasks/result early.
func (r *runner) onStatus(ctx context.Context, c *call, p poll) {
	t := c.task
	if p.status == "input_required" {
		t.mu.Lock()
		t.asked = true
		t.mu.Unlock()
		r.answerTask(ctx, c, p.msg.Result)
	} else if !r.modern && p.status != "" && !rpc.TaskStatus(p.status).Terminal() && r.takeEarly(t) {
		// C25-TASKS §Result Retrieval: tasks/result on a task still working MUST block
		// until the end; send it now, so that A9b can see whether it does.
		r.startPayload(ctx, t, p.status)
	}
}

// terminalPolls is how many more polls follow a task's first terminal status; in 2025-11-25
// it also fetches the task's tasks/result.
func (r *runner) terminalPolls(ctx context.Context, t *taskObs) int {
	if r.modern {
		return 2
	}
	// C25-TASKS §Task Status Lifecycle: a terminal status MUST NOT change; watch it over
	// several poll intervals, not only at the first answer.
	r.fetchPayload(ctx, t)
	return terminalWatch
}

// pollOnce sends one tasks/get for t and records the answer: its status, and the poll
// interval it suggests.
func (r *runner) pollOnce(ctx context.Context, t *taskObs) poll {
	t.pollMu.Lock()
	defer t.pollMu.Unlock()
	m, err := r.send(ctx, "tasks/get", map[string]any{"taskId": t.id}, req{})
	p := poll{at: time.Now(), msg: m, err: err}
	if m != nil && m.Result != nil {
		p.status = str(obj(m.Result)["status"])
		if pi, ok := obj(m.Result)[map[bool]string{true: "pollIntervalMs", false: "pollInterval"}[r.modern]]; ok {
			var ms float64
			if json.Unmarshal(pi, &ms) == nil && ms > 0 {
				t.poll = time.Duration(ms * float64(time.Millisecond))
			}
		}
	}
	t.mu.Lock()
	t.polls = append(t.polls, p)
	if p.status != "" {
		t.statuses = append(t.statuses, p.status)
	}
	t.mu.Unlock()
	return p
}

// markLong records that c's task was still working after wait: a long-running one, which the
// cancel phase cancels. capped says the budget, not the server's pace, set wait.
func (r *runner) markLong(c *call, wait time.Duration, capped bool) {
	t := c.task
	t.mu.Lock()
	t.long, t.budgetLong = true, capped
	t.mu.Unlock()
	if capped {
		r.mu.Lock()
		r.cut = append(r.cut, fmt.Sprintf("%s %s: its task was still working after %s, all the budget left to wait (so it was taken for a long-running one and cancelled)", r.era, c.tool.name, wait.Round(time.Millisecond)))
		r.mu.Unlock()
	}
	c.dur = time.Since(c.start)
}

// cutTask records that the budget ended the following of c's task.
func (r *runner) cutTask(c *call) {
	c.task.mu.Lock()
	c.task.cut = true
	st := ""
	if n := len(c.task.statuses); n > 0 {
		st = c.task.statuses[n-1]
	}
	c.task.mu.Unlock()
	r.mu.Lock()
	r.cut = append(r.cut, fmt.Sprintf("%s %s: its task was not followed to its end (last seen %s)", r.era, c.tool.name, firstNonEmpty(st, "nothing")))
	r.mu.Unlock()
}

// answerTask answers what a task in input_required asks: in 2026-07-28 every new
// inputRequests key through tasks/update; in 2025-11-25 by calling tasks/result, on whose
// stream the server sends its requests (answered by onRequest).
func (r *runner) answerTask(ctx context.Context, c *call, res json.RawMessage) {
	t := c.task
	if !r.modern {
		r.startPayload(ctx, t, "input_required")
		return
	}
	var d struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	_ = json.Unmarshal(res, &d)
	keys := make([]string, 0, len(d.InputRequests))
	for k := range d.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	responses := map[string]json.RawMessage{}
	for _, k := range keys {
		v := d.InputRequests[k]
		t.mu.Lock()
		prev, seen := t.keyReqs[k]
		if seen && string(compact(prev)) != string(compact(v)) && t.keyReuse == "" {
			t.keyReuse = fmt.Sprintf("key %q carried %s, later %s", k, quote(prev), quote(v))
		}
		t.keyReqs[k] = v
		_, done := t.answered[k]
		t.mu.Unlock()
		if done {
			continue
		}
		a, err := answerEntry(v)
		if err != nil {
			t.mu.Lock()
			t.answered[k] = "not answered: " + err.Error()
			t.mu.Unlock()
			continue
		}
		responses[k] = a
		t.mu.Lock()
		t.answered[k] = string(compact(a))
		t.mu.Unlock()
	}
	if len(responses) == 0 {
		return
	}
	m, err := r.send(ctx, "tasks/update", map[string]any{"taskId": t.id, "inputResponses": responses}, req{})
	t.mu.Lock()
	t.updates = append(t.updates, m)
	t.updateErr = append(t.updateErr, err)
	t.mu.Unlock()
}

// terminalWatch is how many more times a finished 2025-11-25 task is polled (at the server's
// interval) to see that its terminal status never changes.
const terminalWatch = 4

// maxEarly bounds the tasks/result sent early (each holds a connection, or an SSE stream,
// until its task ends), so that polls never wait for a connection (--max-conns is 8 by
// default, and the GET stream holds one more); a task that asks for input always gets its
// tasks/result, as that is where its questions come.
const maxEarly = 2

// takeEarly reserves one of the maxEarly early tasks/result for t, once.
func (r *runner) takeEarly(t *taskObs) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.payloadCh != nil || t.early || r.early >= maxEarly {
		return false
	}
	t.early = true
	r.early++
	return true
}

// startPayload sends tasks/result for a task still at status, once per task, in the
// background.
func (r *runner) startPayload(ctx context.Context, t *taskObs, status string) {
	t.mu.Lock()
	started := t.payloadCh != nil
	if !started {
		t.payloadCh = make(chan struct{})
		t.payloadSent = status
	}
	t.mu.Unlock()
	if !started {
		go r.payload(ctx, t)
	}
}

// payload calls 2025-11-25 tasks/result, which blocks until the task is terminal; when it
// answers, a tasks/get says what status the task had by then.
func (r *runner) payload(ctx context.Context, t *taskObs) {
	m, err := r.send(ctx, "tasks/result", map[string]any{"taskId": t.id}, req{})
	after := ""
	var g *rpc.Message
	var gerr error
	if err == nil {
		t.pollMu.Lock()
		defer t.pollMu.Unlock()
		g, gerr = r.send(ctx, "tasks/get", map[string]any{"taskId": t.id}, req{})
	}
	// Not while rules read what the task showed (judgeAll, toolReports): this goroutine runs
	// beside them, as tasks/result answers only once the task has ended.
	r.quiet.Lock()
	defer r.quiet.Unlock()
	t.mu.Lock()
	if err == nil && gerr == nil && g.Result != nil {
		// It is one more poll: the status rules see it too.
		after = str(obj(g.Result)["status"])
		t.polls = append(t.polls, poll{at: time.Now(), msg: g, status: after})
		if after != "" {
			t.payloadIdx = len(t.statuses)
			t.statuses = append(t.statuses, after)
		}
	}
	t.payload, t.payloadErr, t.payloadAfter = m, err, after
	close(t.payloadCh)
	early := t.early
	t.mu.Unlock()
	if early {
		r.mu.Lock()
		r.early--
		r.mu.Unlock()
	}
}

// fetchPayload gets the result of a finished 2025-11-25 task, waiting for a tasks/result
// already under way.
func (r *runner) fetchPayload(ctx context.Context, t *taskObs) {
	t.mu.Lock()
	ch := t.payloadCh
	if ch == nil {
		t.payloadCh = make(chan struct{})
		t.payloadSent = "terminal" // sent after the end: A9b has nothing to judge
	}
	t.mu.Unlock()
	if ch == nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r.payload(pctx, t)
		cancel()
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
}

// ----------------------------------------------------------------------------------------------
// What the tools showed

// behaviours of a call, in the words of the report.
func (c *call) shows(modern bool) []string {
	var s []string
	switch {
	case c.err != nil:
	case c.rpcErr != nil:
		s = append(s, "protocol-error")
	case c.plain != nil:
		s = append(s, "plain")
		if isErrorResult(c.plain) {
			s = append(s, "tool-error")
		}
	case c.task != nil:
		t := c.task
		s = append(s, "task")
		if t.asked || len(c.mrtr) > 0 {
			s = append(s, "input")
		}
		switch t.terminal() {
		case "completed":
			s = append(s, "completes")
			if fp := t.finalPoll(); modern && fp != nil && isErrorResult(obj(fp.msg.Result)["result"]) {
				s = append(s, "tool-error")
			}
			if !modern && t.payload != nil && t.payload.Result != nil && isErrorResult(t.payload.Result) {
				s = append(s, "tool-error")
			}
		case "failed":
			if !modern && t.payload != nil && t.payload.Result != nil && isErrorResult(t.payload.Result) {
				s = append(s, "tool-error")
			} else {
				s = append(s, "protocol-error")
			}
		}
		if t.long || t.cancelMsg != nil {
			s = append(s, "cancellable")
		}
	}
	if len(c.mrtr) > 0 && !contains(s, "input") {
		s = append(s, "input")
	}
	return s
}

func isErrorResult(raw json.RawMessage) bool {
	var tr struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &tr)
	return tr.IsError
}

// seen describes a call in words for the report.
func (c *call) seen() string {
	switch {
	case c.err != nil:
		if errors.Is(c.err, errBudget) {
			return "cut by the time budget before it answered"
		}
		return "failed: " + c.err.Error()
	case c.rpcErr != nil:
		return fmt.Sprintf("error %d %q", c.rpcErr.Code, c.rpcErr.Message)
	case c.plain != nil:
		if isErrorResult(c.plain) {
			return "a plain result with isError"
		}
		return "a plain result"
	}
	t := c.task
	t.mu.Lock()
	defer t.mu.Unlock()
	var seq []string
	for _, s := range t.statuses {
		if len(seq) == 0 || seq[len(seq)-1] != s {
			seq = append(seq, s)
		}
	}
	out := "task: " + strings.Join(seq, " -> ")
	switch {
	case t.cut:
		out += " (the budget ended the following)"
	case t.long && t.cancelMsg == nil:
		out += fmt.Sprintf(" (still working after %s)", c.dur.Round(100*time.Millisecond))
	case t.long && t.budgetLong:
		out += " (still working when the budget left no more time to wait; cancelled by the checker)"
	case t.long:
		out += " (long-running; cancelled by the checker)"
	case t.vanished != nil:
		out += " (then unknown to the server)"
	}
	return out
}

func (r *runner) toolReports() []ToolReport {
	r.quiet.Lock()
	defer r.quiet.Unlock()
	var out []ToolReport
	for _, t := range r.tools {
		tr := ToolReport{Era: r.era, Name: t.name, Reason: t.reason, Why: t.why}
		if t.args != nil {
			tr.Args, _ = json.Marshal(t.args)
		}
		for _, c := range r.calls {
			if c.tool != t {
				continue
			}
			if !tr.Called {
				tr.Called, tr.Seen = true, c.seen()
			} else {
				tr.Seen += "; called again to be cancelled: " + c.seen()
			}
			for _, b := range c.shows(r.modern) {
				if !contains(tr.Shows, b) {
					tr.Shows = append(tr.Shows, b)
				}
			}
			tr.Answers = append(tr.Answers, c.mrtr...)
			if c.task != nil {
				c.task.mu.Lock()
				keys := make([]string, 0, len(c.task.answered))
				for k := range c.task.answered {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					tr.Answers = append(tr.Answers, k+"="+c.task.answered[k])
				}
				c.task.mu.Unlock()
				for _, sr := range r.requests {
					if sr.answer != "" && sr.taskID == c.task.id {
						tr.Answers = append(tr.Answers, sr.method+"="+sr.answer)
					}
				}
			}
		}
		for _, sr := range r.requests {
			switch {
			case sr.answer == "" || sr.taskID != "":
			case sr.tool == t.name || (len(sr.candidates) == 1 && sr.candidates[0] == t.name):
				tr.Answers = append(tr.Answers, sr.method+"="+sr.answer)
			case contains(sr.candidates, t.name):
				tr.Answers = append(tr.Answers, fmt.Sprintf("%s=%s (sent on the one stdio stream while %s were called: to one of them)", sr.method, sr.answer, strings.Join(sr.candidates, ", ")))
			}
		}
		if !tr.Called && tr.Reason == NotCalledNone {
			tr.Reason, tr.Why = BudgetCut, "cut by the time budget before it was called"
			r.cut = append(r.cut, r.era+" "+t.name+": not called")
		}
		out = append(out, tr)
	}
	return out
}
