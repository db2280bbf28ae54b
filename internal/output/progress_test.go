package output

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/redact"
)

// TestProgressLinesThrottled: notifications/progress become plain lines on stderr, at most one
// per task every ProgressEvery besides the first and the one that reaches the total, each task
// (and the call's, "-") on its own clock; a server's message reaches the log without its
// escapes.
func TestProgressLinesThrottled(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var lines bytes.Buffer
	p := NewProgress(&lines, nil, func() time.Time { return now }, nil, redact.New(nil))
	total := 10.0
	ev := func(id string, n float64, msg string) {
		p.Event(follow.Event{Kind: follow.KindProgress, TaskID: id, Progress: n, Total: &total, Message: msg})
	}
	ev("t1", 1, "one\x1b[2J")
	for i := 2.0; i < 10; i++ {
		now = now.Add(100 * time.Millisecond)
		ev("t1", i, "")
		ev("", i, "")
	}
	now = now.Add(ProgressEvery) // a line again after the pause
	ev("t1", 9.5, "")
	ev("t1", 10, "done") // the last is always written
	got := lines.String()
	want := []string{
		"2026-11-22T10:00:00Z t1 progress 1/10 one",
		"2026-11-22T10:00:00Z - progress 2/10",
		"2026-11-22T10:00:02Z t1 progress 9.5/10",
		"2026-11-22T10:00:02Z t1 progress 10/10 done",
	}
	if strings.TrimSpace(got) != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("a server's escape reached the log: %q", got)
	}
}
