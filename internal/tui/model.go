// Package tui is the watch view: a bubbletea model that shows one task in detail or many in a
// table, live, and lets the user cancel a task or answer the input it asks for.
//
// The view does no I/O and does not poll. Following tasks is the engine's job
// (internal/follow, one engine for the plain printer, --jsonl and this view alike): the
// command layer turns the engine's events into Updates and sends them through a Feed, which
// coalesces them, however many arrive, into at most one message per frame; the view sends its
// commands (cancel, answer) back through the Controller it was given. The table keeps its
// rendered rows and rebuilds only those whose task changed, or all of them when the window
// moves, so that a thousand tasks cost a few dozen rows a frame.
package tui

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"

	"github.com/mcptask/mcptask/internal/taskstatus"
)

// Controller is everything the view may ask of the engine that follows its tasks.
// Implementations live in the command layer. Each call returns at once; its outcome comes
// back as Updates.
type Controller interface {
	// Cancel asks the server to cancel the task.
	Cancel(id string)
	// Answer answers one input request of the task with the spec's result object for its
	// kind: an ElicitResult ({"action":"accept","content":{…}}, {"action":"decline"} or
	// {"action":"cancel"}) or a ListRootsResult ({"roots":[…]}). For a request mcptask will
	// not fulfil (sampling/createMessage, or a kind it does not know) the view passes
	// {"action":"decline"}. The view calls Answer at most once per key unless an Update
	// reports that the answer failed (Retry).
	Answer(id, key string, response json.RawMessage)
}

// Snapshot is what the view knows of a task. Every string in it came from a server and is
// stripped of terminal escapes before it is drawn.
type Snapshot struct {
	TaskID        string
	Tool, Server  string
	Protocol      string // the MCP version the task is followed in ("2026-07-28", "2025-11-25")
	Status        string // working, input_required, completed, failed, cancelled, expired
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	TTL           *time.Duration // nil: unlimited
	PollInterval  time.Duration  // the server's suggestion; 0: none
	Inputs        []InputRequest // pending input requests
	Result        string         // a short summary once terminal
}

// Update is one thing the engine reported about a task, in the view's terms. Every field is
// optional: a zero field leaves what the view knew.
type Update struct {
	TaskID string
	// Snap, when its Status is set, is the task's new state; Via says how it came ("poll",
	// "push").
	Snap Snapshot
	Via  string
	// NextPoll, Interval and Source are the schedule: when the next poll is due, the delay in
	// use and why it has that value ("server's", "your --interval", a backoff, …).
	NextPoll time.Time
	Interval time.Duration
	Source   string
	// Failures and Err report a failed poll (the engine goes on); a Snap clears them.
	Failures int
	Err      string
	// Note is shown under the task: an acknowledged cancel, an answer sent or refused.
	Note string
	// Answered keys are never offered again; Retry is a key whose answer failed, offered again.
	Answered []string
	Retry    string
	// Done says the engine stopped following the task; Ended says why, when that is not a
	// terminal status ("the server no longer knows this task", an error).
	Done  bool
	Ended string
	// Progress is a notifications/progress about the task (MCP 2025-11-25, Progress).
	Progress *Progress
}

// Over reports whether nothing more will happen to the task: it reached a terminal status or
// expired (taskstatus.Over).
func (s Snapshot) Over() bool { return taskstatus.Over(s.Status) }

// InputRequest is one question a task asks.
type InputRequest struct {
	Key     string
	Kind    string // elicitation/create, roots/list, sampling/createMessage, or other
	Message string
	Mode    string // "form" or "url" for elicitations
	URL     string
	Schema  json.RawMessage // requestedSchema of a form elicitation
}

