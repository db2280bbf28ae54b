package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// keyMap holds the key bindings. Page, Ends and Filtering are for the help only: one entry
// for a pair of keys, and the keys that work while a filter is typed.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Open, Back, Filter, Clear key.Binding
	Cancel, Answer, Help, Quit, Yes                                    key.Binding
	Page, Ends, Apply, Arrows, Detach, ConfirmYes, ConfirmNo           key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:        key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "first")),
		Bottom:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "last")),
		Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Clear:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Cancel:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel task")),
		Answer:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "answer input")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "detach")),
		Yes:        key.NewBinding(key.WithKeys("y", "Y")),
		Page:       key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "page")),
		Ends:       key.NewBinding(key.WithKeys("g", "G"), key.WithHelp("g/G", "first/last")),
		Apply:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		Arrows:     key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move")),
		Detach:     key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "detach")),
		ConfirmYes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "cancel it")),
		ConfirmNo:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "keep it running")),
	}
}

// screenKeys is what the help shows for the screen on show: only the keys that do something
// there, in the order they are listed, and for the one-line help the order in which they are
// given up when the line does not fit (least important first; q, the way out, never).
type screenKeys struct {
	short []key.Binding   // the one-line help, in display order
	drop  []key.Binding   // short's bindings, least important first, q not among them
	full  [][]key.Binding // `?`, in columns
}

// screenKeys lists the keys that work on the screen on show.
func (m Model) screenKeys() screenKeys {
	k := m.keys
	if m.confirm {
		// Any key but y answers no; q among them.
		yn := []key.Binding{k.ConfirmYes, k.ConfirmNo, k.Detach}
		return screenKeys{short: yn, drop: []key.Binding{k.ConfirmNo}, full: [][]key.Binding{yn}}
	}
	if m.filtering {
		// While the filter is typed, letters are the filter's: only the arrows move, and
		// ctrl+c is the way out.
		apply := []key.Binding{k.Arrows, k.Apply, k.Clear, k.Detach}
		return screenKeys{short: apply, drop: []key.Binding{k.Arrows, k.Apply}, full: [][]key.Binding{apply}}
	}
	shown := m.shown()
	t := m.selected()
	canCancel := t != nil && !t.finished()
	canAnswer := m.answerable() != ""
	var nav, views, acts []key.Binding
	table := len(m.ids) > 1 && !m.detail
	if len(shown) > 1 {
		nav = append(nav, k.Up, k.Down)
	}
	scrolls := table && len(shown) > m.rowsRoom()
	if scrolls {
		nav = append(nav, k.PageUp, k.PageDown, k.Top, k.Bottom)
	}
	switch {
	case table:
		if len(shown) > 0 {
			views = append(views, k.Open)
		}
		views = append(views, k.Filter)
		if m.filter != "" {
			views = append(views, k.Clear)
		}
	case len(m.ids) > 1:
		views = append(views, k.Back)
	}
	if canCancel {
		acts = append(acts, k.Cancel)
	}
	if canAnswer {
		acts = append(acts, k.Answer)
	}
	acts = append(acts, k.Help, k.Quit)

	var sk screenKeys
	sk.full = [][]key.Binding{acts}
	if len(views) > 0 {
		sk.full = append(sk.full, views)
	}
	if len(nav) > 0 {
		sk.full = append(sk.full, nav)
	}
	// The one line: the arrows, a page and the ends as one entry each, the views, the actions.
	short := []key.Binding{}
	if table && len(shown) > 1 {
		short = append(short, k.Up, k.Down)
	}
	if scrolls {
		short = append(short, k.Page, k.Ends)
	}
	short = append(short, views...)
	short = append(short, acts...)
	sk.short = short
	// Given up first: the ends, a page, the filter, the arrows, details, then cancel, esc
	// (the way back), ? and i last (a task waiting for a person is why they look).
	for _, b := range []key.Binding{k.Ends, k.Page, k.Filter, k.Down, k.Up, k.Open, k.Cancel, k.Clear, k.Back, k.Help, k.Answer} {
		for _, s := range short {
			if sameKey(s, b) {
				sk.drop = append(sk.drop, b)
			}
		}
	}
	return sk
}

// sameKey reports whether a and b are the same binding (by their help, which is unique).
func sameKey(a, b key.Binding) bool { return a.Help() == b.Help() }

