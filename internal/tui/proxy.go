package tui

// The proxy view: what `mcptask proxy` shows on a terminal. It draws the events the proxy
// sends into the program (ProxyEventMsg) and does no I/O of its own: the command layer turns
// the proxy's events into ProxyEvents, so this file knows nothing of HTTP, stdio or the ledger.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// ProxyEvent is one thing the proxy saw. Every string may come from a host or a server; the
// view strips terminal escapes before drawing it.
type ProxyEvent struct {
	// Kind is "created", "status", "poll", "violation" or "notice".
	Kind string
	Time time.Time
	// Host names the host concerned.
	Host string

	TaskID, Tool, Status, Message, Version string
	PollInterval                           time.Duration
	CreatedAt                              time.Time
	// OnHost marks a task that lives on the host (created by the server's request).
	OnHost bool
	// Push marks a status that came by notification rather than in a poll answer.
	Push bool

	// A violation: the rule, the spec section, who broke it ("host" or "server"), what was seen.
	Rule, Section, Peer, Seen string
	// Text is a notice.
	Text string
}

// ProxyEventMsg carries a ProxyEvent into the program.
type ProxyEventMsg ProxyEvent

// ProxyOptions tune the proxy view.
type ProxyOptions struct {
	// Listen is the proxy's endpoint and Upstream the server's, for the header.
	Listen, Upstream string
	// Ledger is the ledger file the hosts' tasks go to, "" when --no-ledger.
	Ledger  string
	NoColor bool
	// Now is the clock (fixed in golden tests).
	Now func() time.Time
	// DisableClock stops the one-second re-render tick (tests).
	DisableClock bool
}

// pollStat is how one host polls one task.
type pollStat struct {
	last  time.Time
	gap   time.Duration // a moving average of the time between polls
	count int
}

type proxyTask struct {
	ev       ProxyEvent // the latest created/status event, merged
	firstAt  time.Time
	changed  time.Time
	polls    map[string]*pollStat
	hostName string
}

type ruleCount struct {
	rule, section, peer, last string
	n                         int
}

// ProxyModel is the bubbletea model of the proxy view.
type ProxyModel struct {
	opts    ProxyOptions
	st      styles
	tasks   map[string]*proxyTask
	order   []string
	rules   map[string]*ruleCount
	hosts   map[string]bool
	notices []string
	width   int
	height  int
	offset  int
	now     time.Time
}

type proxyTickMsg time.Time

// NewProxyModel returns the view with nothing seen yet.
func NewProxyModel(opts ProxyOptions) ProxyModel {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return ProxyModel{opts: opts, st: newStyles(opts.NoColor), tasks: map[string]*proxyTask{}, rules: map[string]*ruleCount{},
		hosts: map[string]bool{}, now: opts.Now()}
}

// Init implements tea.Model.
func (m ProxyModel) Init() tea.Cmd { return m.tick() }

func (m ProxyModel) tick() tea.Cmd {
	if m.opts.DisableClock {
		return nil
	}
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return proxyTickMsg(t) })
}

// Update implements tea.Model.
func (m ProxyModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ProxyEventMsg:
		m.apply(ProxyEvent(msg))
		return m, nil
	case proxyTickMsg:
		m.now = m.opts.Now()
		return m, m.tick()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "up", "k":
			m.offset = max(0, m.offset-1)
		case "down", "j":
			m.offset = min(max(0, len(m.order)-1), m.offset+1)
		}
	}
	return m, nil
}