// Options tune the view.
type Options struct {
	// Now is the clock (fixed in golden tests).
	Now func() time.Time
	// DefaultInterval is what "possibly stuck" counts in before any schedule arrived (2 s when
	// zero).
	DefaultInterval time.Duration
	// NoColor renders without colours (NO_COLOR, TERM=dumb, goldens).
	NoColor bool
	// WorkDir is offered as the root when a server asks roots/list and the user allows it.
	WorkDir string
	// StuckAfter is how many poll intervals without any change mark a task possibly stuck
	// (10 when zero).
	StuckAfter int
	// DisableClock stops the once-a-second redraw while nothing arrives (tests that count
	// messages).
	DisableClock bool
	// Server names the server in the header when every task shares it, so that the rows
	// need not repeat it.
	Server string
	// Answered lists, per task id, the input keys answered before this view started (the
	// ledger remembers them), so that a resumed watch never offers or sends them again.
	Answered map[string][]string
	// OnFocus, when set, is told when the terminal reports that it gained (true) or lost
	// (false) focus, so that a task's end can be notified while the view is not in front
	// (--notify). Setting it asks the terminal for focus reports.
	OnFocus func(focused bool)
}

// FPS is the frame rate programs running the view should use (tea.WithFPS), and the most
// batches of updates a Feed delivers a second. The view only changes on updates, keys and a
// once-a-second clock, and bubbletea's default of 60 frames a second costs about 2% of a core
// while idle; 15 keeps typing responsive at under 1%.
const FPS = 15

// frame is the shortest time between two batches of updates: bubbletea draws the View after
// every message, so one message per frame is at most one View per frame.
const frame = time.Second / FPS

// maxHistory bounds the changes a task's history keeps.
const maxHistory = 128

// histEntry is one status or message change.
type histEntry struct {
	At      time.Time
	Status  string
	Message string
}

// task is the view's state of one task.
type task struct {
	id       string
	snap     Snapshot
	have     bool
	history  []histEntry
	dropped  int       // history entries dropped to keep it within maxHistory
	changed  time.Time // last time status, message or lastUpdatedAt changed
	failures int
	lastErr  string
	nextPoll time.Time
	interval time.Duration
	source   string // why interval has its value: "server's", "default", "your --interval", or the backoff
	answered map[string]bool
	note     string         // last action result shown to the user
	via      string         // how the latest update came: "poll" or "push"
	done     bool           // the engine stopped following it
	ended    string         // why, when not a terminal status
	prog     *progressState // the latest notifications/progress, nil until one came
	endedAt  time.Time      // when the view learnt that the task is over: its clocks stop there
	ver      uint64         // bumped on every change, for the row cache
}

// feedMsg is one batch of updates from the Feed; an empty one says a second passed with
// nothing new, so the countdowns move on.
type feedMsg struct {
	updates []Update
	at      time.Time
}

// chrome is the part of the view that is set up once: options, styles, keys and help, and
// the caches the view keeps between frames. It sits behind a pointer because bubbletea copies
// the Model into an interface on every Update, and these alone are about 10 KB.
type chrome struct {
	opts  Options
	st    styles
	keys  keyMap
	help  help.Model
	rows  rowCache
	bar   progress.Model // the detail view's progress bar
	views atomic.Int64
}

// Model is the watch view. It implements tea.Model.
type Model struct {
	*chrome
	ctl   Controller
	feed  *Feed
	ids   []string
	tasks map[string]*task

	cursor   int
	detail   bool // showing one task (always, with a single task)
	confirm  bool // waiting for y/n on a cancel
	showHelp bool
	// filter narrows the table to the tasks whose id, tool, status or message contain it;
	// filtering says it is being typed.
	filter    string
	filtering bool
	form      *inputForm
	last      time.Time // when the last batch arrived

	width, height int
	detached      bool
	done          bool
}

// New builds the view over ids, driven by the updates sent through feed, with ctl to send
// commands back. initial holds snapshots the command already has (the task just created), so
// that the first frame is not empty.
func New(ctl Controller, feed *Feed, ids []string, initial map[string]Snapshot, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DefaultInterval <= 0 {
		opts.DefaultInterval = 2 * time.Second
	}
	if opts.StuckAfter <= 0 {
		opts.StuckAfter = 10
	}
	m := Model{
		chrome: &chrome{opts: opts, st: newStyles(opts.NoColor), keys: defaultKeys(), help: help.New(), bar: newBar(opts.NoColor)},
		ctl:    ctl, feed: feed, ids: ids, tasks: map[string]*task{}, width: 80, height: 24,
		detail: len(ids) == 1,
	}
	if opts.NoColor {
		m.help.Styles = help.Styles{} // plain text
	}
	now := opts.Now()
	for _, id := range ids {
		t := &task{id: id, changed: now}
		for _, k := range opts.Answered[id] {
			t.answer(k)
		}
		if s, ok := initial[id]; ok {
			m.apply(t, s, now)
			t.markEnd(now)
		}
		m.tasks[id] = t
	}
	return m
}

