package tui

import (
	"fmt"
	"io"
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

// BenchmarkIdleWatch measures the CPU the running program costs while it watches one task whose
// server asks for a 5 s interval: each iteration lets a quarter second of real time pass, and
// the metric is the process's CPU time as a share of one core (issue 4: under 1%).
func BenchmarkIdleWatch(b *testing.B) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", StatusMessage: "waiting", PollInterval: 5 * time.Second}}
	prog := tea.NewProgram(New(p, []string{"t"}, nil, Options{}), tea.WithInput(nil), tea.WithOutput(io.Discard),
		tea.WithWindowSize(100, 30), tea.WithoutSignalHandler(), tea.WithFPS(FPS))
	go prog.Run() //nolint:errcheck // Kill ends it; its error says only that
	defer prog.Kill()
	deadline := time.After(10 * time.Second)
	for get(p, func() int { return p.polls["t"] }) == 0 {
		select {
		case <-p.changed:
		case <-deadline:
			b.Fatal("the program never polled")
		}
	}
	startCPU, start := cpuTime(), time.Now()
	for b.Loop() {
		time.Sleep(250 * time.Millisecond) // idle time is what is measured
	}
	b.ReportMetric(100*float64(cpuTime()-startCPU)/float64(time.Since(start)), "%cpu")
}