// apply folds one event into the view.
func (m *ProxyModel) apply(ev ProxyEvent) {
	if ev.Time.IsZero() {
		ev.Time = m.opts.Now()
	}
	if ev.Time.After(m.now) {
		m.now = ev.Time
	}
	if ev.Host != "" && ev.Kind != "notice" && ev.Peer != "server" {
		m.hosts[ev.Host] = true
	}
	switch ev.Kind {
	case "created", "status":
		t := m.task(ev.TaskID, ev.Time)
		prev := t.ev
		merged := ev
		if merged.Tool == "" {
			merged.Tool = prev.Tool
		}
		if merged.Version == "" {
			merged.Version = prev.Version
		}
		if merged.CreatedAt.IsZero() {
			merged.CreatedAt = prev.CreatedAt
		}
		if merged.PollInterval == 0 {
			merged.PollInterval = prev.PollInterval
		}
		if ev.Kind == "status" {
			merged.OnHost = prev.OnHost
			merged.Host = prev.Host
			if merged.Host == "" {
				merged.Host = ev.Host
			}
		}
		t.ev = merged
		t.changed = ev.Time
	case "poll":
		t := m.task(ev.TaskID, ev.Time)
		ps := t.polls[ev.Host]
		if ps == nil {
			ps = &pollStat{}
			t.polls[ev.Host] = ps
		}
		if ps.count > 0 {
			gap := ev.Time.Sub(ps.last)
			if ps.gap == 0 {
				ps.gap = gap
			} else {
				ps.gap = (ps.gap*3 + gap) / 4
			}
		}
		ps.last = ev.Time
		ps.count++
	case "violation":
		key := ev.Rule + "\x00" + ev.Peer
		r := m.rules[key]
		if r == nil {
			r = &ruleCount{rule: ev.Rule, section: ev.Section, peer: ev.Peer}
			m.rules[key] = r
		}
		r.n++
		r.last = ev.Seen
	case "notice":
		m.notices = append(m.notices, ev.Text)
		if len(m.notices) > 3 {
			m.notices = m.notices[len(m.notices)-3:]
		}
	}
}

func (m *ProxyModel) task(id string, at time.Time) *proxyTask {
	t := m.tasks[id]
	if t == nil {
		t = &proxyTask{firstAt: at, polls: map[string]*pollStat{}}
		t.ev.TaskID = id
		m.tasks[id] = t
		m.order = append(m.order, id)
	}
	return t
}

// View implements tea.Model.
func (m ProxyModel) View() tea.View { return tea.NewView(m.Render()) }

// Render draws the frame as a string (golden tests).
func (m ProxyModel) Render() string {
	var b strings.Builder
	running, total := 0, 0
	for _, id := range m.order {
		t := m.tasks[id]
		if t.ev.Status == "" {
			continue // only polled, never seen created nor answered
		}
		total++
		if !taskstatus.Over(t.ev.Status) {
			running++
		}
	}
	violations := 0
	for _, r := range m.rules {
		violations += r.n
	}
	b.WriteString(m.st.title.Render("mcptask proxy") + "  " + termsafe.Line(m.opts.Listen) + " → " + termsafe.Line(m.opts.Upstream) + "\n")
	summary := fmt.Sprintf("%d host%s · %d task%s (%d running) · %d violation%s", len(m.hosts), plural(len(m.hosts)),
		total, plural(total), running, violations, plural(violations))
	if m.opts.Ledger != "" {
		summary += " · ledger " + termsafe.Line(m.opts.Ledger)
	} else {
		summary += " · no ledger"
	}
	b.WriteString(m.st.label.Render(summary) + "\n\n")

	rows := m.rows()
	if len(rows) == 0 {
		b.WriteString(m.st.dim.Render("no tasks yet: point a host at "+termsafe.Line(m.opts.Listen)) + "\n")
	} else {
		b.WriteString(m.st.label.Render(fmt.Sprintf("%-12s %-16s %-17s %-6s %-34s %s", "TASK", "TOOL", "STATUS", "AGE", "POLLED", "MESSAGE")) + "\n")
		limit := len(rows)
		if m.height > 0 {
			limit = max(3, m.height-10-min(len(m.rules), 6))
		}
		start := min(m.offset, max(0, len(rows)-1))
		for i := start; i < len(rows) && i < start+limit; i++ {
			b.WriteString(rows[i] + "\n")
		}
		if hidden := len(rows) - min(len(rows), start+limit) + start; hidden > 0 {
			b.WriteString(m.st.dim.Render(fmt.Sprintf("… %d more (↑/↓ to scroll)", hidden)) + "\n")
		}
	}
	if len(m.rules) > 0 {
		b.WriteString("\n" + m.st.label.Render("VIOLATIONS") + "\n")
		rules := make([]*ruleCount, 0, len(m.rules))
		for _, r := range m.rules {
			rules = append(rules, r)
		}
		sort.Slice(rules, func(i, j int) bool {
			if rules[i].n != rules[j].n {
				return rules[i].n > rules[j].n
			}
			return rules[i].rule+rules[i].peer < rules[j].rule+rules[j].peer
		})
		for _, r := range rules {
			b.WriteString(m.st.warn.Render(fmt.Sprintf("%5d  %-12s by %-6s", r.n, termsafe.Line(r.rule), r.peer)) + "  " +
				m.st.dim.Render(termsafe.Line(r.section)) + "  " + termsafe.Line(r.last) + "\n")
		}
	}
	for _, n := range m.notices {
		b.WriteString(m.st.err.Render("! "+termsafe.Line(n)) + "\n")
	}
	b.WriteString("\n" + m.st.dim.Render("q quit (the hosts' tasks stay in the ledger) · ↑/↓ scroll") + "\n")
	return proxyFit(b.String(), m.width)
}

