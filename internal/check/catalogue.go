package check

// This file holds what a rule is and the catalogue of them all; each era's rules are values
// in its own file (rules_2026.go, rules_2025.go).

import "context"

// Rule is one rule of the checker, as one value: its id, era, what it checks, the spec
// section it comes from, how strongly the spec states it, what it needs from the server's
// tools to be judged, and how it is judged.
type Rule struct {
	ID  string `json:"id"`
	Era string `json:"era"`
	// Title is the rule in a few words: the title of its results, defined here only.
	Title string `json:"title"`
	// Doc is the rule as docs/guide/check.md states it, when it says more than the title (how
	// a SHOULD is reported, what a schema result is per kind); Description() gives it.
	Doc string `json:"doc,omitempty"`
	// Alt is the title of a result that cannot judge the whole rule (a header probe skipped
	// on stdio, the task probes skipped without the extension, server/discover unanswered).
	Alt     string `json:"-"`
	Section string `json:"section"`
	Needs   string `json:"needs"`
	// Level says what breaking the rule means: a failure for a MUST, a warning for a SHOULD.
	Level Level `json:"-"`

	// How the rule is judged (judge.go): in which phase of its era's run, and in one of three
	// ways. A task rule selects the calls that show what it needs (evidence; every task when
	// nil) and judges one call at a time (judge: a problem, or ""); exchange, when its judge
	// reads an exchange of the call (tasks/cancel, tasks/update), is that exchange's error, so
	// that a problem built from an exchange the time budget cut is the budget's doing. A probe
	// sends one deliberately wrong request and judges the error it gets. A whole rule (several
	// answers at once, a request of its own, a level of its own) returns its finding.
	phase    phase
	evidence func(r *runner, ev evidence) (cs []*call, why string)
	judge    func(r *runner, c *call) string
	exchange func(c *call) error
	probe    *probe
	whole    func(ctx context.Context, r *runner, ev evidence) finding
}

// phase is when, in its era's run, a rule is judged.
type phase int

const (
	perKind     phase = iota // the schema rules (A0, B0): judgeSchema gives one result per kind of answer
	onDeclared               // on what the server declares (server/discover, initialize)
	beforeTools              // on probes that need no tool, before any tool is called
	onToolList               // on the tools/list answer (and the other lists)
	afterTools               // on calls of its own, once the catalogue has called every tool
	afterCancel              // after the cancel phase (2026-07-28, when the server offers tasks)
	onTasks                  // on what the tools' tasks showed, and on probes that use a task id
	onAnswers                // once every answer is in
)

// Level is how strongly the spec states a rule.
type Level int

const (
	Must Level = iota
	Should
)

// broken is the status of a result that breaks a rule of this level.
func (l Level) broken() Status {
	if l == Should {
		return Warn
	}
	return Fail
}

const (
	needsNothing  = "nothing (a probe the checker sends itself)"
	needsHTTP     = "Streamable HTTP (skipped on stdio)"
	needsTask     = "any tool that answers with a task"
	needsFinished = "a tool whose task finishes"
	needsInput    = "a tool whose task asks for input (answered from its requestedSchema)"
	needsLong     = "a tool whose task is still working when it is cancelled (one that runs long, or is slow enough to cancel at once)"
	needsToolErr  = "a tool that reports a tool error (a result with isError)"
)

// Rules lists every rule, in report order: each era's file holds its own. The table in
// docs/guide/check.md is checked against it.
var Rules = append(append([]Rule(nil), rules2026...), rules2025...)

// Description is the rule as the guide states it: its Doc, or its title.
func (r Rule) Description() string {
	if r.Doc != "" {
		return r.Doc
	}
	return r.Title
}

// ruleOf returns the catalogue entry of a result id ("B0:tools/call" is B0's).
func ruleOf(id string) (Rule, bool) {
	if i := len(id); i > 2 && (id[:3] == "A0:" || id[:3] == "B0:") {
		id = id[:2]
	}
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
