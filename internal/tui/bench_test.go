package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// thousand is a table of 1,000 working tasks, the size a busy resume can reach.
func thousand() Model {
	ids := make([]string, 1000)
	initial := map[string]Snapshot{}
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%04d", i)
		initial[ids[i]] = Snapshot{TaskID: ids[i], Tool: "sleep", Server: "http://127.0.0.1:8080/mcp", Status: "working", StatusMessage: "step 3/10", CreatedAt: t0, PollInterval: time.Second}
	}
	m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return t0.Add(time.Minute) }, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return m
}

// BenchmarkView1000 draws the table of 1,000 tasks, nothing changed since the last frame:
// only the visible rows are looked at, and those come from the row cache.
func BenchmarkView1000(b *testing.B) {
	m := thousand()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkView1000Fresh draws the table of 1,000 tasks with every visible row rendered anew,
// what a frame costs when every task on screen changed.
func BenchmarkView1000Fresh(b *testing.B) {
	m := thousand()
	b.ReportAllocs()
	for b.Loop() {
		m.rows.rows = nil // forget every row
		_ = m.View()
	}
}

// BenchmarkApplyUpdate applies one poll answer to a view of 1,000 tasks.
func BenchmarkApplyUpdate(b *testing.B) {
	m := thousand()
	u := Update{TaskID: "task-0500", Snap: Snapshot{TaskID: "task-0500", Status: "working", StatusMessage: "step 3/10", PollInterval: time.Second},
		NextPoll: t0.Add(time.Minute + time.Second), Interval: time.Second, Source: "server's"}
	msg := feedMsg{updates: []Update{u}}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(msg)
	}
}

// tenThousand is a table of 10,000 working tasks, every one reporting progress with a total:
// the PROGRESS column is drawn.
func tenThousand() Model {
	ids := make([]string, 10000)
	initial := map[string]Snapshot{}
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%05d", i)
		initial[ids[i]] = Snapshot{TaskID: ids[i], Tool: "sleep", Server: "http://127.0.0.1:8080/mcp", Status: "working", StatusMessage: "step 3/10", CreatedAt: t0, PollInterval: time.Second}
	}
	m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return t0.Add(time.Minute) }, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	ups := make([]Update, 0, len(ids))
	for i, id := range ids {
		ups = append(ups, Update{TaskID: id, Progress: &Progress{Value: float64(i % 10), Total: 10}})
	}
	m = batch(m, ups...)
	return m
}

// BenchmarkView10000 draws the table of 10,000 tasks with progress, every visible row's
// progress moved since the last frame (the worst a frame meets: all of it rebuilt), and one
// task's status changed (the summary counted again). The target is at most 1 ms a frame.
func BenchmarkView10000(b *testing.B) {
	m := tenThousand()
	ids := m.ids
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		lo, hi := m.tableWindow()
		ups := make([]Update, 0, hi-lo+1)
		for _, id := range ids[lo:hi] {
			ups = append(ups, Update{TaskID: id, Progress: &Progress{Value: float64(n % 10), Total: 10}})
		}
		st := "working"
		if n%2 == 0 {
			st = "completed"
		}
		ups = append(ups, Update{TaskID: ids[9999], Snap: Snapshot{TaskID: ids[9999], Status: st, CreatedAt: t0}})
		m, _ = update(m, feedMsg{updates: ups})
		_ = m.View()
	}
}

// BenchmarkView1000Progress is BenchmarkView1000Fresh with the progress column: every
// visible row rendered anew, each with its bar.
func BenchmarkView1000Progress(b *testing.B) {
	m := thousand()
	ups := make([]Update, 0, len(m.ids))
	for i, id := range m.ids {
		ups = append(ups, Update{TaskID: id, Progress: &Progress{Value: float64(i % 10), Total: 10}})
	}
	m = batch(m, ups...)
	b.ReportAllocs()
	for b.Loop() {
		m.rows.rows = nil // forget every row
		_ = m.View()
	}
}

// BenchmarkApplyProgress applies one notifications/progress to a view of 1,000 tasks, what a
// server reporting progress costs the view per notification (drawing is BenchmarkView1000Progress's).
func BenchmarkApplyProgress(b *testing.B) {
	m := thousand()
	msg := feedMsg{updates: []Update{{TaskID: "task-0500", Progress: &Progress{Value: 3, Total: 10, Message: "step 3 of 10"}}}}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(msg)
	}
}
