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
