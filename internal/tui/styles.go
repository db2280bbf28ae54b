package tui

import (
	"charm.land/lipgloss/v2"
)

// styles is the one place colours are chosen. With NoColor every style renders plain text, so
// NO_COLOR, TERM=dumb and the golden files all get the same layout without escape codes.
type styles struct {
	title, label, dim, warn, err, selected, key lipgloss.Style
	badge                                       map[string]lipgloss.Style
	noColor                                     bool
}

func newStyles(noColor bool) styles {
	if noColor {
		plain := lipgloss.NewStyle()
		b := map[string]lipgloss.Style{}
		for _, s := range []string{"working", "input_required", "completed", "failed", "cancelled", "expired"} {
			b[s] = plain
		}
		return styles{title: plain, label: plain, dim: plain, warn: plain, err: plain, selected: plain, key: plain, badge: b, noColor: true}
	}
	badge := func(fg, bg string) lipgloss.Style {
		return lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color(fg)).Background(lipgloss.Color(bg)).Padding(0, 1)
	}
	return styles{
		title:    lipgloss.NewStyle().Bold(true),
		label:    lipgloss.NewStyle().Foreground(lipgloss.Color("#8A8A8A")),
		dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("#6C6C6C")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("#E5C07B")),
		err:      lipgloss.NewStyle().Foreground(lipgloss.Color("#E06C75")),
		selected: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#61AFEF")),
		key:      lipgloss.NewStyle().Foreground(lipgloss.Color("#61AFEF")),
		badge: map[string]lipgloss.Style{
			"working":        badge("#000000", "#61AFEF"),
			"input_required": badge("#000000", "#E5C07B"),
			"completed":      badge("#000000", "#98C379"),
			"failed":         badge("#FFFFFF", "#E06C75"),
			"cancelled":      badge("#000000", "#ABB2BF"),
			"expired":        badge("#FFFFFF", "#5C6370"),
		},
	}
}

// statusLabel is the short text of a badge.
func statusLabel(s string) string {
	switch s {
	case "input_required":
		return "needs input"
	case "":
		return "…"
	}
	return s
}

func (st styles) badgeFor(status string) string {
	s, ok := st.badge[status]
	if !ok {
		s = st.badge["working"]
	}
	if st.noColor {
		return "[" + statusLabel(status) + "]"
	}
	return s.Render(statusLabel(status))
}
