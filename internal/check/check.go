// Package check is mcptask's server conformance checker: it exercises an MCP server's Tasks
// implementation and reports, rule by rule with the spec section each comes from, what the
// server got right and wrong. It is its own package because it is a different idea from the
// client: it sends deliberately wrong requests (a mismatched Mcp-Name, an unknown task id, a
// request without the extension) and judges the answers, where the client only ever sends
// right ones and copes with the answers. So it speaks the wire itself (wire.go) and uses the
// rpc client only to open each era and to follow a listen stream.
//
// The rules are those of PROTOCOL.md §6 that a client can observe, plus schema validation of
// every response against the official JSON Schema of its era. The tools to exercise are chosen
// by observation (observe.go): every tool the checker can call safely is called once, and what
// comes back says which tool completes a task, reports a tool error, fails with a protocol
// error, asks for input or runs long enough to be cancelled. Each rule runs on the evidence
// that shows the behaviour it needs; a rule no tool can show is reported as skipped with the
// reason, never as passed.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Status is the verdict of one check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Warn Status = "warn"
	Skip Status = "skip"
)

// Result is one check's verdict.
type Result struct {
	ID      string `json:"id"`
	Era     string `json:"era"`
	Title   string `json:"title"`
	Section string `json:"section"`
	Status  Status `json:"status"`
	// Seen quotes what the server did (a failure or warning), or says why the rule was skipped.
	Seen string `json:"seen,omitempty"`
	// Tools names the tools whose behaviour the rule was judged on, when it needed any.
	Tools []string `json:"tools,omitempty"`
	// Quote is the spec sentence a failure or warning breaks (2025-11-25 rules).
	Quote string `json:"quote,omitempty"`
}

// ToolSpec names a tool to call with the given arguments (--tool NAME --args JSON).
type ToolSpec struct {
	Name string
	Args map[string]any
}

