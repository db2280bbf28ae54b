package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// View renders the current frame.
func (m Model) View() tea.View {
	m.views.Add(1)
	v := tea.NewView(m.render())
	v.ReportFocus = m.opts.OnFocus != nil
	return v
}

func (m Model) render() string {
	var b strings.Builder
	// table is the table's part of the frame, which fits the width already: each of its lines
	// is clipped as it is made, and measuring a thousand cached rows again every frame would
	// cost more than drawing them.
	table := ""
	switch {
	case m.form != nil:
		b.WriteString(m.form.view(m.width))
	case m.detail || len(m.ids) == 1:
		if t := m.selected(); t != nil {
			b.WriteString(m.renderDetail(t))
		}
	default:
		table = m.renderTable()
	}
	b.WriteString("\n")
	if m.done {
		// The last frame stays on the screen: no question, no keys that no longer work.
		return table + fitWidth(b.String(), m.width)
	}
	if m.confirm {
		if t := m.selected(); t != nil {
			b.WriteString(m.st.warn.Render(fmt.Sprintf("Cancel task %s? (y/n)", clip(safe(t.id), 40))) + "\n")
		}
	}
	if m.showHelp && m.form == nil {
		b.WriteString(m.fullHelp(m.screenKeys()) + "\n")
	} else if m.form == nil {
		b.WriteString(m.shortHelpLine() + "\n")
	}
	return table + fitWidth(b.String(), m.width)
}