// Outcomes returns the last snapshot of every task.
func (m Model) Outcomes() map[string]Snapshot {
	out := make(map[string]Snapshot, len(m.tasks))
	for id, t := range m.tasks {
		s := t.snap
		if s.TaskID == "" {
			s.TaskID = id
		}
		out[id] = s
	}
	return out
}

// Detached reports whether the user left with q or ctrl+c while tasks were still running.
func (m Model) Detached() bool { return m.detached }

// Views reports how many frames the view has drawn: at most one per batch, key or resize.
func (m Model) Views() int64 { return m.views.Load() }

// Init waits for the first batch of updates.
func (m Model) Init() tea.Cmd {
	if m.allDone() {
		return tea.Quit
	}
	return m.next()
}

// next waits for the next batch of updates from the feed (or a second of nothing, for the
// countdowns), at most one a frame.
func (m Model) next() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	clock := time.Second
	if m.opts.DisableClock {
		clock = 0
	}
	feed, last := m.feed, m.last
	return func() tea.Msg { return feed.wait(last, clock) }
}

// apply records a new snapshot, extending the history on every status or message change.
// A change is dated by the server's lastUpdatedAt when that is plausible (not ahead of our
// clock, not before the previous entry), because the poll that saw it may come a whole
// interval later; otherwise by our clock.
func (m Model) apply(t *task, s Snapshot, now time.Time) {
	prev := t.snap
	if s.Tool == "" {
		s.Tool = prev.Tool
	}
	if s.Server == "" {
		s.Server = prev.Server
	}
	if s.Protocol == "" {
		s.Protocol = prev.Protocol
	}
	if s.Result == "" && s.Status == prev.Status {
		s.Result = prev.Result
	}
	at := now
	if lu := s.LastUpdatedAt; !lu.IsZero() && !lu.After(now) &&
		(len(t.history) == 0 || !lu.Before(t.history[len(t.history)-1].At)) {
		at = lu
	}
	if !t.have || s.Status != prev.Status {
		m.rows.statusStamp++
	}
	if s.Server != prev.Server {
		m.rows.serverStamp++
	}
	if !t.have || s.Status != prev.Status || s.StatusMessage != prev.StatusMessage {
		// The history keeps its own copies: a snapshot's strings share one block with the rest
		// of the answer they came in, which the history would otherwise keep alive for good.
		if len(t.history) >= maxHistory {
			// A task that ticks its message for hours must not grow without bound: the oldest
			// half goes (no terminal shows more than the latest entries anyway).
			n := copy(t.history, t.history[maxHistory/2:])
			clear(t.history[n:])
			t.history = t.history[:n]
			t.dropped += maxHistory - n
		}
		t.history = append(t.history, histEntry{At: at, Status: statusName(s.Status), Message: strings.Clone(s.StatusMessage)})
		t.changed = at
	} else if !s.LastUpdatedAt.Equal(prev.LastUpdatedAt) {
		t.changed = at
	}
	t.snap = s
	t.have = true
}

// statusName returns the status as one of the spec's constants when it is one, so that no
// copy of it is kept per task.
func statusName(s string) string {
	for _, c := range []string{"working", "input_required", "completed", "failed", "cancelled", "expired"} {
		if s == c {
			return c
		}
	}
	return strings.Clone(s)
}

