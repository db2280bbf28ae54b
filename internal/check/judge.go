package check

// This file holds the one loop that judges rules: a rule's judging is a value (a judgement)
// that finds what it finds (a finding), and judgeAll records every finding the same way,
// under the rule's catalogue title and at its level.

import (
	"context"

	"github.com/mcptask/mcptask/internal/rpc"
)

// judgement is how one rule is judged, as one value; its id names the catalogue entry that
// gives it its title, section and level. It is judged in one of three ways:
//   - a task rule selects the calls that show what it needs (evidence; every task when nil)
//     and judges one call at a time (judge: a problem, or "");
//   - a probe sends one deliberately wrong request and judges the error it gets;
//   - a whole rule (several answers at once, a request of its own, a level of its own)
//     returns its finding.
type judgement struct {
	id       string
	evidence func(r *runner, ev evidence) (cs []*call, why string)
	judge    func(r *runner, c *call) string
	probe    *probe
	whole    func(ctx context.Context, r *runner, ev evidence) finding
}

// finding is what judging a rule found, for judgeAll to record.
type finding struct {
	// status, when set, is the verdict outright (a skip, a warning whatever the level, a pass
	// with a note), and seen says it; otherwise problem decides: "" passes, anything else
	// breaks the rule at its level.
	status  Status
	seen    string
	problem string
	// cut says the time budget, not the server, kept the rule from being judged; seen says
	// what was cut ("" when nothing more is known).
	cut bool
	// alt records the result under the rule's Alt title: it judges a part of the rule.
	alt bool
	// level, when override is set, replaces the rule's level: a part of the rule that the
	// spec states more (or less) strongly than the rest.
	level    Level
	override bool
	tools    []string
	// omit records nothing: the rule does not apply here, and another result says why (B31a
	// without the extension; the discovery rules when B17 says server/discover is unanswered).
	omit bool
}

// skipped is a finding that the rule could not be judged, and why.
func skipped(why string) finding { return finding{status: Skip, seen: why} }

// found is a finding judged by its problem ("" passes) on the given tools.
func found(problem string, tools ...string) finding {
	return finding{problem: problem, tools: tools}
}

// judgeAll judges every rule of a table, in order: the one loop of the checker's judgements.
func (r *runner) judgeAll(ctx context.Context, table []judgement) {
	ev := evidence{tasks: r.taskCalls(), none: r.noTasks()}
	for _, j := range table {
		r.record(j.id, j.judgeOn(ctx, r, ev))
	}
}

// judgeOn judges one rule on the evidence of a run.
func (j judgement) judgeOn(ctx context.Context, r *runner, ev evidence) finding {
	switch {
	case j.probe != nil:
		return r.sendProbe(ctx, j.probe)
	case j.whole != nil:
		return j.whole(ctx, r, ev)
	}
	cs, why := ev.tasks, ev.none
	if j.evidence != nil {
		cs, why = j.evidence(r, ev)
	}
	return each(cs, why, func(c *call) string { return j.judge(r, c) })
}

// each judges each call with fn (a problem or ""): the first problem is the finding, on that
// call's tool; with no call, the rule is skipped with why.
func each(cs []*call, why string, fn func(c *call) string) finding {
	if len(cs) == 0 {
		return skipped(why)
	}
	for _, c := range cs {
		if p := fn(c); p != "" {
			return found(c.tool.name+": "+p, c.tool.name)
		}
	}
	return found("", names(cs)...)
}

// record adds the result of a finding.
func (r *runner) record(id string, f finding) {
	title := ruleTitle(id)
	if f.alt {
		title = ruleAlt(id)
	}
	level := ruleLevel(id)
	if f.override {
		level = f.level
	}
	switch {
	case f.omit:
	case f.cut:
		r.cutTitled(id, title, f.seen, f.tools...)
	case f.status != "":
		r.addTitled(id, title, f.status, f.seen, f.tools...)
	default:
		r.judged(level, id, title, f.problem, f.tools...)
	}
}

// probe is a rule judged on one deliberately wrong request the checker sends itself: why it
// cannot run here (a skip, under the rule's Alt title when it has one), the request, the
// error its answer must be, and any further judgement of that error.
type probe struct {
	skip   func(r *runner) string
	method string
	params map[string]any
	q      req
	code   int64
	status int // the HTTP status the answer must have; 0 for any
	judge  func(r *runner, m *rpc.Message) string
}

// sendProbe sends a probe and judges its answer.
func (r *runner) sendProbe(ctx context.Context, p *probe) finding {
	if p.skip != nil {
		if why := p.skip(r); why != "" {
			return finding{status: Skip, seen: why, alt: true}
		}
	}
	m, err := r.send(ctx, p.method, p.params, p.q)
	problem := r.wantError(m, err, p.code, p.status)
	if problem == "" && p.judge != nil {
		problem = p.judge(r, m)
	}
	return found(problem)
}
