package tui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	"charm.land/lipgloss/v2"

	"github.com/mcptask/mcptask/internal/human"
)

// Progress is a notifications/progress a server sent about a task (MCP 2025-11-25, Progress:
// progress, and total when known; a message), or about a call still in flight. Message came
// from the server and is made safe before it is drawn.
type Progress struct {
	Value float64
	// Total is 0 when the server did not say: a spinner is drawn instead of a bar.
	Total   float64
	Message string
}

// progressState is what the view keeps of a task's progress: the latest notification, and how
// many came, which turns the spinner of a progress without a total.
type progressState struct {
	Progress
	n int
}

// fraction is how far the progress has got, 0 to 1, and whether that is known.
func (p Progress) fraction() (float64, bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return min(max(p.Value/p.Total, 0), 1), true
}

// count is "3/5" (or "3" without a total), numbers as the server sent them.
func (p Progress) count() string {
	s := strconv.FormatFloat(p.Value, 'f', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	return s
}

// spinFrames turn once per notification and once a second: a spinner that moves says the
// server still reports.
var spinFrames = spinner.MiniDot.Frames

func (p *progressState) spin(now time.Time) string {
	return spinFrames[(p.n+int(now.Unix()))%len(spinFrames)]
}

// miniBar is the table's progress cell and its display width: a bar of four cells and the
// percentage ("██░░ 50%"), or a spinner and the count without a total. Every character of it
// is one cell wide.
func miniBar(p *progressState, now time.Time) (string, int) {
	f, ok := p.fraction()
	if !ok {
		c := p.count()
		return p.spin(now) + " " + c, 2 + len(c)
	}
	pct := strconv.Itoa(int(f * 100))
	return miniBars[int(f*float64(len(miniBars)-1)+0.5)] + pct + "%", 4 + 1 + len(pct) + 1
}

// miniBars are the table's bars of four cells, made once: a row is built every second.
var miniBars = func() []string {
	const cells = 4
	out := make([]string, cells+1)
	for full := range out {
		out[full] = strings.Repeat("█", full) + strings.Repeat("░", cells-full) + " "
	}
	return out
}()

// newBar is the detail view's progress bar (bubbles/progress), drawn at a given fraction: in
// the status colour of working, or plain.
func newBar(noColor bool) progress.Model {
	opts := []progress.Option{progress.WithoutPercentage(), progress.WithFillCharacters('█', '░')}
	if noColor {
		opts = append(opts, progress.WithColors(lipgloss.NoColor{}))
	} else {
		opts = append(opts, progress.WithColors(lipgloss.ANSIColor(4)))
	}
	bar := progress.New(opts...)
	if noColor {
		bar.EmptyColor = lipgloss.NoColor{}
	}
	return bar
}

// progressLine is the detail view's progress row for a width of w cells: the bar, n/total and
// the percentage when the total is known, else a spinner and the count; then the message.
func (m Model) progressLine(p *progressState, now time.Time, w int) string {
	var b strings.Builder
	if f, ok := p.fraction(); ok {
		text := " " + p.count() + " · " + strconv.Itoa(int(f*100)) + "%"
		bar := m.bar
		bar.SetWidth(min(max(w-len(text)-20, 10), 40))
		b.WriteString(bar.ViewAs(f))
		b.WriteString(text)
	} else {
		b.WriteString(p.spin(now) + " " + p.count())
	}
	if msg := safe(p.Message); msg != "" {
		b.WriteString("  " + msg)
	}
	return b.String()
}

// CallLine is the one line a tools/call that answers without a task shows on a terminal while
// it waits, so that a long call is never a blank screen: a spinner (frame turns it), the tool,
// the time taken, and the progress the server reports, with a bar when it gave a total. It is
// at most width cells; the caller draws it over itself on stderr.
func CallLine(tool string, p *Progress, elapsed time.Duration, frame, width int, noColor bool) string {
	var b strings.Builder
	b.WriteString(spinFrames[frame%len(spinFrames)] + " " + safe(tool) + " · " + human.Duration(elapsed.Truncate(time.Second)))
	if p != nil {
		b.WriteString(" · ")
		if f, ok := p.fraction(); ok {
			bar := newBar(noColor)
			bar.SetWidth(20)
			b.WriteString(bar.ViewAs(f) + " ")
		}
		b.WriteString(p.count())
		if msg := safe(p.Message); msg != "" {
			b.WriteString(" · " + msg)
		}
	}
	return fitWidth(b.String(), width)
}