// rows renders the task table, running tasks first, newest first within each group.
func (m ProxyModel) rows() []string {
	ids := slices.Clone(m.order)
	slices.SortStableFunc(ids, func(a, b string) int {
		ta, tb := m.tasks[a], m.tasks[b]
		if ra, rb := !taskstatus.Over(ta.ev.Status), !taskstatus.Over(tb.ev.Status); ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return tb.firstAt.Compare(ta.firstAt)
	})
	var rows []string
	for _, id := range ids {
		t := m.tasks[id]
		if t.ev.Status == "" {
			continue
		}
		tool := t.ev.Tool
		if t.ev.OnHost {
			tool += " (on host)"
		}
		created := t.ev.CreatedAt
		if created.IsZero() {
			created = t.firstAt
		}
		status := m.st.badgeFor(t.ev.Status)
		pad := 17 - ansi.StringWidth(status) // the column is 17 wide
		msg := termsafe.Line(t.ev.Message)
		if t.ev.Push {
			msg += m.st.dim.Render(" (push)")
		}
		polled := proxyClip(m.pollers(t), 34)
		polled += strings.Repeat(" ", max(0, 34-ansi.StringWidth(polled)))
		rows = append(rows, fmt.Sprintf("%-12s %-16s %s%s %-6s %s %s", proxyClip(termsafe.Line(id), 12), proxyClip(termsafe.Line(tool), 16),
			status, strings.Repeat(" ", max(1, pad)), human.Duration(m.now.Sub(created)), polled, msg))
	}
	return rows
}

// pollers says who polls a task and how often: "mcptask/dev @127.0.0.1 every 1.0s", or for
// several hosts their number and the fastest pace.
func (m ProxyModel) pollers(t *proxyTask) string {
	if len(t.polls) == 0 {
		if taskstatus.Over(t.ev.Status) {
			return "-"
		}
		return "not polled"
	}
	hosts := make([]string, 0, len(t.polls))
	fastest := time.Duration(0)
	for h, ps := range t.polls {
		hosts = append(hosts, h)
		if ps.gap > 0 && (fastest == 0 || ps.gap < fastest) {
			fastest = ps.gap
		}
	}
	sort.Strings(hosts)
	who := "by " + termsafe.Line(hosts[0])
	if len(hosts) > 1 {
		who = fmt.Sprintf("by %d hosts", len(hosts))
	}
	// The pace first, so that a narrow column cuts the host's name, not the number.
	if fastest == 0 {
		return "once " + who
	}
	every := fmt.Sprintf("every %.1fs ", fastest.Seconds())
	if t.ev.PollInterval > 0 && fastest < t.ev.PollInterval*3/4 {
		every = "every " + m.st.warn.Render(fmt.Sprintf("%.1fs!", fastest.Seconds())) + " "
	}
	return every + who
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// proxyClip cuts s to n cells.
func proxyClip(s string, n int) string {
	if ansi.StringWidth(s) <= n {
		return s
	}
	return ansi.Truncate(s, n, "…")
}

// proxyFit cuts every line of the frame to the terminal's width, so that nothing wraps.
func proxyFit(frame string, w int) string {
	if w <= 0 {
		return frame
	}
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	return strings.Join(lines, "\n")
}
