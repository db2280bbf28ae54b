package check

// This file holds what the rules of both eras share: the flow of a run, the catalogue of tools,
// cancellation, the evidence task rules select from, and the schema rules; judge.go holds the
// loop that judges every rule, rules_2026.go and rules_2025.go each era's own rules. Rule ids
// follow PROTOCOL.md §6 (A1-A16 are 2025-11-25, B17-B38 are 2026-07-28); a letter suffix marks
// a further rule under the same item, and A0/B0 are the schema rules, one result per kind of
// answer.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

func (r *runner) run(ctx context.Context) {
	if r.modern {
		r.runModern(ctx)
	} else {
		r.runLegacy(ctx)
	}
	r.judgeSchema()
	r.judgeAll(ctx, onAnswers)
	sort.SliceStable(r.results, func(i, j int) bool { return ruleLess(r.results[i].ID, r.results[j].ID) })
}

// ruleLess orders rule ids by their number, then their suffix ("B0:tools/call" < "B17" <
// "B17b" < "B21").
func ruleLess(a, b string) bool {
	na, sa := splitID(a)
	nb, sb := splitID(b)
	if na != nb {
		return na < nb
	}
	return sa < sb
}

func splitID(id string) (int, string) {
	i := 1
	for i < len(id) && id[i] >= '0' && id[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(id[min(1, len(id)):i])
	if err != nil {
		return 1 << 20, id
	}
	return n, id[i:]
}

// toolsPhase lists the tools, checks the cache hints of the list results, and runs the
// catalogue.
func (r *runner) toolsPhase(ctx context.Context) {
	r.say("listing tools", "")
	r.toolPages, r.toolsErr = r.listTools(ctx)
	r.judgeAll(ctx, onToolList)
	if r.toolsErr != nil && len(r.tools) == 0 {
		return
	}
	r.plan(ctx)
	r.catalogue(ctx)
}

func describeErr(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// offersTasks says whether the era has tasks to judge: in 2026-07-28 the server declares
// the extension, or served a task without declaring it (B17b); in 2025-11-25 initialize
// declares tasks.requests.tools.call.
func (r *runner) offersTasks() bool {
	if r.modern {
		return r.extension || r.undeclared
	}
	return r.legacyCaps.call
}

// noTasks says why there is no task to judge a task rule on.
func (r *runner) noTasks() string {
	why := r.noTaskCall()
	switch {
	case r.modern && !r.offersTasks() && r.o.NoCall:
		return "the server does not declare the " + rpc.TasksExtension + " extension, and --no-call: no tool was called to see whether it serves tasks all the same"
	case r.modern && !r.offersTasks():
		s := "the server does not declare the " + rpc.TasksExtension + " extension, and no tool called with it declared answered with a task"
		if d := strings.TrimPrefix(why, "no tool answered with a task"); d != why {
			return s + d
		}
		return s + " (" + why + ")"
	case !r.modern && !r.legacyCaps.call:
		return "initialize declares no tasks.requests.tools.call, so the server offers no tasks in 2025-11-25"
	}
	return why
}

// noTaskCall says why no call of the catalogue gave a task the checker could follow.
func (r *runner) noTaskCall() string {
	switch {
	case r.o.NoCall:
		return "--no-call: no tool was called"
	case r.toolsErr != nil && len(r.tools) == 0:
		return "tools/list failed: " + r.toolsErr.Error()
	case len(r.tools) == 0:
		return "the server lists no tools"
	}
	var called, not []string
	for _, t := range r.tools {
		if t.reason != NotCalledNone {
			not = append(not, t.name+" ("+shortWhy(t.why)+")")
		} else {
			called = append(called, t.name)
		}
	}
	for _, c := range r.calls {
		if c.task != nil && c.task.id == "" {
			return c.tool.name + " answered with a task without a taskId, so no task could be followed"
		}
		if r.modern && c.plain != nil && obj(c.plain)["taskId"] != nil {
			return c.tool.name + " answered with what looks like a task but has no resultType \"task\" (see B18, B18b), so no task could be followed"
		}
	}
	s := "no tool answered with a task"
	if len(called) > 0 {
		s += "; called: " + strings.Join(called, ", ")
	}
	if len(not) > 0 {
		s += "; not called: " + strings.Join(not, ", ")
	}
	return s
}

func shortWhy(why string) string {
	if i := strings.Index(why, ";"); i > 0 {
		return why[:i]
	}
	return why
}

// taskCalls returns the calls of the catalogue (and of the cancel phase) that made a task the
// checker could follow (one with a taskId).
func (r *runner) taskCalls() []*call {
	var out []*call
	for _, c := range r.calls {
		if c.task != nil && c.task.id != "" {
			out = append(out, c)
		}
	}
	return out
}

func names(cs []*call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.tool.name)
	}
	sort.Strings(out)
	return dedupe(out)
}

