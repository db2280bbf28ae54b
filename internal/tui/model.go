// Package tui is the watch view: a bubbletea model that shows one task in detail or many in a
// table, live, and lets the user cancel a task or answer the input it asks for.
//
// The model does no I/O of its own. Everything it needs from the outside (a tasks/get, a
// cancel, an answer) goes through the Poller the command layer gives it, so the view can be
// driven by a scripted Poller in tests and never imports the transport, the ledger or
// net/http. Polling is paced by the model: one tick per task, re-armed from the interval of the
// latest answer, with a generation number so that a stale tick can never start a second poll
// loop for the same task.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Poller is everything the view may ask of the outside world. Implementations live in cmd.
type Poller interface {
	// Poll fetches the task's current state (one tasks/get or equivalent).
	Poll(ctx context.Context, id string) (Snapshot, error)
	// Cancel asks the server to cancel the task and returns the task as acknowledged.
	Cancel(ctx context.Context, id string) (Snapshot, error)
	// Answer answers one input request of the task with the spec's result object for its
	// kind: an ElicitResult ({"action":"accept","content":{…}}, {"action":"decline"} or
	// {"action":"cancel"}) or a ListRootsResult ({"roots":[…]}). For a request mcptask
	// will not fulfil (sampling/createMessage, or a kind it does not know) the view passes
	// {"action":"decline"}, and the implementation sends that kind's refusal (for a
	// 2025-11-25 server→client request, a JSON-RPC error). The view calls Answer at most
	// once per key unless the call fails.
	Answer(ctx context.Context, id, key string, response json.RawMessage) error
}

// Snapshot is what the view knows of a task after a poll. Every string in it came from a
// server and is stripped of terminal escapes before it is drawn.
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

// PushMsg is a task update that arrived by push (a 2026-07-28 listen stream, a 2025-11-25
// status notification) rather than by a poll. The command layer sends it into the program;
// the view shows it like a poll answer, marked as pushed, and relaxes that task's polling.
type PushMsg Snapshot

// Terminal reports whether nothing more will happen to the task.
func (s Snapshot) Terminal() bool {
	switch s.Status {
	case "completed", "failed", "cancelled", "expired":
		return true
	}
	return false
}

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
	// MinInterval is the user's --interval: polling can only be slowed by it.
	MinInterval time.Duration
	// DefaultInterval is used when the server suggests none (2 s when zero).
	DefaultInterval time.Duration
	// NoColor renders without colours (NO_COLOR, TERM=dumb, goldens).
	NoColor bool
	// WorkDir is offered as the root when a server asks roots/list and the user allows it.
	WorkDir string
	// StuckAfter is how many poll intervals without any change mark a task possibly stuck
	// (10 when zero).
	StuckAfter int
	// DisableClock stops the one-second re-render tick (tests that count messages).
	DisableClock bool
	// Server names the server in the header when every task shares it, so that the rows
	// need not repeat it.
	Server string
	// Answered lists, per task id, the input keys answered before this view started (the
	// ledger remembers them), so that a resumed watch never offers or sends them again.
	Answered map[string][]string
}

// FPS is the frame rate programs running the view should use (tea.WithFPS). The view only
// changes on polls, keys and a once-a-second clock, and bubbletea's default of 60 frames a
// second costs about 2% of a core while idle; 15 keeps typing responsive at under 1%.
const FPS = 15

const (
	minInterval = 100 * time.Millisecond
	maxInterval = 60 * time.Second
	maxBackoff  = 60 * time.Second
)

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
	changed  time.Time // last time status, message or lastUpdatedAt changed
	gen      int       // generation of the armed tick
	inFlight bool
	failures int
	lastErr  string
	nextPoll time.Time
	interval time.Duration
	source   string // why interval has its value: "server's", "default", "your --interval", or the backoff
	answered map[string]bool
	note     string // last action result shown to the user
	via      string // how the latest update came: "poll" or "push"
}