// ToolReport says what the checker did with one tool in one era and what it saw.
type ToolReport struct {
	Era  string `json:"era"`
	Name string `json:"name"`
	// Called is false when the tool was not called; Why then says why.
	Called bool            `json:"called"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Seen is what the call did, in words ("task: working -> completed").
	Seen string `json:"seen,omitempty"`
	// Shows lists the behaviours the tool was found to show: task, completes, tool-error,
	// protocol-error, input, cancellable, plain.
	Shows []string `json:"shows,omitempty"`
	// Answers are the answers given to the tool's input requests.
	Answers []string `json:"answers,omitempty"`
	// Reason says why the tool was not called; Why says it in words.
	Reason NotCalled `json:"-"`
	Why    string    `json:"why,omitempty"`
}

// NotCalled says why the checker did not call a tool.
type NotCalled int

const (
	NotCalledNone NotCalled = iota // it was called (or is still to be)
	NotListed                      // --tool names a tool the server does not list
	NoArguments                    // its arguments could not be built from its inputSchema
	NoCall                         // --no-call
	Destructive                    // its annotations say destructiveHint and --tool does not name it
	BudgetCut                      // the time budget ran out first
)

// Options say what to exercise.
type Options struct {
	// Connect opens a client to the server in the given era (rpc.VersionModern or
	// rpc.VersionLegacy) with the given client options (the checker's input answering and
	// traffic observer), already connected; it fails when the server does not speak that era.
	Connect func(ctx context.Context, era string, co rpc.ClientOptions) (*rpc.Client, error)
	// HTTP is true for a Streamable HTTP server (the header checks need it).
	HTTP bool
	// Eras limits the eras checked (default: both).
	Eras []string
	// Tools are called in addition to the ones the checker picks, with the given arguments,
	// even when their annotations say destructiveHint.
	Tools []ToolSpec
	// NoCall checks only what needs no tool call.
	NoCall bool
	// Budget bounds the whole run (60 s when zero).
	Budget time.Duration
	// Authorized says the requests carry an authorization context (a bearer token or OAuth):
	// a server may then bind tasks to it, and unguessable task ids are no longer its only
	// protection (C25-TASKS §Security Considerations), so A36 warns instead of failing.
	Authorized bool
	// Progress, when set, is told what the run is doing as it goes: the era, the phase, and
	// the tool being called (a person's terminal shows it). It is called from several
	// goroutines, and must return at once.
	Progress func(Progress)
	// LongAfter is how long a task may work before the checker treats it as long-running
	// (and cancels it); zero derives it from the server's poll interval and the budget.
	LongAfter time.Duration
}

// Progress is what a run is doing: which era, which phase ("discovery", "probes", "calling
// tools", "cancelling", "judging"), and in "calling tools" which tool.
type Progress struct {
	Era, Phase, Tool string
}

// say tells Options.Progress what the run is doing.
func (r *runner) say(phase, tool string) {
	if r.o.Progress != nil {
		r.o.Progress(Progress{Era: r.era, Phase: phase, Tool: tool})
	}
}

// phaseWords are the words a person sees for each phase of the judgements.
var phaseWords = map[phase]string{onDeclared: "discovery", beforeTools: "probes", onToolList: "listing tools",
	afterTools: "probes", afterCancel: "listening", onTasks: "judging", onAnswers: "judging"}

// Report is the outcome of a run.
type Report struct {
	Results []Result     `json:"results"`
	Tools   []ToolReport `json:"tools"`
	// Budget is the time budget, Used the time taken.
	Budget time.Duration `json:"-"`
	Used   time.Duration `json:"-"`
	// Cut says what the budget cut: rules not judged and tasks not followed to their end.
	Cut []string `json:"cut,omitempty"`
	// Reached is true when the server answered in at least one era.
	Reached bool `json:"-"`
}

// Failed reports whether any check failed.
func (rep *Report) Failed() bool {
	for _, r := range rep.Results {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Counts returns the number of results per status.
func (rep *Report) Counts() map[Status]int {
	m := map[Status]int{}
	for _, r := range rep.Results {
		m[r.Status]++
	}
	return m
}

// DefaultBudget is the time budget of a run when Options.Budget is zero.
const DefaultBudget = 60 * time.Second

// Run checks every era the server speaks, within the budget.
func Run(ctx context.Context, o Options) *Report {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	start := time.Now()
	deadline := start.Add(o.Budget)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rep := &Report{Budget: o.Budget}
	runners := map[string]*runner{}
	eraList := spokenEras(ctx, o, rep)
	for i, sp := range eraList {
		// Each era gets an even share of what is left, so an era that finishes early leaves
		// its time to the next.
		share := time.Until(deadline) / time.Duration(len(eraList)-i)
		r, c := sp.r, sp.c
		r.share = share
		if c == nil {
			r = newRunner(o, sp.era, share)
			var err error
			if c, err = connectEra(ctx, o, sp.era, r); err != nil {
				rep.unanswered(ctx, sp.era, "answered in "+sp.era+" once, then not again", "before the server answered again", err)
				continue
			}
		}
		rep.Reached = true
		runners[sp.era] = r
		r.runOn(ctx, c, share)
		rep.Results = append(rep.Results, r.results...)
		rep.Tools = append(rep.Tools, r.toolReports()...)
		rep.Cut = append(rep.Cut, r.cut...)
	}
	crossEra(rep, runners[rpc.VersionModern], runners[rpc.VersionLegacy])
	rep.Used = time.Since(start)
	return rep
}

// spoken is an era the server answered in, with the connection kept for the first one.
type spoken struct {
	era string
	c   *rpc.Client
	r   *runner
}

// spokenEras learns which eras the server speaks, so that the budget is shared between those
// only. The first era's connection is kept; the others are opened again when their turn comes
// (a 2025-11-25 session left idle meanwhile might expire). An era the server does not answer
// in is reported as such.
func spokenEras(ctx context.Context, o Options, rep *Report) []spoken {
	eras := o.Eras
	if len(eras) == 0 {
		eras = []string{rpc.VersionModern, rpc.VersionLegacy}
	}
	var eraList []spoken
	for _, era := range eras {
		r := newRunner(o, era, 0)
		c, err := connectEra(ctx, o, era, r)
		if err != nil {
			rep.unanswered(ctx, era, "did not answer in "+era, "before the server answered", err)
			continue
		}
		if len(eraList) > 0 {
			c.Close()
			c = nil
		}
		eraList = append(eraList, spoken{era, c, r})
	}
	return eraList
}

// connectEra opens a client of one era for r, bounded by connectTimeout.
func connectEra(ctx context.Context, o Options, era string, r *runner) (*rpc.Client, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout(o.Budget))
	defer cancel()
	return o.Connect(cctx, era, r.clientOptions())
}

// unanswered reports an era the server did not answer in: what it did not do (after "the
// server "), or, when the budget ran out, that the budget cut everything before (when).
func (rep *Report) unanswered(ctx context.Context, era, what, when string, err error) {
	seen := short("the server " + what + ": " + err.Error())
	if ctx.Err() != nil {
		seen = "cut by the time budget " + when
		rep.Cut = append(rep.Cut, era+": everything (the budget ran out "+when+")")
	}
	rep.Results = append(rep.Results, unspoken(era, seen))
}

// runOn checks one era over c, within share of the budget, and closes c.
func (r *runner) runOn(ctx context.Context, c *rpc.Client, share time.Duration) {
	r.c = c
	ectx, cancel := context.WithTimeout(ctx, share)
	defer cancel()
	r.run(ectx)
	r.cleanUp()
	c.Close()
}

// unspoken is the result of an era the server did not answer in (or no longer did).
func unspoken(era, seen string) Result {
	return Result{ID: "era", Era: era, Title: "server speaks " + era, Section: "C26-VER §Backward Compatibility", Status: Skip, Seen: seen}
}

// connectTimeout bounds one era's handshake: a server that does not speak an era may say
// nothing at all (a stdio server ignoring initialize).
func connectTimeout(budget time.Duration) time.Duration {
	if d := budget / 4; d < 20*time.Second {
		return d
	}
	return 20 * time.Second
}

// errBudget marks an exchange that the time budget cut short: never the server's fault.
var errBudget = errors.New("cut by the time budget")

type runner struct {
	c      *rpc.Client
	o      Options
	era    string
	modern bool
	share  time.Duration
	start  time.Time
	nextID atomic.Int64

	mu sync.Mutex
	// quiet keeps the background tasks/result of 2025-11-25 (payload) from changing what a
	// task showed while rules read it: judgeAll and toolReports hold it, and payload takes it
	// to write what it saw. The rules read a task's polls and statuses without its lock.
	quiet   sync.Mutex
	results []Result
	cut     []string
	// schema: per response kind, how many were validated and what was wrong.
	schemaN   map[string]int
	schemaBad map[string][]string
	// B18: results without a valid resultType.
	resultTypeN   int
	resultTypeBad []string
	// A11: 2025-11-25 server-to-client requests (elicitation and the like), and how many
	// tasks/result and plain tools/call exchanges are in flight (to tell whose a request is).
	requests   []serverRequest
	payloads   map[string]int // task id -> tasks/result in flight
	plainCalls map[string]int // tool -> plain tools/call in flight

	// discovery
	disc      discovered
	extension bool // 2026-07-28: the server declares the tasks extension
	// undeclared says a 2026-07-28 server that does not declare the extension answered a
	// tools/call (sent with the extension declared) with a task all the same: B17b fails,
	// and the task rules run on its tasks.
	undeclared bool
	// vocab are the 2025-11-25 task names seen under 2026-07-28 (B39); stamped the task-shaped
	// results marked complete (B18b); msN and msBad the task messages whose integer
	// millisecond fields were judged, and what was wrong with them (B24b).
	vocab   []string
	stamped []string
	toolRes int
	msN     int
	msBad   []string
	msNeg   []string
	// 2025-11-25: the capabilities initialize declared, and what they say of tasks.
	caps       json.RawMessage
	legacyCaps tasksCaps

	// notes are the 2025-11-25 notifications/tasks/status received, in arrival order (A6b).
	notes        []statusNote
	notesDropped int
	// standalone says the 2025-11-25 standalone GET stream was opened (or why not).
	standalone string
	// early counts the tasks/result sent before their task ended, still waiting (maxEarly).
	early int

	tools    []*toolInfo
	toolsErr error
	// toolPages are the pages tools/list answered (B17e judges their cache hints).
	toolPages []*rpc.Message
	calls     []*call
	handed    map[string]bool // task ids handed out outside the catalogue's calls (handed.go)
}

func newRunner(o Options, era string, share time.Duration) *runner {
	r := &runner{o: o, era: era, modern: era == rpc.VersionModern, share: share, start: time.Now(),
		schemaN: map[string]int{}, schemaBad: map[string][]string{}, payloads: map[string]int{}, plainCalls: map[string]int{}}
	r.nextID.Store(1 << 30)
	return r
}

// clientOptions are the options of the rpc client of an era: it declares elicitation (the
// checker answers input requests from their schema) and lets the checker see every result.
func (r *runner) clientOptions() rpc.ClientOptions {
	return rpc.ClientOptions{
		Protocol:    r.era,
		Elicitation: true,
		OnRequest:   r.onRequest,
		OnNotify:    r.onNotify,
		LenientCaps: true,
		Observe: func(era rpc.Era, method string, params map[string]any, result json.RawMessage, err error) {
			var rerr *rpc.Error
			if result == nil && !errors.As(err, &rerr) {
				return
			}
			r.validate(method, &rpc.Message{Result: result, Error: rerr})
		},
	}
}

// addTitled records a result under the given title: a rule's own (record), or (the schema
// rules) one that names the kind of answer. Its section comes from the catalogue (one source
// for the report and docs/guide/check.md).
func (r *runner) addTitled(id, title string, st Status, seen string, tools ...string) {
	section := ""
	if rule, ok := ruleOf(id); ok {
		section = rule.Section
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Strings(tools)
	res := Result{ID: id, Era: r.era, Title: title, Section: section, Status: st, Seen: short(seen), Tools: dedupe(tools)}
	if st == Fail || st == Warn {
		res.Quote = Quotes[id]
	}
	r.results = append(r.results, res)
}

// ruleTitle is the title of a rule's results; ruleAlt its Alt title (the title when it has
// none).
func ruleTitle(id string) string {
	rule, _ := ruleOf(id)
	return rule.Title
}

func ruleAlt(id string) string {
	rule, _ := ruleOf(id)
	return firstNonEmpty(rule.Alt, rule.Title)
}

// ruleLevel is a rule's catalogue level (Must for an id the catalogue lacks).
func ruleLevel(id string) Level {
	rule, _ := ruleOf(id)
	return rule.Level
}

// cutTitled records that the time budget, not the server, kept a rule from being judged: a
// skip that the report's cuts list. seen says what was cut ("" when nothing more is known).
func (r *runner) cutTitled(id, title, seen string, tools ...string) {
	if seen == "" {
		seen = errBudget.Error()
	}
	r.addTitled(id, title, Skip, seen, tools...)
	r.mu.Lock()
	r.cut = append(r.cut, r.era+" "+id+" "+title)
	r.mu.Unlock()
}

// judged records a verdict under the given title: pass when problem is "", else what
// breaking the rule at level means: fail for a MUST, warn for a SHOULD.
func (r *runner) judged(level Level, id, title, problem string, tools ...string) {
	if problem == "" {
		r.addTitled(id, title, Pass, "", tools...)
		return
	}
	r.addTitled(id, title, level.broken(), problem, tools...)
}

// budgetLeft says whether there is time for another step, keeping a small reserve for the
// probes that judge what was gathered.
func (r *runner) budgetLeft(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) > 200*time.Millisecond
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		return s[:239] + "…"
	}
	return s
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if v != "" && (i == 0 || s[i-1] != v) {
			out = append(out, v)
		}
	}
	return out
}

// obj decodes a JSON object into a map of raw fields.
func obj(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func quote(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return short(string(compact(raw)))
}

func compact(raw json.RawMessage) []byte {
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return raw
	}
	b, _ := json.Marshal(x)
	return b
}

func isInt(raw json.RawMessage) bool {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ifNot(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}