// fitWidth cuts every line of a frame to the terminal's width, so that nothing wraps on a
// narrow terminal: a wrapped line would push the frame off the screen and garble redraws.
func fitWidth(frame string, w int) string {
	if w <= 0 {
		return frame
	}
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if len(l) > w && ansi.StringWidth(l) > w { // a line of n bytes is at most n wide
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	return strings.Join(lines, "\n")
}

// ago says how long ago something happened, to the second.
func ago(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return human.Duration(d) + " ago"
}

// kindLabel names an input request's kind for a person.
func kindLabel(in InputRequest) string {
	switch {
	case in.Kind == "elicitation/create" && in.Mode == "url":
		return "link"
	case in.Kind == "elicitation/create":
		return "form"
	case in.Kind == "roots/list":
		return "roots"
	case in.Kind == "sampling/createMessage":
		return "sampling"
	}
	return clip(safe(in.Kind), 24)
}

// safe strips terminal escapes from a server-supplied string for one line.
// safe makes a server string fit for the view: bounded (termsafe.Cut) before it is cleaned, so
// a huge one costs no more per frame than a long one, then cleaned (termsafe.Line).
func safe(s string) string { return termsafe.Line(termsafe.Cut(s)) }

// clip shortens s to w display cells with an ellipsis.
func clip(s string, w int) string {
	s, _ = clipN(s, w)
	return s
}

// clipN is clip that also returns the display width of the result. Plain ASCII, nearly every
// cell of a table, is measured by its length; anything else by its grapheme widths.
func clipN(s string, w int) (string, int) {
	if w <= 0 {
		return "", 0
	}
	if isASCII(s) {
		if len(s) <= w {
			return s, len(s)
		}
		return s[:w-1] + "…", w
	}
	if n := ansi.StringWidth(s); n <= w {
		return s, n
	}
	s = ansi.Truncate(s, w, "…")
	return s, ansi.StringWidth(s)
}

// clipCause is clip for an error message: its cause ("connection refused") is at its end,
// so the start gives way.
func clipCause(s string, w int) string {
	n := ansi.StringWidth(s)
	if n <= w {
		return s
	}
	return ansi.TruncateLeft(s, n-w+1, "…")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// statusOf is the status shown: empty until the first snapshot arrives.
func statusOf(t *task) string {
	if !t.have {
		return ""
	}
	return t.snap.Status
}

// warnings lists what should catch the eye about t: stuck, TTL nearly spent, poll errors.
func (m Model) warnings(t *task, now time.Time) []string {
	var w []string
	if t.ended != "" {
		w = append(w, clip(safe(t.ended), 120))
	}
	if t.lastErr != "" {
		w = append(w, fmt.Sprintf("poll failed %d time(s): %s", t.failures, clipCause(safe(t.lastErr), 100)))
	}
	if !t.have || t.finished() {
		return w
	}
	iv := t.interval
	if iv <= 0 {
		iv = m.opts.DefaultInterval
	}
	// A task waiting for input is expected to sit still; only a working one can be stuck.
	if still := now.Sub(t.changed); t.snap.Status == "working" && still >= time.Duration(m.opts.StuckAfter)*iv && still >= 30*time.Second {
		w = append(w, fmt.Sprintf("possibly stuck: nothing changed for %s", human.Duration(still)))
	}
	if t.snap.TTL != nil && !t.snap.CreatedAt.IsZero() {
		left := t.snap.CreatedAt.Add(*t.snap.TTL).Sub(now)
		switch {
		case left <= 0:
			w = append(w, "TTL spent: the server may drop the task at any moment")
		case left < *t.snap.TTL/10 || left < time.Minute:
			w = append(w, fmt.Sprintf("TTL nearly spent: %s left", human.Duration(left)))
		}
	}
	return w
}

func (m Model) renderDetail(t *task) string {
	now := m.opts.Now()
	st := m.st
	var b strings.Builder
	s := t.snap
	m.detailHeader(&b, t)
	m.detailRows(&b, t, now)
	for _, w := range m.warnings(t, now) {
		b.WriteString(st.warn.Render("! "+w) + "\n")
	}
	if t.note != "" {
		b.WriteString(st.dim.Render(clip(safe(t.note), m.width)) + "\n")
	}
	if ins := m.pendingAll(t); len(ins) > 0 {
		b.WriteString("\n")
		for _, in := range ins {
			what := cmp.Or(safe(in.Message), safe(in.Kind))
			line := fmt.Sprintf("input needed (%s, %s): %s", clip(safe(in.Key), 20), kindLabel(in), what)
			b.WriteString(st.warn.Render(clip(line, m.width)) + "\n")
		}
		b.WriteString(st.key.Render("press i to answer") + "\n")
	}
	if s.Over() && s.Result != "" && !m.done {
		// Once the view ends the result is printed after it, in full: not twice.
		b.WriteString("\n" + st.label.Render("result") + "\n" + clip(safe(s.Result), m.width*3) + "\n")
	}
	m.detailHistory(&b, t, now)
	return b.String()
}

// detailHeader writes the detail view's title, its server line and the status badge.
func (m Model) detailHeader(b *strings.Builder, t *task) {
	st := m.st
	s := t.snap
	title := "task " + safe(t.id)
	if s.Tool != "" {
		title = safe(s.Tool) + " · " + title
	}
	b.WriteString(st.title.Render(clip(title, m.width)) + "\n")
	where := safe(cmp.Or(s.Server, m.opts.Server))
	if s.Protocol != "" {
		where = strings.TrimPrefix(where+" · MCP "+safe(s.Protocol), " · ")
	}
	if where != "" {
		b.WriteString(st.dim.Render(clip(where, m.width)) + "\n")
	}
	b.WriteString("\n")
	msg := safe(s.StatusMessage)
	b.WriteString(st.badgeFor(statusOf(t)) + "  " + clip(msg, max(m.width-18, 10)) + "\n\n")
}

// detailRows writes the labelled rows of the detail view: times, polling and TTL.
func (m Model) detailRows(b *strings.Builder, t *task, now time.Time) {
	s := t.snap
	live := now
	now = t.clock(now) // frozen at the task's end
	row := func(label, value string) {
		b.WriteString(m.st.label.Render(fmt.Sprintf("%-12s", label)) + clip(value, max(m.width-12, 10)) + "\n")
	}
	if t.prog != nil && !t.finished() {
		row("progress", m.progressLine(t.prog, live, m.width-12))
	}
	if !s.CreatedAt.IsZero() {
		row("elapsed", human.Duration(now.Sub(s.CreatedAt)))
	}
	if !s.LastUpdatedAt.IsZero() {
		upd := ago(now.Sub(s.LastUpdatedAt))
		if t.via != "" {
			upd += " (by " + t.via + ")"
		}
		row("updated", upd)
	}
	switch {
	case s.Over():
		row("polling", "done")
	case t.done:
		row("polling", "stopped")
	case !t.nextPoll.IsZero() && !t.nextPoll.After(now):
		row("next poll", fmt.Sprintf("now (every %s, %s)", human.Duration(t.interval), t.source))
	case !t.nextPoll.IsZero():
		row("next poll", fmt.Sprintf("in %s (every %s, %s)", human.Duration(t.nextPoll.Sub(now)), human.Duration(t.interval), t.source))
	}
	if s.TTL == nil {
		row("ttl", "unlimited")
	} else if !s.CreatedAt.IsZero() {
		row("ttl left", human.Duration(s.CreatedAt.Add(*s.TTL).Sub(now))+" of "+human.Duration(*s.TTL))
	}
}

// detailHistory writes each change, and the time spent in each status until the next change,
// as many as fit.
func (m Model) detailHistory(b *strings.Builder, t *task, now time.Time) {
	if len(t.history) == 0 {
		return
	}
	b.WriteString("\n" + m.st.label.Render("history") + "\n")
	start := 0
	room := max(m.height-22, 4)
	if len(t.history) > room {
		start = len(t.history) - room
	}
	if earlier := start + t.dropped; earlier > 0 {
		b.WriteString(m.st.dim.Render(fmt.Sprintf("  … %d earlier", earlier)) + "\n")
	}
	for i := start; i < len(t.history); i++ {
		h := t.history[i]
		spent := ""
		switch {
		case i+1 < len(t.history):
			spent = human.Duration(t.history[i+1].At.Sub(h.At))
		case !taskstatus.Over(h.Status):
			spent = human.Duration(t.clock(now).Sub(h.At))
		} // a final status is not spent in: it stays
		line := fmt.Sprintf("  %s  %-16s %7s  %s", h.At.Format("15:04:05"), statusLabel(h.Status), spent, safe(h.Message))
		b.WriteString(clip(line, m.width) + "\n")
	}
}

// column is one column of the table; width 0 means dropped.
type column struct {
	title string
	width int
}

// minMessage is the narrowest the message column gets before the table gives up columns.
const minMessage = 16

// tableColumns fits the columns to the terminal, the message taking what is left. The whole
// task id is shown when everything fits beside it (it is what people copy), else its shortest
// unique prefix (which every command accepts as the id). On narrow terminals the server, tool,
// age, next-poll and progress columns are dropped in that order so a row never wraps; with
// tasks of more than one server the server column is narrowed but never dropped, since a row
// would not say where its task runs otherwise. The progress column is there once some task
// reported progress. Every column is at least as wide as its title, and cells are one space
// apart, so that the headers never run together.
func (m Model) tableColumns() (id, status, tool, server, age, next, prog, msg column) {
	ids := m.idLayout()
	servers, serverW := m.servers()
	id, status, tool = column{"ID", ids.full}, column{"STATUS", 16}, column{"TOOL", 14}
	server = column{"SERVER", min(max(serverW, len("SERVER")), 32)}
	age, next, prog, msg = column{"AGE", 6}, column{"NEXT POLL", 9}, column{"PROGRESS", 0}, column{"MESSAGE", 0}
	multi := m.opts.Server == "" && servers > 1
	if m.opts.Server != "" {
		server.width = 0 // named once above the table instead
	}
	if m.rows.progress {
		prog.width = 9 // "██░░ 100%": only once some task reports progress
	}
	used := func() int {
		n := 2 // the cursor mark
		for _, c := range []column{id, status, tool, server, age, next, prog} {
			if c.width > 0 {
				n += c.width + 1
			}
		}
		return n
	}
	fits := func() bool { return m.width-used() >= minMessage }
	narrowServer := func(least int) {
		if multi && !fits() {
			server.width = max(server.width-(minMessage-(m.width-used())), min(least, server.width))
		}
	}
	if !fits() {
		id.width = ids.short
	}
	narrowServer(20)
	drops := []*column{&tool, &age, &next, &prog}
	if !multi {
		drops = append([]*column{&server}, drops...)
	}
	for _, drop := range drops {
		if fits() {
			break
		}
		drop.width = 0
	}
	narrowServer(12)
	if msg.width = max(m.width-used(), 0); msg.width < len(msg.title) {
		msg.width = 0 // a cut-short title and a few letters of message say nothing
	}
	return
}

// idColumn is the width of the table's id column with whole ids and with their unique
// prefixes, and the prefixes themselves.
type idColumn struct {
	full, short int
	prefix      map[string]string // shortIDs of the view's tasks
}

// idLayout measures the ids once: the view's tasks are fixed when it starts.
func (m Model) idLayout() *idColumn {
	if c := m.rows.ids; c != nil {
		return c
	}
	c := &idColumn{full: len("ID"), short: len("ID"), prefix: shortIDs(m.ids)}
	for _, id := range m.ids {
		c.full = max(c.full, ansi.StringWidth(safe(id)))
		c.short = max(c.short, ansi.StringWidth(safe(c.prefix[id])))
	}
	m.rows.ids = c
	return c
}

// idCell is how task id is shown in an id column of width w.
func (m Model) idCell(id string, w int) string {
	ids := m.idLayout()
	if w >= ids.full {
		return safe(id)
	}
	return safe(ids.prefix[id])
}

// servers counts the distinct servers of the view's tasks and measures the widest label
// (serverLabels), again only when some task's server changed.
func (m Model) servers() (n, width int) {
	c := &m.rows
	if c.serversCounted && c.serverCount == c.serverStamp {
		return c.serverN, c.serverW
	}
	var all []string
	seen := map[string]bool{}
	for _, t := range m.tasks {
		if s := t.snap.Server; s != "" && !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	c.serverLabel = serverLabels(all)
	w := 0
	for _, l := range c.serverLabel {
		w = max(w, ansi.StringWidth(l))
	}
	c.serverN, c.serverW, c.serverCount, c.serversCounted = len(seen), w, c.serverStamp, true
	return c.serverN, c.serverW
}

// serverLabels names each server for the table's narrow column: its URL without the scheme
// and without a trailing "/mcp" (the usual endpoint), each dropped only while every label
// stays distinct; the detail view names the server in full.
func serverLabels(servers []string) map[string]string {
	labels := make(map[string]string, len(servers))
	for _, s := range servers {
		labels[s] = safe(s)
	}
	for _, cut := range []func(string) string{
		func(l string) string {
			if i := strings.Index(l, "://"); i > 0 && !strings.ContainsAny(l[:i], " /") {
				return l[i+3:]
			}
			return l
		},
		func(l string) string { return strings.TrimSuffix(l, "/mcp") },
	} {
		next := make(map[string]string, len(labels))
		distinct := map[string]bool{}
		for s, l := range labels {
			next[s] = cut(l)
			distinct[next[s]] = true
		}
		if len(distinct) == len(labels) {
			labels = next
		}
	}
	return labels
}

// serverCell is server's label cut to w cells in the middle, keeping its end (a port, a
// path), which is where servers on one host differ.
func (m Model) serverCell(server string, w int) string {
	l, ok := m.rows.serverLabel[server]
	if !ok {
		l = safe(server)
	}
	if w <= 0 || ansi.StringWidth(l) <= w || !isASCII(l) {
		return l // clipN cuts what does not fit
	}
	head := (w - 1) / 2
	return l[:head] + "…" + l[len(l)-(w-1-head):]
}

func (m Model) renderTable() string {
	now := m.opts.Now()
	st := m.st
	var b strings.Builder
	w := m.width
	idC, statusC, toolC, serverC, ageC, nextC, progC, msgC := m.tableColumns()
	cols := []column{idC, statusC, toolC, serverC, ageC, nextC, progC, msgC}
	row := &rowFormatter{cols: cols, w: w}
	if m.opts.Server != "" {
		b.WriteString(st.dim.Render(clip(safe(m.opts.Server), w)) + "\n")
	}
	shown := m.shown()
	m.cursor = min(m.cursor, max(len(shown)-1, 0))
	if m.filter != "" || m.filtering {
		typing := ""
		if m.filtering {
			typing = "▏"
		}
		line := fmt.Sprintf("/%s%s  %d of %d", termsafe.Line(m.filter), typing, len(shown), len(m.ids))
		b.WriteString(st.key.Render(clip(line, w)) + "\n")
	}
	// A new layout (a resize, the progress column appearing, a server's label) empties the
	// cache, the header with it, before the header is drawn.
	m.rows.reset(fmt.Sprint(w, cols, m.rows.serverStamp))
	if m.rows.header == "" {
		m.rows.header = st.label.Render(row.format("  ", idC.title, statusC.title, toolC.title, serverC.title, ageC.title, nextC.title, progC.title, msgC.title))
	}
	b.WriteString(m.rows.header + "\n")
	counts := m.tally()
	lo, hi := m.tableWindow()
	if lo > 0 {
		b.WriteString(st.dim.Render(fmt.Sprintf("  ↑ %d more", lo)) + "\n")
	}
	for i := lo; i < hi; i++ {
		b.WriteString(m.tableRow(i, now, row) + "\n")
	}
	if len(shown) == 0 {
		b.WriteString(st.dim.Render(clip("  no task matches; esc clears the filter", w)) + "\n")
	}
	if hi < len(shown) {
		b.WriteString(st.dim.Render(fmt.Sprintf("  ↓ %d more", len(shown)-hi)) + "\n")
	}
	b.WriteString("\n" + m.tallyLine(counts, w) + "\n")
	return b.String()
}

// rowFormatter lays out table rows in cols, clipped to width w. Its line buffer is reused from
// row to row. It is a type, not a closure, so that calls to format are static and their cells
// stay on the stack.
type rowFormatter struct {
	cols []column
	w    int
	line strings.Builder
	// paint, when set, is written instead of column paintCol's value when that fits whole: the
	// value in colour, measured by its plain text (escapes would take the slow path of clipN).
	paint    string
	paintCol int
	// knownW, when above 0, is the display width of column knownCol's value, which is then
	// not measured again (the progress cell: block characters, not ASCII).
	knownW, knownCol int
}

// format lays out one row: mark, then vals in the columns.
func (f *rowFormatter) format(mark string, vals ...string) string {
	line := &f.line
	line.Reset()
	line.WriteString(mark)
	n := len(mark) // display width so far, counted as the cells are added
	for i, c := range f.cols {
		if c.width <= 0 {
			continue
		}
		var v string
		var vw int
		if i == f.knownCol && f.knownW > 0 && f.knownW <= c.width {
			v, vw = vals[i], f.knownW
		} else {
			v, vw = clipN(vals[i], c.width)
		}
		if i == f.paintCol && f.paint != "" && len(v) == len(vals[i]) {
			v = f.paint
		}
		line.WriteString(v)
		for range c.width - vw + 1 {
			line.WriteByte(' ')
		}
		n += c.width + 1
	}
	out := strings.TrimRight(line.String(), " ")
	if n-(line.Len()-len(out)) > f.w {
		out = clip(out, f.w)
	}
	return out
}

// tableWindow is the range [lo, hi) of the rows shown that are drawn: only the rows that fit,
// in a window that follows the cursor.
func (m Model) tableWindow() (lo, hi int) {
	room := m.tableRoom()
	n := len(m.shown())
	cursor := min(m.cursor, max(n-1, 0))
	if cursor >= room {
		lo = cursor - room + 1
	}
	return lo, min(lo+room, n)
}

// tableRoom is how many rows the table has room for, and how far a page moves.
func (m Model) tableRoom() int {
	room := m.rowsRoom()
	if m.showHelp {
		room -= strings.Count(m.fullHelp(m.screenKeys()), "\n")
	}
	return max(room, 3)
}

// rowsRoom is tableRoom without the full help (which lists the paging keys only when the rows
// do not fit without it).
func (m Model) rowsRoom() int {
	// Around the rows: the header, two "more" marks, the summary, two blank lines and the
	// help line, and the server line, the filter line and the cancel question when they show.
	fixed := 7
	if m.opts.Server != "" {
		fixed++
	}
	if m.filter != "" || m.filtering {
		fixed++
	}
	if m.confirm {
		fixed++
	}
	return max(m.height-fixed, 3)
}

// tableRow is row i of the table, from the row cache when nothing it shows has changed.
func (m Model) tableRow(i int, now time.Time, row *rowFormatter) string {
	id := m.shown()[i]
	t := m.tasks[id]
	s := t.snap
	sec := now.Unix()
	age, next := rowTimes(t, now)
	sel := i == m.cursor
	c := m.rows.get(id)
	if c.ver != t.ver || c.sec != sec || !c.valid {
		// The message cell (a warning when there is one) depends on the task and on the
		// second: the stuck and TTL warnings count time.
		c.msg = safe(s.StatusMessage)
		if ws := m.warnings(t, now); len(ws) > 0 {
			c.msg = "! " + ws[0]
		}
		c.line = ""
	}
	if c.line == "" || c.age != age || c.next != next || c.sel != sel {
		mark := "  "
		if sel {
			mark = "> "
		}
		// The status cell is in its colour, but on the selected row, which is one colour.
		row.paint, row.paintCol = "", 1
		if !sel && !m.st.noColor {
			row.paint = m.st.badgeFor(statusOf(t))
		}
		prog := ""
		row.knownW, row.knownCol = 0, 6
		if t.prog != nil && !t.finished() {
			prog, row.knownW = miniBar(t.prog, now)
		}
		line := row.format(mark, m.idCell(id, row.cols[0].width), statusLabel(statusOf(t)), safe(s.Tool), m.serverCell(s.Server, row.cols[3].width), age, next, prog, c.msg)
		row.paint, row.knownW = "", 0
		m.rows.builds++
		if sel {
			line = m.st.selected.Render(line)
		}
		c.line = line
	}
	c.ver, c.sec, c.age, c.next, c.sel, c.valid = t.ver, sec, age, next, sel, true
	m.rows.put(id, c)
	return c.line
}

// rowTimes are the age and next-poll cells of t's row.
func rowTimes(t *task, now time.Time) (age, next string) {
	if !t.snap.CreatedAt.IsZero() {
		age = human.Duration(t.clock(now).Sub(t.snap.CreatedAt)) // a finished task's stops
	}
	switch {
	case t.finished():
		next = "-"
	case t.nextPoll.IsZero():
	case !t.nextPoll.After(now):
		next = "now"
	default:
		next = human.Duration(ceilSecond(t.nextPoll.Sub(now)))
	}
	return age, next
}

// tallyLine is the summary below the table: how many tasks are in each status, each status
// in the words, symbols and colours of the rows; on a terminal too narrow for the words, in
// the symbols alone, so that no count is cut off.
func (m Model) tallyLine(counts [tallyKinds]int, w int) string {
	if line := m.tally1(counts, true); ansi.StringWidth(line) <= w {
		return line
	}
	return clip(m.tally1(counts, false), w)
}

func (m Model) tally1(counts [tallyKinds]int, words bool) string {
	var parts []string
	add := func(n int, status string) {
		if n <= 0 {
			return
		}
		if words {
			parts = append(parts, fmt.Sprintf("%d %s", n, m.st.badgeFor(status)))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n, m.st.symbolFor(status)))
		}
	}
	add(counts[tallyWorking], taskstatus.Working)
	add(counts[tallyInput], taskstatus.InputRequired)
	add(counts[tallyCompleted], taskstatus.Completed)
	add(counts[tallyFailed], taskstatus.Failed)
	add(counts[tallyCancelled], taskstatus.Cancelled)
	add(counts[tallyExpired], taskstatus.Expired)
	return strings.Join(parts, "  ")
}

// ceilSecond rounds a countdown up to whole seconds: the table's next-poll column moves once a
// second, not once a frame (the detail view keeps the milliseconds).
func ceilSecond(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

// rowCache keeps the table's rendered rows between frames, so that a frame rebuilds only the
// rows whose task changed (or whose countdown moved to another second), and all of them when
// the columns change.
type rowCache struct {
	sig    string
	rows   map[string]cachedRow
	header string // the table's header line, for sig
	builds int    // rows rendered anew, for tests
	// help is the short help line, for the screen helpFor describes.
	help      string
	helpFor   helpState
	helpValid bool
	// tallies counts the tasks by status for the summary line, as of statusStamp.
	tallies     [tallyKinds]int
	tallyStamp  uint64
	tallied     bool
	statusStamp uint64 // bumped by every status change
	// changes counts the updates applied; shown is the filter's tasks as of shownAt, and
	// asking the first task waiting for input as of askingAt.
	changes                 uint64
	shown                   []string
	shownFor                string
	shownAt, askingAt       uint64
	shownValid, askingValid bool
	asking                  string
	// ids is the id column's layout; serverN and serverW count and measure the tasks'
	// servers as of serverStamp, which every change of a task's server bumps.
	ids                      *idColumn
	serverN, serverW         int
	serverLabel              map[string]string
	serverCount, serverStamp uint64
	serversCounted           bool
	// progress is set once some task reported progress: the table gains its column.
	progress bool
}

// The summary line's tallies.
const (
	tallyWorking = iota // working, or not seen yet
	tallyInput
	tallyCompleted
	tallyFailed
	tallyCancelled
	tallyExpired
	tallyKinds
)

// tally counts the tasks by status, again only when some status changed since the last count:
// a thousand tasks are not walked every frame for a line that rarely changes.
func (m Model) tally() [tallyKinds]int {
	c := &m.rows
	if c.tallied && c.tallyStamp == c.statusStamp {
		return c.tallies
	}
	var n [tallyKinds]int
	for _, t := range m.tasks {
		switch statusOf(t) {
		case "input_required":
			n[tallyInput]++
		case "completed":
			n[tallyCompleted]++
		case "failed":
			n[tallyFailed]++
		case "cancelled":
			n[tallyCancelled]++
		case "expired":
			n[tallyExpired]++
		default:
			n[tallyWorking]++
		}
	}
	c.tallies, c.tallyStamp, c.tallied = n, c.statusStamp, true
	return n
}

// cachedRow is one rendered row and what it was rendered from.
type cachedRow struct {
	valid          bool
	ver            uint64
	sec            int64
	msg, age, next string
	sel            bool
	line           string
}

// reset empties the cache when sig, the column layout, changed.
func (c *rowCache) reset(sig string) {
	if c.rows == nil || c.sig != sig {
		c.sig, c.rows, c.header = sig, map[string]cachedRow{}, ""
	}
}

// shortHelpLine is the one-line help of the screen on show, rendered again only when the
// keys that work or the width changed: it is the same line nearly every frame.
func (m Model) shortHelpLine() string {
	if st := m.helpState(); !m.rows.helpValid || m.rows.helpFor != st {
		m.rows.help, m.rows.helpFor, m.rows.helpValid = m.helpLine(m.screenKeys(), m.width), st, true
	}
	return m.rows.help
}

// helpState is what the keys of the screen on show depend on (screenKeys).
type helpState struct {
	width                                    int
	confirm                                  bool
	filtering, filtered, table, many, scroll bool
	several, cancel, answer                  bool
}

func (m Model) helpState() helpState {
	n := len(m.shown())
	t := m.selected()
	table := len(m.ids) > 1 && !m.detail
	return helpState{
		width: m.width, confirm: m.confirm, filtering: m.filtering, filtered: m.filter != "", table: table,
		many: len(m.ids) > 1, scroll: table && n > m.rowsRoom(), several: n > 1,
		cancel: t != nil && !t.finished(), answer: m.answerable() != "",
	}
}

func (c *rowCache) get(id string) cachedRow    { return c.rows[id] }
func (c *rowCache) put(id string, r cachedRow) { c.rows[id] = r }
