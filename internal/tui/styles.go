package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/mcptask/mcptask/internal/taskstatus"
)

// styles is the one place colours are chosen. With NoColor every style renders plain text, so
// NO_COLOR, TERM=dumb and the golden files all get the same layout without escape codes.
// A status's word, symbol and colour are taskstatus.Look's, shared with list and get.
type styles struct {
	title, label, dim, warn, err, selected, key lipgloss.Style
	// status holds each known status's label, rendered once in its colour; symbol its
	// symbol alone.
	status, symbol map[string]string
	noColor        bool
}

// statuses are the statuses the view knows, "" (not seen yet) among them.
var statuses = []string{"", taskstatus.Working, taskstatus.InputRequired, taskstatus.Completed,
	taskstatus.Failed, taskstatus.Cancelled, taskstatus.Expired}

func newStyles(noColor bool) styles {
	st := styles{status: map[string]string{}, symbol: map[string]string{}, noColor: noColor}
	if noColor {
		plain := lipgloss.NewStyle()
		st.title, st.label, st.dim, st.warn, st.err, st.selected, st.key = plain, plain, plain, plain, plain, plain, plain
		for _, s := range statuses {
			st.status[s] = taskstatus.LookOf(s).Label()
			st.symbol[s] = taskstatus.LookOf(s).Symbol
		}
		return st
	}
	st.title = lipgloss.NewStyle().Bold(true)
	st.label = lipgloss.NewStyle().Foreground(lipgloss.Color("#8A8A8A"))
	st.dim = lipgloss.NewStyle().Foreground(lipgloss.Color("#6C6C6C"))
	st.warn = lipgloss.NewStyle().Foreground(lipgloss.Color("#E5C07B"))
	st.err = lipgloss.NewStyle().Foreground(lipgloss.Color("#E06C75"))
	st.selected = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#61AFEF"))
	st.key = lipgloss.NewStyle().Foreground(lipgloss.Color("#61AFEF"))
	for _, s := range statuses {
		l := taskstatus.LookOf(s)
		style := lipgloss.NewStyle().Bold(true).Foreground(lipgloss.ANSIColor(l.Color))
		st.status[s], st.symbol[s] = style.Render(l.Label()), style.Render(l.Symbol)
	}
	return st
}

// statusLabel is a status's symbol and word, uncoloured: "✓ completed" (taskstatus.Look).
// A status no spec defines came from a server, so it is made safe first.
func statusLabel(s string) string {
	if l, ok := plainLabels[s]; ok {
		return l
	}
	l := taskstatus.LookOf(s)
	l.Word = safe(s)
	return l.Label()
}

// plainLabels are the known statuses' labels, made once: a table builds one per row.
var plainLabels = func() map[string]string {
	m := map[string]string{}
	for _, s := range statuses {
		m[s] = taskstatus.LookOf(s).Label()
	}
	return m
}()

// badgeFor is a status's label in its colour (plain with NoColor).
func (st styles) badgeFor(status string) string {
	if b, ok := st.status[status]; ok {
		return b
	}
	return statusLabel(status)
}

// symbolFor is a status's symbol in its colour (plain with NoColor).
func (st styles) symbolFor(status string) string {
	if b, ok := st.symbol[status]; ok {
		return b
	}
	return taskstatus.LookOf(status).Symbol
}