// evidence is what an era's judgements start from: the calls that made a task the checker
// could follow, and why there is none when there is none.
type evidence struct {
	tasks []*call
	none  string
}

// or says why cs is empty: why when there are tasks but none shows what the rule needs, else
// why there is no task at all.
func (ev evidence) or(cs []*call, why string) ([]*call, string) {
	if len(cs) == 0 && len(ev.tasks) > 0 {
		return cs, why
	}
	return cs, ev.none
}

// needsHeaders skips a probe of the HTTP headers on stdio.
func needsHeaders(r *runner) string { return ifNot(r.o.HTTP, "stdio has no headers") }

// seenStatuses checks every task's statuses against the state machine (B33, A6).
func seenStatuses(_ *runner, c *call) string {
	c.task.mu.Lock()
	seq := append(append([]string(nil), c.task.statuses...), c.task.afterCancel...)
	c.task.mu.Unlock()
	return transitions(seq)
}

// transitions checks a sequence of observed statuses against the state machine, and that a
// terminal status never changes.
func transitions(seq []string) string {
	allowed := map[string][]string{
		"working":        {"working", "input_required", "completed", "failed", "cancelled"},
		"input_required": {"input_required", "working", "completed", "failed", "cancelled"},
	}
	for i := 1; i < len(seq); i++ {
		from, to := seq[i-1], seq[i]
		if rpc.TaskStatus(from).Terminal() {
			if to != from {
				return fmt.Sprintf("the terminal status %s changed to %s (statuses seen: %s)", from, to, strings.Join(seq, " -> "))
			}
			continue
		}
		if !contains(allowed[from], to) {
			return fmt.Sprintf("%s -> %s is not in the state machine (statuses seen: %s)", from, to, strings.Join(seq, " -> "))
		}
	}
	return ""
}

// polledFinished selects the finished tasks polled at least twice (B33b).
func polledFinished(_ *runner, ev evidence) ([]*call, string) {
	var finished []*call
	for _, c := range ev.tasks {
		n := 0
		for _, p := range c.task.polls {
			if rpc.TaskStatus(p.status).Terminal() {
				n++
			}
		}
		if n >= 2 {
			finished = append(finished, c)
		}
	}
	return ev.or(finished, "no finished task could be polled twice")
}

// stable checks that the polls of a finished task agree with each other (B33b).
func stable(_ *runner, c *call) string {
	var first *poll
	for i := range c.task.polls {
		p := &c.task.polls[i]
		if !rpc.TaskStatus(p.status).Terminal() {
			continue
		}
		if first == nil {
			first = p
			continue
		}
		if p.status != first.status {
			return ""
		}
		for _, k := range []string{"result", "error"} {
			a, b := obj(first.msg.Result)[k], obj(p.msg.Result)[k]
			if string(compact(a)) != string(compact(b)) {
				return fmt.Sprintf("the %s of the %s task was %s, then %s", k, p.status, quote(a), quote(b))
			}
		}
	}
	return ""
}

// polledTwice selects the tasks polled at least twice, or found gone (B38, A38).
func polledTwice(_ *runner, ev evidence) ([]*call, string) {
	var polled []*call
	for _, c := range ev.tasks {
		if c.task.vanished != nil || len(c.task.polls) >= 2 {
			polled = append(polled, c)
		}
	}
	return polled, ev.none
}