// update applies one Update to its task.
func (m *Model) update(u Update, now time.Time) {
	t := m.tasks[u.TaskID]
	if t == nil {
		return
	}
	t.ver++
	m.rows.changes++
	if u.Snap.Status != "" && !(t.have && t.snap.Over() && !u.Snap.Over()) {
		m.apply(t, u.Snap, now)
		t.failures, t.lastErr = 0, ""
		if u.Via != "" {
			t.via = u.Via
		}
	}
	if u.Interval > 0 || !u.NextPoll.IsZero() {
		t.nextPoll, t.interval, t.source = u.NextPoll, u.Interval, u.Source
	}
	if u.Err != "" {
		t.failures, t.lastErr = u.Failures, u.Err
	}
	if u.Note != "" {
		t.note = u.Note
	}
	if p := u.Progress; p != nil && !t.finished() {
		if t.prog == nil {
			t.prog = &progressState{}
			m.rows.progress = true
		}
		t.prog.Progress = Progress{Value: p.Value, Total: p.Total, Message: strings.Clone(p.Message)}
		t.prog.n++
	}
	for _, k := range u.Answered {
		t.answer(k)
	}
	if u.Retry != "" {
		delete(t.answered, u.Retry) // let the user try again
	}
	if u.Done {
		t.done, t.ended = true, u.Ended
		t.nextPoll = time.Time{}
	}
	t.markEnd(now)
	if (t.done || t.snap.Over()) && m.form != nil && m.form.id == t.id {
		// Nothing can be answered any more; keeping the form would also keep the program
		// from quitting.
		m.form = nil
		t.note = "the task ended before the input was sent"
	}
}

// answer marks key answered. The set is made on first use: most of a thousand tasks never ask.
func (t *task) answer(key string) {
	if t.answered == nil {
		t.answered = map[string]bool{}
	}
	t.answered[key] = true
}

// markEnd notes when the view learnt that t is over, the first time it is.
func (t *task) markEnd(now time.Time) {
	if t.endedAt.IsZero() && t.finished() {
		t.endedAt = now
	}
}

// clock is the time t's elapsed time, TTL and last update are counted to: now while it runs;
// once it is over, its end, so that the frame left on the screen says how long it took and
// what TTL it had then. The end is the server's lastUpdatedAt of the final status when that
// is plausible (the poll that saw it may come an interval later), else when the view learnt it.
func (t *task) clock(now time.Time) time.Time {
	if t.endedAt.IsZero() {
		return now
	}
	end := t.endedAt
	if lu := t.snap.LastUpdatedAt; t.snap.Over() && !lu.IsZero() && lu.Before(end) && !lu.Before(t.snap.CreatedAt) {
		end = lu
	}
	return end
}

// finished reports whether nothing more will be followed of t.
func (t *task) finished() bool { return t.done || (t.have && t.snap.Over()) }

func (m Model) allDone() bool {
	for _, t := range m.tasks {
		if !t.finished() {
			return false
		}
	}
	return true
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		if m.form != nil {
			m.form.resize(msg.Width, msg.Height)
		}
		return m, nil
	case feedMsg:
		m.last = msg.at
		now := m.opts.Now()
		for _, u := range msg.updates {
			m.update(u, now)
		}
		if m.done {
			return m, nil
		}
		if q := m.quitIfDone(); q != nil {
			return m, q
		}
		return m, m.next()
	case tea.KeyPressMsg:
		return m.onKey(msg)
	case tea.FocusMsg:
		if m.opts.OnFocus != nil {
			m.opts.OnFocus(true)
		}
		return m, nil
	case tea.BlurMsg:
		if m.opts.OnFocus != nil {
			m.opts.OnFocus(false)
		}
		return m, nil
	}
	if m.form != nil {
		// huh moves between fields and finishes the form by messages of its own.
		f, cmd, done := m.form.update(msg)
		return m.formDone(f, cmd, done)
	}
	return m, nil
}

func (m *Model) quitIfDone() tea.Cmd {
	if m.allDone() && m.form == nil {
		m.done = true
		return tea.Quit
	}
	return nil
}

// selected returns the task under the cursor (or the only one).
func (m Model) selected() *task {
	ids := m.shown()
	if len(ids) == 0 {
		return nil
	}
	m.cursor = min(max(m.cursor, 0), len(ids)-1)
	return m.tasks[ids[m.cursor]]
}

