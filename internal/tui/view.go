package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// View renders the current frame.
func (m Model) View() tea.View {
	return tea.NewView(m.render())
}

func (m Model) render() string {
	var b strings.Builder
	switch {
	case m.form != nil:
		b.WriteString(m.form.view(m.width))
	case m.detail || len(m.ids) == 1:
		if t := m.selected(); t != nil {
			b.WriteString(m.renderDetail(t))
		}
	default:
		b.WriteString(m.renderTable())
	}
	b.WriteString("\n")
	if m.confirm {
		if t := m.selected(); t != nil {
			b.WriteString(m.st.warn.Render(fmt.Sprintf("Cancel task %s? (y/n)", clip(safe(t.id), 40))) + "\n")
		}
	}
	if m.showHelp {
		b.WriteString(m.help.FullHelpView(m.keys.FullHelp()) + "\n")
	} else if m.form == nil {
		b.WriteString(m.help.ShortHelpView(m.keys.ShortHelp()) + "\n")
	}
	return b.String()
}

// safe strips terminal escapes from a server-supplied string for one line.
func safe(s string) string { return termsafe.Line(s) }

// clip shortens s to w display cells with an ellipsis.
func clip(s string, w int) string {
	if w <= 1 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r))+1 > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// statusOf is the status shown: expired wins over what the server last said.
func statusOf(t *task) string {
	if !t.have {
		return ""
	}
	return t.snap.Status
}

// warnings lists what should catch the eye about t: stuck, TTL nearly spent, poll errors.
func (m Model) warnings(t *task, now time.Time) []string {
	var w []string
	if t.lastErr != "" {
		w = append(w, fmt.Sprintf("poll failed %d time(s): %s", t.failures, clip(safe(t.lastErr), 100)))
	}
	if !t.have || t.snap.Terminal() {
		return w
	}
	iv := t.interval
	if iv <= 0 {
		iv = m.opts.DefaultInterval
	}
	if still := now.Sub(t.changed); still >= time.Duration(m.opts.StuckAfter)*iv && still >= 30*time.Second {
		w = append(w, fmt.Sprintf("possibly stuck: nothing changed for %s", fmtDur(still)))
	}
	if t.snap.TTL != nil && !t.snap.CreatedAt.IsZero() {
		left := t.snap.CreatedAt.Add(*t.snap.TTL).Sub(now)
		switch {
		case left <= 0:
			w = append(w, "TTL spent: the server may drop the task at any moment")
		case left < *t.snap.TTL/10 || left < time.Minute:
			w = append(w, fmt.Sprintf("TTL nearly spent: %s left", fmtDur(left)))
		}
	}
	return w
}

func (m Model) renderDetail(t *task) string {
	now := m.opts.Now()
	st := m.st
	var b strings.Builder
	s := t.snap
	title := "task " + safe(t.id)
	if s.Tool != "" {
		title = safe(s.Tool) + " · " + title
	}
	b.WriteString(st.title.Render(clip(title, m.width)) + "\n")
	if s.Server != "" {
		b.WriteString(st.dim.Render(clip(safe(s.Server), m.width)) + "\n")
	}
	b.WriteString("\n")
	msg := safe(s.StatusMessage)
	b.WriteString(st.badgeFor(statusOf(t)) + " " + clip(msg, max(m.width-16, 10)) + "\n\n")

	row := func(label, value string) {
		b.WriteString(st.label.Render(fmt.Sprintf("%-12s", label)) + clip(value, max(m.width-12, 10)) + "\n")
	}
	if !s.CreatedAt.IsZero() {
		row("elapsed", fmtDur(now.Sub(s.CreatedAt)))
	}
	if !s.LastUpdatedAt.IsZero() {
		row("updated", fmtDur(now.Sub(s.LastUpdatedAt))+" ago")
	}
	switch {
	case s.Terminal():
		row("polling", "done")
	case t.inFlight:
		row("next poll", fmt.Sprintf("now (every %s, %s)", fmtDur(t.interval), t.source))
	case !t.nextPoll.IsZero():
		row("next poll", fmt.Sprintf("in %s (every %s, %s)", fmtDur(t.nextPoll.Sub(now)), fmtDur(t.interval), t.source))
	}
	if s.TTL == nil {
		row("ttl", "unlimited")
	} else if !s.CreatedAt.IsZero() {
		row("ttl left", fmtDur(s.CreatedAt.Add(*s.TTL).Sub(now))+" of "+fmtDur(*s.TTL))
	}
	for _, w := range m.warnings(t, now) {
		b.WriteString(st.warn.Render("! "+w) + "\n")
	}
	if t.note != "" {
		b.WriteString(st.dim.Render(clip(safe(t.note), m.width)) + "\n")
	}
	if in, ok := m.pending(t); ok {
		b.WriteString("\n" + st.warn.Render(fmt.Sprintf("input needed (%s): %s", safe(in.Key), clip(safe(in.Message), max(m.width-30, 10)))) + "\n")
		b.WriteString(st.key.Render("press i to answer") + "\n")
	}
	if s.Terminal() && s.Result != "" {
		b.WriteString("\n" + st.label.Render("result") + "\n" + clip(safe(s.Result), m.width*3) + "\n")
	}

	// History: each change, and the time spent in each status until the next change.
	if len(t.history) > 0 {
		b.WriteString("\n" + st.label.Render("history") + "\n")
		start := 0
		room := max(m.height-22, 4)
		if len(t.history) > room {
			start = len(t.history) - room
			b.WriteString(st.dim.Render(fmt.Sprintf("  … %d earlier", start)) + "\n")
		}
		for i := start; i < len(t.history); i++ {
			h := t.history[i]
			end := now
			if i+1 < len(t.history) {
				end = t.history[i+1].At
			}
			line := fmt.Sprintf("  %s  %-14s %7s  %s", h.At.Format("15:04:05"), statusLabel(h.Status), fmtDur(end.Sub(h.At)), safe(h.Message))
			b.WriteString(clip(line, m.width) + "\n")
		}
	}
	return b.String()
}