// kept warns when a task became unknown before its TTL had passed (B38, A38). The spec says a
// server "may discard" a task after its TTL; before that, discarding it is not forbidden in so
// many words, so the rules are SHOULDs (PROTOCOL.md §6 rule 38; the conformance suite fails
// it).
func kept(_ *runner, c *call) string {
	t := c.task
	if t.vanished == nil {
		return ""
	}
	if t.ttl == nil {
		return fmt.Sprintf("task %s became unknown (%v) although its ttl is unlimited", t.id, t.vanished)
	}
	age := t.vanishedAt.Sub(t.got)
	if age < *t.ttl {
		return fmt.Sprintf("task %s became unknown (%v) %s after it was created, its ttl being %s", t.id, t.vanished, age.Round(time.Millisecond), *t.ttl)
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Cancellation (both eras)

// cancelPhase cancels every task still working after the catalogue; when none is, it calls
// the slowest task tool again and cancels its task at once. It also cancels a finished task.
func (r *runner) cancelPhase(ctx context.Context) {
	r.say("cancelling", "")
	var running []*call
	var slowest *call
	for _, c := range r.taskCalls() {
		t := c.task
		if t.long {
			running = append(running, c)
			continue
		}
		// The slowest task that ran at all, one that completes before one that fails.
		if t.terminal() != "" && len(t.polls) > 0 && !rpc.TaskStatus(t.polls[0].status).Terminal() && !t.asked {
			better := slowest == nil ||
				(t.terminal() == "completed") != (slowest.task.terminal() == "completed") && t.terminal() == "completed" ||
				(t.terminal() == "completed") == (slowest.task.terminal() == "completed") && c.dur > slowest.dur
			if better {
				slowest = c
			}
		}
	}
	if len(running) == 0 && slowest != nil && r.budgetLeft(ctx) {
		nc := r.callTool(ctx, slowest.tool, slowest.args, false)
		nc.again = true
		if nc.task != nil {
			nc.task.long = true
			r.mu.Lock()
			r.calls = append(r.calls, nc)
			r.mu.Unlock()
			running = append(running, nc)
		}
	}
	var wg sync.WaitGroup
	for _, c := range running {
		c := c
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cancel(ctx, c)
		}()
	}
	wg.Wait()
}

// cancel sends tasks/cancel for c's task and follows it a little while after.
func (r *runner) cancel(ctx context.Context, c *call) {
	t := c.task
	m, err := r.send(ctx, "tasks/cancel", map[string]any{"taskId": t.id}, req{})
	t.mu.Lock()
	t.cancelMsg, t.cancelErr = m, err
	t.mu.Unlock()
	if err != nil || m.Error != nil {
		return
	}
	if !r.modern {
		if st := str(obj(m.Result)["status"]); st != "" {
			t.mu.Lock()
			t.afterCancel = append(t.afterCancel, st)
			t.mu.Unlock()
		}
	}
	// EXT §Task Cancellation: eventually consistent; 2025-11-25: cancelled before the answer.
	end := time.Now().Add(r.longAfter(t.poll))
	for i := 0; i < 50 && time.Now().Before(end); i++ {
		g, err := r.send(ctx, "tasks/get", map[string]any{"taskId": t.id}, req{})
		if err != nil || g.Error != nil {
			return
		}
		st := str(obj(g.Result)["status"])
		t.mu.Lock()
		t.afterCancel = append(t.afterCancel, st)
		n := len(t.afterCancel)
		t.mu.Unlock()
		// 2025-11-25: the task MUST remain cancelled (C25-TASKS §Task Cancellation): watch it
		// for several polls, not only the first.
		if rpc.TaskStatus(st).Terminal() && (n >= 2 && r.modern || n >= terminalWatch) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollDelay(t)):
		}
	}
}

func (r *runner) cancelled() []*call {
	var out []*call
	for _, c := range r.taskCalls() {
		if c.task.cancelMsg != nil || c.task.cancelErr != nil {
			out = append(out, c)
		}
	}
	return out
}