func (m Model) onKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		// ctrl+c detaches from every screen, the form included, where q is just a letter.
		return m.detach()
	}
	if m.form != nil {
		return m.onFormKey(msg)
	}
	if m.confirm {
		return m.onConfirmKey(msg)
	}
	if m.filtering {
		return m.onFilterKey(msg)
	}
	table := len(m.ids) > 1 && !m.detail
	last := max(len(m.shown())-1, 0)
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m.detach()
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, m.keys.Up):
		m.cursor = max(min(m.cursor, last)-1, 0)
	case key.Matches(msg, m.keys.Down):
		m.cursor = min(m.cursor+1, last)
	case table && key.Matches(msg, m.keys.PageUp):
		m.cursor = max(min(m.cursor, last)-m.tableRoom(), 0)
	case table && key.Matches(msg, m.keys.PageDown):
		m.cursor = min(m.cursor+m.tableRoom(), last)
	case table && key.Matches(msg, m.keys.Top):
		m.cursor = 0
	case table && key.Matches(msg, m.keys.Bottom):
		m.cursor = last
	case table && key.Matches(msg, m.keys.Filter):
		m.filtering = true
	case key.Matches(msg, m.keys.Open):
		if m.selected() != nil {
			m.detail = true
		}
	case key.Matches(msg, m.keys.Back):
		switch {
		case len(m.ids) > 1 && m.detail:
			m.detail = false
		case table && m.filter != "":
			m.filter, m.cursor = "", 0
		}
	case key.Matches(msg, m.keys.Cancel):
		if t := m.selected(); t != nil && !t.finished() {
			m.confirm = true
		}
	case key.Matches(msg, m.keys.Answer):
		id := m.answerable()
		if id == "" {
			break
		}
		if t := m.selected(); t == nil || t.id != id {
			// Nothing to answer here: go to the first task that waits for input.
			m.goTo(id)
			return m, nil
		}
		// Every open question of the task in one form, in the server's order.
		t := m.tasks[id]
		f, cmd := newInputForm(t.id, m.pendingAll(t), m.opts.WorkDir, m.st, m.width, m.height)
		m.form = f
		return m, cmd
	}
	return m, nil
}

// onFormKey passes a key to the open answer form.
func (m Model) onFormKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	f, cmd, done := m.form.key(msg)
	return m.formDone(f, cmd, done)
}

// formDone keeps the form f, or, when it closed, sends its answers (none when the user went
// back).
func (m Model) formDone(f *inputForm, cmd tea.Cmd, done []answered) (tea.Model, tea.Cmd) {
	m.form = f
	if f != nil {
		return m, cmd
	}
	var sends []tea.Cmd
	var keys []string
	for _, a := range done {
		t := m.tasks[a.id]
		// MCP 2026-07-28, Tasks, §Task Update Requests: the client "SHOULD deduplicate keys
		// across polls and SHOULD track keys already answered"; the key is marked before the
		// call so that a poll landing meanwhile cannot offer it again.
		if t == nil || t.answered[a.key] {
			continue
		}
		t.answer(a.key)
		keys = append(keys, a.key)
		t.note = "answering " + strings.Join(keys, ", ") + "…"
		t.ver++
		ctl, id, k, resp := m.ctl, a.id, a.key, a.response
		sends = append(sends, func() tea.Msg { ctl.Answer(id, k, resp); return nil })
	}
	if len(sends) > 0 {
		return m, tea.Sequence(sends...) // in the server's order
	}
	return m, m.quitIfDone() // closed without answering
}

// onConfirmKey answers the cancel question: yes cancels the selected task, any other key
// does not.
func (m Model) onConfirmKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	m.confirm = false
	if key.Matches(msg, m.keys.Yes) {
		t := m.selected()
		if t == nil {
			return m, nil
		}
		t.note = "cancelling…"
		t.ver++
		ctl, id := m.ctl, t.id
		return m, func() tea.Msg { ctl.Cancel(id); return nil }
	}
	return m, nil
}

// detach ends the view and leaves the tasks running: the caller prints the resume command.
func (m Model) detach() (tea.Model, tea.Cmd) {
	m.detached = !m.allDone()
	m.done = true
	return m, tea.Quit
}

// pending returns the first input request of t not answered yet (keys are deduplicated
// across polls: a key answered once is never offered again).
func (m Model) pending(t *task) (InputRequest, bool) {
	for _, in := range t.snap.Inputs {
		if !t.answered[in.Key] {
			return in, true
		}
	}
	return InputRequest{}, false
}

// pendingAll lists every input request of t not answered yet.
func (m Model) pendingAll(t *task) []InputRequest {
	var out []InputRequest
	for _, in := range t.snap.Inputs {
		if !t.answered[in.Key] {
			out = append(out, in)
		}
	}
	return out
}