func (m Model) renderTable() string {
	now := m.opts.Now()
	st := m.st
	var b strings.Builder
	// Column widths degrade on narrow terminals: message and server shrink first.
	w := m.width
	idW, statusW, toolW, ageW, pollW := 12, 14, 14, 7, 9
	serverW := 24
	msgW := w - (2 + idW + statusW + toolW + serverW + ageW + pollW + 7)
	if msgW < 12 {
		serverW = 0
		msgW = w - (2 + idW + statusW + toolW + ageW + pollW + 6)
	}
	if msgW < 8 {
		toolW = 0
		msgW = max(w-(2+idW+statusW+ageW+pollW+5), 0)
	}
	cell := func(s string, n int) string {
		if n <= 0 {
			return ""
		}
		return fmt.Sprintf("%-*s ", n, clip(s, n))
	}
	header := "  " + cell("ID", idW) + cell("STATUS", statusW) + cell("TOOL", toolW) + cell("SERVER", serverW) + cell("AGE", ageW) + cell("NEXT POLL", pollW) + cell("MESSAGE", msgW)
	b.WriteString(st.label.Render(strings.TrimRight(header, " ")) + "\n")
	counts := map[string]int{}
	for _, id := range m.ids {
		counts[statusOf(m.tasks[id])]++
	}
	// Only the rows that fit are drawn, in a window that follows the cursor.
	room := max(m.height-6, 3)
	lo := 0
	if m.cursor >= room {
		lo = m.cursor - room + 1
	}
	hi := min(lo+room, len(m.ids))
	if lo > 0 {
		b.WriteString(st.dim.Render(fmt.Sprintf("  ↑ %d more", lo)) + "\n")
	}
	for i := lo; i < hi; i++ {
		id := m.ids[i]
		t := m.tasks[id]
		s := t.snap
		status := statusOf(t)
		age := ""
		if !s.CreatedAt.IsZero() {
			age = fmtDur(now.Sub(s.CreatedAt))
		}
		next := ""
		switch {
		case s.Terminal():
			next = "-"
		case t.inFlight:
			next = "now"
		case !t.nextPoll.IsZero():
			next = fmtDur(t.nextPoll.Sub(now))
		}
		mark := "  "
		if i == m.cursor {
			mark = "> "
		}
		msg := safe(s.StatusMessage)
		if ws := m.warnings(t, now); len(ws) > 0 {
			msg = "! " + ws[0]
		}
		line := mark + cell(safe(id), idW) + cell(statusLabel(status), statusW) + cell(safe(s.Tool), toolW) + cell(safe(s.Server), serverW) + cell(age, ageW) + cell(next, pollW) + cell(msg, msgW)
		line = strings.TrimRight(line, " ")
		if i == m.cursor {
			line = st.selected.Render(line)
		}
		b.WriteString(line + "\n")
	}
	if hi < len(m.ids) {
		b.WriteString(st.dim.Render(fmt.Sprintf("  ↓ %d more", len(m.ids)-hi)) + "\n")
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(counts["working"]+counts[""], "working")
	add(counts["input_required"], "needs input")
	add(counts["completed"], "done")
	add(counts["failed"], "failed")
	add(counts["cancelled"], "cancelled")
	add(counts["expired"], "expired")
	b.WriteString("\n" + strings.Join(parts, ", ") + "\n")
	return b.String()
}
