package check

// This file holds the one loop that judges rules: each rule (a Rule value of its era's file)
// says how it is judged, judging it gives a finding, and judgeAll records every finding the
// same way, under the rule's title and at its level.

import (
	"context"
	"errors"

	"github.com/mcptask/mcptask/internal/rpc"
)

// finding is what judging a rule found, for judgeAll to record.
type finding struct {
	// status, when set, is the verdict outright (a skip, a warning whatever the level, a pass
	// with a note), and seen says it; otherwise problem decides: "" passes, anything else
	// breaks the rule at its level.
	status  Status
	seen    string
	problem string
	// exchangeErr is the error of the failed exchange the finding was built from: with no
	// problem, its failure is the problem. When the time budget cut it (errBudget), the
	// budget, not the server, kept the rule from being judged (budgetCut says how).
	exchangeErr error
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

// failed is a finding that an exchange the rule needed failed with err.
func failed(err error, tools ...string) finding {
	return finding{exchangeErr: err, tools: tools}
}

// from says which failed exchanges (err, nil for none) a problem was built from, so that a cut
// by the budget among them is known by its type.
func (f finding) from(err error) finding {
	if f.problem != "" {
		f.exchangeErr = err
	}
	return f
}

// budgetCut says how the time budget kept a verdict from being made.
type budgetCut int

const (
	uncut    budgetCut = iota
	cutWhole           // the exchange the verdict needed was cut: the cut is the finding
	cutPart            // an exchange among those the problem describes was cut
)

// budgetCut says whether a finding is the time budget's doing.
func (f finding) budgetCut() budgetCut {
	switch {
	case !errors.Is(f.exchangeErr, errBudget):
		return uncut
	case f.problem == "":
		return cutWhole
	}
	return cutPart
}

// judgeAll judges every rule of the era that is judged in phase p, in report order: the one
// loop of the checker's judgements.
func (r *runner) judgeAll(ctx context.Context, p phase) {
	r.say(phaseWords[p], "")
	r.quiet.Lock()
	defer r.quiet.Unlock()
	ev := evidence{tasks: r.taskCalls(), none: r.noTasks()}
	for _, rule := range Rules {
		if rule.Era == r.era && rule.phase == p {
			r.record(rule.ID, rule.judgeOn(ctx, r, ev))
		}
	}
}

// judgeOn judges one rule on the evidence of a run.
func (rule Rule) judgeOn(ctx context.Context, r *runner, ev evidence) finding {
	switch {
	case rule.probe != nil:
		return r.sendProbe(ctx, rule.probe)
	case rule.whole != nil:
		return rule.whole(ctx, r, ev)
	}
	cs, why := ev.tasks, ev.none
	if rule.evidence != nil {
		cs, why = rule.evidence(r, ev)
	}
	return each(cs, why, func(c *call) (string, error) {
		p := rule.judge(r, c)
		if p == "" || rule.exchange == nil {
			return p, nil
		}
		return p, rule.exchange(c)
	})
}

// each judges each call with fn (a problem or "", and the failed exchange it was built
// from): the first problem is the finding, on that call's tool; with no call, the rule is
// skipped with why.
func each(cs []*call, why string, fn func(c *call) (string, error)) finding {
	if len(cs) == 0 {
		return skipped(why)
	}
	for _, c := range cs {
		if p, err := fn(c); p != "" {
			return found(c.tool.name+": "+p, c.tool.name).from(err)
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
	problem := f.problem
	if problem == "" && f.exchangeErr != nil {
		problem = f.exchangeErr.Error()
	}
	switch {
	case f.omit:
	case f.status != "":
		r.addTitled(id, title, f.status, f.seen, f.tools...)
	case f.budgetCut() == cutWhole:
		r.cutTitled(id, title, problem, f.tools...)
	case f.budgetCut() == cutPart:
		r.cutTitled(id, title, errBudget.Error()+" ("+problem+")", f.tools...)
	default:
		r.judged(level, id, title, problem, f.tools...)
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
	if err != nil {
		return failed(err)
	}
	problem := r.wantError(m, nil, p.code, p.status)
	if problem == "" && p.judge != nil {
		problem = p.judge(r, m)
	}
	return found(problem)
}