// helpLine is the one-line help that fits width: the least important keys are given up one by
// one until it fits; q stays.
func (m Model) helpLine(sk screenKeys, width int) string {
	h := m.help
	h.SetWidth(0) // measured here, not cut at the end
	keep := sk.short
	for _, d := range sk.drop {
		if line := h.ShortHelpView(keep); width <= 0 || ansi.StringWidth(line) <= width {
			return line
		}
		keep = without(keep, d)
	}
	return h.ShortHelpView(keep)
}

func without(bs []key.Binding, d key.Binding) []key.Binding {
	out := make([]key.Binding, 0, len(bs))
	for _, b := range bs {
		if !sameKey(b, d) {
			out = append(out, b)
		}
	}
	return out
}

// fullHelp is `?`: the columns of keys side by side while they fit the width, the rest below.
func (m Model) fullHelp(sk screenKeys) string {
	h := m.help
	h.SetWidth(0)
	var rows []string
	var row [][]key.Binding
	for _, col := range sk.full {
		try := append(append([][]key.Binding{}, row...), col)
		if len(row) > 0 && m.width > 0 && ansi.StringWidth(firstLine(h.FullHelpView(try))) > m.width {
			rows = append(rows, h.FullHelpView(row))
			row = nil
			try = [][]key.Binding{col}
		}
		row = try
	}
	if len(row) > 0 {
		rows = append(rows, h.FullHelpView(row))
	}
	return strings.Join(rows, "\n\n")
}

// firstLine is s up to its first newline: the columns of a full help are padded to one width.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// onFilterKey edits the filter while it is typed: text narrows the table as it is typed, enter
// keeps the filter, esc clears it, the arrows still move.
func (m Model) onFilterKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Clear):
		m.filtering, m.filter, m.cursor = false, "", 0
	case key.Matches(msg, m.keys.Apply):
		m.filtering = false
	case msg.String() == "backspace":
		if r := []rune(m.filter); len(r) > 0 {
			m.filter, m.cursor = string(r[:len(r)-1]), 0
		}
	case msg.String() == "up":
		m.cursor = max(m.cursor-1, 0)
	case msg.String() == "down":
		m.cursor = min(m.cursor+1, max(len(m.shown())-1, 0))
	case msg.Text != "" && ansi.StringWidth(msg.Text) > 0 && len(m.filter) < 64:
		m.filter, m.cursor = m.filter+msg.Text, 0
	}
	return m, nil
}

// matches reports whether task t is one the filter q (lower case) lets through: its id, tool,
// status (as shown or as the spec names it) or message contains q, in any case.
func matches(t *task, q string) bool {
	s := t.snap
	for _, f := range []string{t.id, s.Tool, s.Status, statusLabel(s.Status), s.StatusMessage} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

// shown lists the tasks the table shows: all, or those the filter lets through, worked out
// again only when the filter or some task changed.
func (m Model) shown() []string {
	if m.filter == "" {
		return m.ids
	}
	c := &m.rows
	if c.shownFor == m.filter && c.shownAt == c.changes && c.shownValid {
		return c.shown
	}
	q := strings.ToLower(m.filter)
	c.shown = c.shown[:0]
	for _, id := range m.ids {
		if matches(m.tasks[id], q) {
			c.shown = append(c.shown, id)
		}
	}
	c.shownFor, c.shownAt, c.shownValid = m.filter, c.changes, true
	return c.shown
}

// answerable is the task i answers: the one under the cursor when it asks something, else the
// first (in the table's order) that waits for input, or "" when none does.
func (m Model) answerable() string {
	if t := m.selected(); t != nil {
		if _, ok := m.pending(t); ok {
			return t.id
		}
	}
	if len(m.ids) == 1 {
		return ""
	}
	c := &m.rows
	if c.askingAt == c.changes && c.askingValid {
		return c.asking
	}
	c.asking = ""
	for _, id := range m.ids {
		if t := m.tasks[id]; !t.finished() {
			if _, ok := m.pending(t); ok {
				c.asking = id
				break
			}
		}
	}
	c.askingAt, c.askingValid = c.changes, true
	return c.asking
}

// goTo moves the cursor to task id, clearing a filter that hides it.
func (m *Model) goTo(id string) {
	if idx := indexOf(m.shown(), id); idx >= 0 {
		m.cursor = idx
		return
	}
	m.filter, m.filtering = "", false
	m.cursor = max(indexOf(m.ids, id), 0)
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