// Messages.
type (
	tickMsg struct {
		id  string
		gen int
	}
	pollMsg struct {
		id   string
		snap Snapshot
		err  error
	}
	cancelMsg struct {
		id   string
		snap Snapshot
		err  error
	}
	answerMsg struct {
		id, key string
		err     error
	}
	clockMsg time.Time
)

// chrome is the part of the view that is set up once: options, styles, keys and help. It
// sits behind a pointer because bubbletea copies the Model into an interface on every
// Update, and these alone are about 10 KB.
type chrome struct {
	opts Options
	st   styles
	keys keyMap
	help help.Model
}

// Model is the watch view. It implements tea.Model.
type Model struct {
	*chrome
	p     Poller
	ctx   context.Context
	ids   []string
	tasks map[string]*task

	cursor   int
	detail   bool // showing one task (always, with a single task)
	confirm  bool // waiting for y/n on a cancel
	showHelp bool
	form     *inputForm

	width, height int
	detached      bool
	done          bool
}

// New builds the view over ids. initial holds snapshots the command already has (the task
// just created, or the last poll), so that the first frame is not empty.
func New(p Poller, ids []string, initial map[string]Snapshot, opts Options) Model {
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
		chrome: &chrome{opts: opts, st: newStyles(opts.NoColor), keys: defaultKeys(), help: help.New()},
		p:      p, ctx: context.Background(), ids: ids, tasks: map[string]*task{}, width: 80, height: 24,
		detail: len(ids) == 1,
	}
	if opts.NoColor {
		m.help.Styles = help.Styles{} // plain text
	}
	now := opts.Now()
	for _, id := range ids {
		t := &task{id: id, answered: map[string]bool{}, changed: now}
		for _, k := range opts.Answered[id] {
			t.answered[k] = true
		}
		if s, ok := initial[id]; ok {
			m.apply(t, s, now)
		}
		m.tasks[id] = t
	}
	return m
}

// WithContext returns the model with the context its Poller calls get; cancelling it stops
// calls in flight when the program ends.
func (m Model) WithContext(ctx context.Context) Model { m.ctx = ctx; return m }

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

// Init starts one poll loop per task and the clock.
func (m Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	for _, id := range m.ids {
		t := m.tasks[id]
		if t.have && t.snap.Terminal() {
			continue
		}
		if t.have {
			cmds = append(cmds, m.arm(t, m.intervalFor(t)))
		} else {
			t.inFlight = true
			cmds = append(cmds, m.pollCmd(id))
		}
	}
	if m.allDone() {
		return tea.Quit
	}
	if !m.opts.DisableClock {
		cmds = append(cmds, clock())
	}
	return tea.Batch(cmds...)
}

func clock() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// intervalFor picks the delay before t's next poll and records why: the server's suggestion
// clamped to [100 ms, 60 s] (or the default when it gave none), never faster than --interval,
// and after failed polls an exponential backoff from that delay, capped at 60 s.
func (m Model) intervalFor(t *task) time.Duration {
	d, src := m.opts.DefaultInterval, "default"
	if t.snap.PollInterval > 0 {
		// C25-TASKS §Getting Tasks, EXT §Task Polling: the client SHOULD poll at the
		// server's pollInterval and re-read it on every response, since it may change.
		d, src = t.snap.PollInterval, "server's"
	}
	d = min(max(d, minInterval), maxInterval)
	if m.opts.MinInterval > d {
		d, src = m.opts.MinInterval, "your --interval"
	}
	if t.failures > 0 {
		// Doubling from at least a second: a server that is down gets fewer requests the
		// longer it stays down. Up to a fifth is taken off at random so that many tasks
		// failing together (one server restarting) do not all retry in the same instant.
		b := min(max(d, time.Second)<<min(t.failures, 6), maxBackoff)
		b -= time.Duration(rand.Int64N(int64(b)/5 + 1))
		if b > d {
			d = b
			src = fmt.Sprintf("backed off after %d failed poll", t.failures)
			if t.failures > 1 {
				src += "s"
			}
		}
	}
	t.source = src
	return d
}

