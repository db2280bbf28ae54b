package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// everyStatus is a table of one task per status, two of them working with progress: one whose
// server gave a total (a bar), one whose server did not (a spinner and the count).
func everyStatus(now time.Time) ([]string, map[string]Snapshot, []Update) {
	ids := []string{"bar", "spin", "ask", "done", "broke", "stopped", "gone"}
	status := map[string]string{"bar": "working", "spin": "working", "ask": "input_required", "done": "completed",
		"broke": "failed", "stopped": "cancelled", "gone": "expired"}
	initial := map[string]Snapshot{}
	for _, id := range ids {
		s := Snapshot{TaskID: id, Tool: "build", Status: status[id], StatusMessage: "message of " + id,
			CreatedAt: t0, LastUpdatedAt: now.Add(-12 * time.Second), TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
		initial[id] = s
	}
	ups := []Update{
		{TaskID: "bar", Progress: &Progress{Value: 3, Total: 5, Message: "step 3 of 5"}},
		{TaskID: "spin", Progress: &Progress{Value: 42, Message: "42 files"}},
		scheduled("bar", now.Add(5*time.Second), 5*time.Second, "server's"),
		scheduled("spin", now.Add(3*time.Second), 5*time.Second, "server's"),
		scheduled("ask", now.Add(4*time.Second), 5*time.Second, "server's"),
	}
	return ids, initial, ups
}

// checkWidth fails when a line of frame is wider than width.
func checkWidth(t *testing.T, name string, width int, frame string) {
	t.Helper()
	for i, line := range strings.Split(ansi.Strip(frame), "\n") {
		if w := ansi.StringWidth(line); w > width {
			t.Errorf("%s at %d columns: line %d is %d wide: %q", name, width, i, w, line)
		}
	}
}

// TestLive1TableGoldens: the table with every status at 60, 100 and 140 columns. A person
// sees each status as one symbol and word (● working, ? input_required, ✓ completed, ✗ failed,
// ⊘ cancelled, ∅ expired), the summary line in the same words, and a PROGRESS column: a bar
// and the percentage for "bar" (3 of 5), a spinner and the count for "spin" (no total), and
// nothing for the tasks that are over. At 60 columns the tool, age and next-poll columns give
// way before the progress column does.
func TestLive1TableGoldens(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	for _, width := range []int{60, 100, 140} {
		ids, initial, ups := everyStatus(now)
		m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
		m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 30})
		m = batch(m, ups...)
		frame := m.View().Content
		checkWidth(t, "table", width, frame)
		golden(t, fmt.Sprintf("live1-table-%d", width), frame)
		for _, want := range []string{"PROGRESS", "██░░ 60%", "⠙ 42"} {
			if !strings.Contains(frame, want) {
				t.Errorf("%d columns: the table does not show %q:\n%s", width, want, frame)
			}
		}
		summary := "2 ● working  1 ? input_required  1 ✓ completed  1 ✗ failed  1 ⊘ cancelled  1 ∅ expired"
		if width < len([]rune(summary)) {
			summary = "2 ●  1 ?  1 ✓  1 ✗  1 ⊘  1 ∅" // too narrow for the words: every count still shows
		}
		if !strings.Contains(frame, "\n"+summary+"\n") {
			t.Errorf("%d columns: the summary is not %q:\n%s", width, summary, frame)
		}
		if strings.Contains(frame, "done,") || strings.Contains(frame, "needs input") {
			t.Errorf("%d columns: the summary uses words the rows do not:\n%s", width, frame)
		}
	}
}

// TestLive1DetailProgressGoldens: the detail view of a task whose server sends progress with
// a total, at 60, 100 and 140 columns. A person sees a "progress" row under the status: a bar
// three fifths full, "3/5 · 60%" and the server's message, before the elapsed time; a
// progress message with an escape in it shows without the escape.
func TestLive1DetailProgressGoldens(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	for _, width := range []int{60, 100, 140} {
		s := Snapshot{TaskID: "task-1", Tool: "build", Server: "http://127.0.0.1:8080/mcp", Protocol: "2025-11-25", Status: "working",
			StatusMessage: "compiling", CreatedAt: t0, LastUpdatedAt: now.Add(-2 * time.Second), TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
		m := New(newFake(), nil, []string{"task-1"}, map[string]Snapshot{"task-1": s}, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
		m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 30})
		m = batch(m, Update{TaskID: "task-1", Progress: &Progress{Value: 3, Total: 5, Message: "step 3 of 5\x1b[2J"}},
			scheduled("task-1", now.Add(5*time.Second), 5*time.Second, "server's"))
		frame := m.View().Content
		checkWidth(t, "detail", width, frame)
		golden(t, fmt.Sprintf("live1-detail-progress-%d", width), frame)
		if !strings.Contains(frame, "progress    ") || !strings.Contains(frame, "3/5 · 60%") || !strings.Contains(frame, "█") {
			t.Errorf("%d columns: no progress bar:\n%s", width, frame)
		}
		if strings.Contains(frame, "\x1b[2J") {
			t.Errorf("a server's progress message reached the terminal with its escape")
		}
	}
}