// finished returns a task of the catalogue that ended completed or failed and was not
// cancelled.
func (r *runner) finished() *call {
	for _, c := range r.taskCalls() {
		if st := c.task.terminal(); (st == "completed" || st == "failed") && c.task.cancelMsg == nil && c.task.vanished == nil && !c.task.long {
			return c
		}
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Schemas and resultType (both eras)

// judgeSchema judges the schema rules A0 and B0: one result per kind of answer, named and
// titled by its kind, so these are the only results whose titles are not their rule's.
func (r *runner) judgeSchema() {
	r.mu.Lock()
	kinds := make([]string, 0, len(r.schemaN))
	for k := range r.schemaN {
		kinds = append(kinds, k)
	}
	n, bad := r.schemaN, r.schemaBad
	r.mu.Unlock()
	sort.Strings(kinds)
	prefix := "A0:"
	if r.modern {
		prefix = "B0:"
	}
	for _, k := range kinds {
		title := fmt.Sprintf("%s results match the official schema (%d seen)", k, n[k])
		switch k {
		case "errors":
			title = fmt.Sprintf("error responses match the official schema (%d seen)", n[k])
		case "other":
			title = fmt.Sprintf("other results match the schema's Result (%d seen)", n[k])
		}
		r.judged(Must, prefix+k, title, ifNot(len(bad[k]) == 0, "%d of %d invalid: %s", len(bad[k]), n[k], joinMax(dedupeSorted(bad[k]), 2)))
	}
}

// resultTypes judges B18 on every result validated (wire.go counts them); no result was
// validated when the server answered nothing.
func resultTypes(_ context.Context, r *runner, _ evidence) finding {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resultTypeN == 0 {
		return finding{omit: true}
	}
	return found(joinMax(dedupeSorted(r.resultTypeBad), 3))
}

func dedupeSorted(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// entropy judges whether a task id looks unguessable: long enough and varied.
func entropy(id string) string {
	if len(id) < 16 {
		return fmt.Sprintf("task id %q is only %d characters", id, len(id))
	}
	distinct := map[rune]bool{}
	for _, c := range id {
		distinct[c] = true
	}
	if len(distinct) < 8 {
		return fmt.Sprintf("task id %q uses only %d distinct characters", id, len(distinct))
	}
	return ""
}

// crossEra judges the isError rules of one era on what the other era showed, when the era
// itself could not tell: a tool error is recognised by its result, and a task that reports
// one as failed (2026-07-28) hides it, but the same tool in 2025-11-25 returns it from
// tasks/result; and the other way round.
func crossEra(rep *Report, modern, legacy *runner) {
	if modern == nil || legacy == nil {
		return
	}
	toolErr := func(r *runner) map[string]bool {
		m := map[string]bool{}
		for _, c := range r.taskCalls() {
			if contains(c.shows(r.modern), "tool-error") {
				m[c.tool.name] = true
			}
		}
		return m
	}
	for i := range rep.Results {
		res := &rep.Results[i]
		if res.Status != Skip {
			continue
		}
		var other map[string]bool
		var here *runner
		switch {
		case res.Era == rpc.VersionModern && res.ID == "B27":
			other, here = toolErr(legacy), modern
		case res.Era == rpc.VersionLegacy && res.ID == "A10":
			other, here = toolErr(modern), legacy
		default:
			continue
		}
		var problem string
		var tools []string
		for _, c := range here.taskCalls() {
			if !other[c.tool.name] {
				continue
			}
			st := c.task.terminal()
			tools = append(tools, c.tool.name)
			switch {
			case here.modern && st == "failed":
				problem = fmt.Sprintf("%s: a tool error (its 2025-11-25 tasks/result returns isError: true) ended failed, want completed with the CallToolResult in result", c.tool.name)
			case !here.modern && st == "completed":
				problem = fmt.Sprintf("%s: a tool error (its 2026-07-28 task completes with isError: true) ended completed, want failed", c.tool.name)
			}
			if problem != "" {
				break
			}
		}
		if len(tools) == 0 {
			continue
		}
		sort.Strings(tools)
		res.Tools = dedupe(tools)
		res.Status, res.Seen = Pass, ""
		if problem != "" {
			res.Status, res.Seen = Fail, short(problem)
		}
	}
}

// cleanUp cancels, best effort and briefly, the tasks the checker leaves working (the budget
// ended their following before the cancel phase reached them), so a check leaves no work
// running on the server.
func (r *runner) cleanUp() {
	if (r.modern && !r.offersTasks()) || (!r.modern && !r.legacyCaps.cancel) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range r.taskCalls() {
		t := c.task
		t.mu.Lock()
		done := t.terminal() != "" || t.cancelMsg != nil || len(t.afterCancel) > 0
		t.mu.Unlock()
		if !done && ctx.Err() == nil {
			_, _ = r.send(ctx, "tasks/cancel", map[string]any{"taskId": t.id}, req{})
		}
	}
}
