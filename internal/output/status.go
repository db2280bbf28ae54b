package output

import "github.com/mcptask/mcptask/internal/taskstatus"

// StatusStyle is how list and get write a status: the bare word where a script may read it
// (a pipe, a file), and on a terminal the symbol and word of taskstatus.Look, in its colour
// unless NO_COLOR (or TERM=dumb) turns colours off. The word is the same in every style.
type StatusStyle uint8

// The styles of a status cell.
const (
	StatusPlain StatusStyle = iota
	StatusSymbol
	StatusColor
)

// Cell is status as the style writes it. A status no spec defines is a server's string and
// is made safe by the caller's termsafe, as every cell is.
func (s StatusStyle) Cell(status string) string {
	switch s {
	case StatusSymbol:
		return taskstatus.LookOf(status).Label()
	case StatusColor:
		return taskstatus.LookOf(status).SGR()
	}
	return status
}

// Head is a column's heading above cells of this style: padded with escapes as long as the
// cells' in colour, so that a tabwriter keeps the column straight.
func (s StatusStyle) Head(h string) string {
	if s == StatusColor {
		return taskstatus.Pad(h)
	}
	return h
}
