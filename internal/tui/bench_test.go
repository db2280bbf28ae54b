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
	m := New(newScripted(), ids, initial, Options{Now: func() time.Time { return t0.Add(time.Minute) }, DisableClock: true})
	m.Init()
	m, _ = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return m
}

// BenchmarkView1000 draws the table of 1,000 tasks: only the visible rows are rendered, but
// the summary counts every task.
func BenchmarkView1000(b *testing.B) {
	m := thousand()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkPollUpdate applies one poll result to a view of 1,000 tasks and re-arms its tick.
func BenchmarkPollUpdate(b *testing.B) {
	m := thousand()
	s := Snapshot{TaskID: "task-0500", Status: "working", StatusMessage: "step 3/10", PollInterval: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		m.tasks["task-0500"].inFlight = true
		m.Update(pollMsg{id: "task-0500", snap: s})
	}
}