// TestLive1FinalFrame runs the real program until the task completes, 35 s after it started,
// while the view's clock has moved on to 10 minutes: the frame left on the screen, at 60, 100
// and 140 columns, has no key help, says the task took 35s (its lastUpdatedAt, not the view's
// clock), the TTL left at its end (59m25s of 1h00m), no progress bar (the task is over), and no
// result: the caller prints that after the view, once.
func TestLive1FinalFrame(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		now := t0.Add(10 * time.Minute)
		f := newFake()
		s := Snapshot{TaskID: "task-1", Tool: "build", Server: "http://127.0.0.1:8080/mcp", Protocol: "2026-07-28", Status: "working",
			StatusMessage: "compiling", CreatedAt: t0, LastUpdatedAt: t0.Add(10 * time.Second), TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
		m := New(f, f.feed, []string{"task-1"}, map[string]Snapshot{"task-1": s}, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
		tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(width, 30))
		f.feed.Send(Update{TaskID: "task-1", Progress: &Progress{Value: 4, Total: 5}})
		end := s
		end.Status, end.StatusMessage, end.LastUpdatedAt, end.Result = "completed", "built", t0.Add(35*time.Second), "built 42 artefacts"
		f.send(end)
		final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
		frame := final.View().Content
		checkWidth(t, "final", width, frame)
		golden(t, fmt.Sprintf("live1-final-%d", width), frame)
		for _, want := range []string{"✓ completed", "elapsed     35s", "ttl left    59m25s of 1h00m", "polling     done"} {
			if !strings.Contains(frame, want) {
				t.Errorf("%d columns: the final frame does not say %q:\n%s", width, want, frame)
			}
		}
		for _, banned := range []string{"q detach", "? keys", "built 42 artefacts", "progress    ", "█"} {
			if strings.Contains(frame, banned) {
				t.Errorf("%d columns: the final frame still shows %q:\n%s", width, banned, frame)
			}
		}
	}
}

// TestCallLine: the waiting line of a plain call shows the tool, the time, a bar with n/total
// when the total is known (the count alone otherwise), fits its width, and plays the attacker:
// a server's progress message or tool name with escapes, an OSC 52 clipboard write or a bidi
// override reaches the terminal without them.
func TestCallLine(t *testing.T) {
	hostile := "step 3\x1b]52;c;ZXZpbA==\x07 of 5\u202e\x1b[2J"
	got := CallLine("build\x1b[31m", &Progress{Value: 3, Total: 5, Message: hostile}, 3500*time.Millisecond, 2, 100, true)
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("the line carries %q: %q", bad, got)
		}
	}
	if !strings.Contains(got, "build") || !strings.Contains(got, "· 3s ·") || !strings.Contains(got, "3/5") || !strings.Contains(got, "█") {
		t.Errorf("the line misses the tool, the time or the bar: %q", got)
	}
	if w := ansi.StringWidth(CallLine("build", &Progress{Value: 3, Total: 5, Message: strings.Repeat("long ", 60)}, time.Second, 0, 60, true)); w > 60 {
		t.Errorf("the line is %d wide on a 60-column terminal", w)
	}
	if got := CallLine("build", &Progress{Value: 42}, time.Second, 0, 100, true); strings.Contains(got, "█") || !strings.Contains(got, " 42") {
		t.Errorf("without a total: the count, no bar: %q", got)
	}
	if got := CallLine("build", nil, time.Second, 0, 100, true); !strings.HasSuffix(got, "build · 1s") {
		t.Errorf("before any progress: the spinner, the tool and the time: %q", got)
	}
}

// TestTableStatusColours: in colour, a row's status cell is its status's colour and symbol
// (green ✓ completed), the selected row is one colour, and colour moves no column: without
// escapes the frame is the NO_COLOR frame.
func TestTableStatusColours(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	frame := func(noColor bool) string {
		ids, initial, ups := everyStatus(now)
		m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return now }, NoColor: noColor, DisableClock: true})
		m, _ = update(m, tea.WindowSizeMsg{Width: 100, Height: 30})
		return batch(m, ups...).View().Content
	}
	col, plain := frame(false), frame(true)
	if ansi.Strip(col) != plain {
		t.Errorf("colour changed the layout:\n%s\nvs\n%s", ansi.Strip(col), plain)
	}
	var done string
	for _, l := range strings.Split(col, "\n") {
		if strings.Contains(l, "message of done") {
			done = l
		}
	}
	if !strings.Contains(done, ";5;2m✓ completed") { // ANSI colour 2, green
		t.Errorf("the completed row's status is not green: %q", done)
	}
}