// arm schedules t's next poll, replacing any tick armed before (its generation is stale).
func (m Model) arm(t *task, d time.Duration) tea.Cmd {
	t.gen++
	t.interval = d
	t.nextPoll = m.opts.Now().Add(d)
	id, gen := t.id, t.gen
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{id: id, gen: gen} })
}

func (m Model) pollCmd(id string) tea.Cmd {
	ctx, p := m.ctx, m.p
	return func() tea.Msg {
		s, err := p.Poll(ctx, id)
		return pollMsg{id: id, snap: s, err: err}
	}
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
	at := now
	if lu := s.LastUpdatedAt; !lu.IsZero() && !lu.After(now) &&
		(len(t.history) == 0 || !lu.Before(t.history[len(t.history)-1].At)) {
		at = lu
	}
	if !t.have || s.Status != prev.Status || s.StatusMessage != prev.StatusMessage {
		t.history = append(t.history, histEntry{At: at, Status: s.Status, Message: s.StatusMessage})
		t.changed = at
	} else if !s.LastUpdatedAt.Equal(prev.LastUpdatedAt) {
		t.changed = at
	}
	t.snap = s
	t.have = true
}

func (m Model) allDone() bool {
	for _, t := range m.tasks {
		if !t.have || !t.snap.Terminal() {
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
			m.form.resize(msg.Width)
		}
		return m, nil
	case clockMsg:
		if m.done {
			return m, nil
		}
		return m, clock()
	case tickMsg:
		t := m.tasks[msg.id]
		if t == nil || msg.gen != t.gen || t.inFlight || (t.have && t.snap.Terminal()) {
			return m, nil // stale or superseded: never a second loop
		}
		t.inFlight = true
		return m, m.pollCmd(msg.id)
	case PushMsg:
		return m.onPush(Snapshot(msg))
	case pollMsg:
		return m.onPoll(msg)
	case cancelMsg:
		t := m.tasks[msg.id]
		if t == nil {
			return m, nil
		}
		if msg.err != nil {
			t.note = "cancel failed: " + msg.err.Error()
			return m, nil
		}
		t.note = "cancellation requested"
		// EXT §Task Cancellation: the acknowledgement "does not mean the task is cancelled";
		// it may still end completed or failed, so polling goes on until a terminal status.
		if msg.snap.Status != "" {
			m.apply(t, msg.snap, m.opts.Now())
		}
		if t.snap.Terminal() {
			return m, m.quitIfDone()
		}
		if !t.inFlight {
			return m, m.arm(t, 0)
		}
		return m, nil
	case answerMsg:
		t := m.tasks[msg.id]
		if t == nil {
			return m, nil
		}
		if msg.err != nil {
			delete(t.answered, msg.key) // let the user try again
			t.note = "answer to " + msg.key + " failed: " + msg.err.Error()
			return m, nil
		}
		t.note = "answered " + msg.key
		if t.have && t.snap.Terminal() {
			return m, m.quitIfDone()
		}
		if !t.inFlight {
			return m, m.arm(t, 0) // see the effect at once
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	if m.form != nil {
		var cmd tea.Cmd
		m.form, cmd = m.form.update(msg)
		return m, cmd
	}
	return m, nil
}

// onPush applies a pushed update. Polling stays as the safety net, re-armed at a relaxed rate
// (five times the interval) unless a poll is already in flight.
func (m Model) onPush(s Snapshot) (tea.Model, tea.Cmd) {
	t := m.tasks[s.TaskID]
	if t == nil || (t.have && t.snap.Terminal()) {
		return m, nil
	}
	m.apply(t, s, m.opts.Now())
	t.via = "push"
	if t.snap.Terminal() {
		t.gen++
		t.nextPoll = time.Time{}
		if m.form != nil && m.form.id == t.id {
			m.form = nil
			t.note = "the task ended before the input was sent"
		}
		return m, m.quitIfDone()
	}
	if t.inFlight {
		return m, nil
	}
	return m, m.arm(t, min(5*m.intervalFor(t), maxInterval))
}

func (m Model) onPoll(msg pollMsg) (tea.Model, tea.Cmd) {
	t := m.tasks[msg.id]
	if t == nil {
		return m, nil
	}
	t.inFlight = false
	now := m.opts.Now()
	if msg.err != nil {
		t.failures++
		t.lastErr = msg.err.Error()
		return m, m.arm(t, m.intervalFor(t))
	}
	t.failures, t.lastErr = 0, ""
	m.apply(t, msg.snap, now)
	t.via = "poll"
	if t.snap.Terminal() {
		t.gen++ // disarm
		t.nextPoll = time.Time{}
		if m.form != nil && m.form.id == t.id {
			// Nothing can be answered any more; keeping the form would also keep the
			// program from quitting.
			m.form = nil
			t.note = "the task ended before the input was sent"
		}
		return m, m.quitIfDone()
	}
	return m, m.arm(t, m.intervalFor(t))
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
	if len(m.ids) == 0 {
		return nil
	}
	m.cursor = min(max(m.cursor, 0), len(m.ids)-1)
	return m.tasks[m.ids[m.cursor]]
}

func (m Model) onKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		// ctrl+c detaches from every screen, the form included, where q is just a letter.
		return m.detach()
	}
	if m.form != nil {
		f, cmd, done := m.form.key(msg)
		m.form = f
		if done != nil {
			m.form = nil
			t := m.tasks[done.id]
			// EXT §Task Update Requests: the client "SHOULD deduplicate keys across polls
			// and SHOULD track keys already answered"; the key is marked before the call so
			// that a poll landing meanwhile cannot offer it again.
			if t != nil && !t.answered[done.key] {
				t.answered[done.key] = true
				ctx, p := m.ctx, m.p
				id, k, resp := done.id, done.key, done.response
				return m, func() tea.Msg { return answerMsg{id: id, key: k, err: p.Answer(ctx, id, k, resp)} }
			}
			return m, nil
		}
		if m.form == nil { // closed without answering
			return m, m.quitIfDone()
		}
		return m, cmd
	}
	if m.confirm {
		m.confirm = false
		if key.Matches(msg, m.keys.Yes) {
			t := m.selected()
			if t == nil {
				return m, nil
			}
			t.note = "cancelling…"
			ctx, p, id := m.ctx, m.p, t.id
			return m, func() tea.Msg {
				s, err := p.Cancel(ctx, id)
				return cancelMsg{id: id, snap: s, err: err}
			}
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m.detach()
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, m.keys.Up):
		if m.cursor > 0 {
			m.cursor--
		}
	case key.Matches(msg, m.keys.Down):
		if m.cursor < len(m.ids)-1 {
			m.cursor++
		}
	case key.Matches(msg, m.keys.Open):
		m.detail = true
	case key.Matches(msg, m.keys.Back):
		if len(m.ids) > 1 {
			m.detail = false
		}
	case key.Matches(msg, m.keys.Cancel):
		if t := m.selected(); t != nil && !t.snap.Terminal() {
			m.confirm = true
		}
	case key.Matches(msg, m.keys.Answer):
		if t := m.selected(); t != nil {
			if in, ok := m.pending(t); ok {
				f, cmd := newInputForm(t.id, in, m.opts.WorkDir, m.st, m.width)
				m.form = f
				return m, cmd
			}
		}
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

// keyMap holds the key bindings, shown by `?`.
type keyMap struct {
	Up, Down, Open, Back, Cancel, Answer, Help, Quit, Yes key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Open:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Cancel: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel task")),
		Answer: key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "answer input")),
		Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys")),
		Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "detach")),
		Yes:    key.NewBinding(key.WithKeys("y", "Y")),
	}
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding { return []key.Binding{k.Cancel, k.Answer, k.Help, k.Quit} }

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Open, k.Back}, {k.Cancel, k.Answer, k.Help, k.Quit}}
}

// fmtDur renders a duration compactly: 850ms, 12s, 3m04s, 2h05m.
func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
