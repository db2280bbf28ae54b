//go:build unix

package tui

import (
	"io"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleWatch measures the CPU the running program costs while it watches one task whose
// server asks for a 5 s interval: each iteration lets a quarter second of real time pass, and
// the metric is the process's CPU time as a share of one core (issue 4: under 1%).
func BenchmarkIdleWatch(b *testing.B) {
	f := newFake()
	working := Snapshot{TaskID: "t", Status: "working", StatusMessage: "waiting", PollInterval: 5 * time.Second}
	prog := tea.NewProgram(New(f, f.feed, []string{"t"}, nil, Options{}), tea.WithInput(nil), tea.WithOutput(io.Discard),
		tea.WithWindowSize(100, 30), tea.WithoutSignalHandler(), tea.WithFPS(FPS))
	go prog.Run() //nolint:errcheck // Kill ends it; its error says only that
	defer prog.Kill()
	defer f.feed.Close()
	// The engine's side: an answer every 5 s, with the schedule.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			f.feed.Send(Update{TaskID: "t", Snap: working, Via: "poll", NextPoll: time.Now().Add(5 * time.Second), Interval: 5 * time.Second, Source: "server's"})
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	startCPU, start := cpuTime(), time.Now()
	for b.Loop() {
		time.Sleep(250 * time.Millisecond) // idle time is what is measured
	}
	b.ReportMetric(100*float64(cpuTime()-startCPU)/float64(time.Since(start)), "%cpu")
}
