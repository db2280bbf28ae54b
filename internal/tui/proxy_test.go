package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// proxyClock is the fixed time of the proxy view's golden frame.
var proxyClock = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// proxyEvents is a morning of traffic: two hosts, three tasks (one polled by both, one that
// finished, one the server created on a host), violations on both sides, and a notice.
func proxyEvents() []ProxyEvent {
	at := func(s int) time.Time { return proxyClock.Add(time.Duration(s) * time.Second) }
	a, b := "ts-client-v2/2.4.0 @127.0.0.1", "mcptask/dev (session 1a2b3c4d)"
	evs := []ProxyEvent{
		{Kind: "created", Time: at(-120), Host: a, TaskID: "7f3c9a2e-long-task-id", Tool: "build", Status: "working", Message: "step 1/9",
			Version: "2026-07-28", PollInterval: time.Second, CreatedAt: at(-120)},
		{Kind: "created", Time: at(-90), Host: b, TaskID: "done-task", Tool: "sleep", Status: "working", Version: "2025-11-25", CreatedAt: at(-90)},
		{Kind: "status", Time: at(-80), Host: b, TaskID: "done-task", Status: "completed", Message: "done"},
		{Kind: "created", Time: at(-30), Host: b, TaskID: "sample-1", Tool: "sampling/createMessage", Status: "working", OnHost: true, CreatedAt: at(-30)},
		{Kind: "violation", Time: at(-20), Host: a, TaskID: "7f3c9a2e-long-task-id", Rule: "C24", Section: "EXT §Task Polling", Peer: "host", Seen: "polled again after 200ms"},
		{Kind: "violation", Time: at(-19), Host: a, TaskID: "7f3c9a2e-long-task-id", Rule: "C24", Section: "EXT §Task Polling", Peer: "host", Seen: "polled again after 150ms"},
		{Kind: "violation", Time: at(-10), Rule: "B33", Section: "EXT §Task Status", Peer: "server", Seen: "terminal status completed changed to working"},
		{Kind: "status", Time: at(-5), Host: a, TaskID: "7f3c9a2e-long-task-id", Status: "working", Message: "step 4/9 \x1b[31mred\x1b[0m", Push: true},
		{Kind: "notice", Time: at(-2), Text: "the server http://127.0.0.1:9/mcp could not be reached"},
	}
	// a polls the long task every 2 s, b every 1 s.
	for i := 0; i < 5; i++ {
		evs = append(evs, ProxyEvent{Kind: "poll", Time: at(-60 + 2*i), Host: a, TaskID: "7f3c9a2e-long-task-id"})
		evs = append(evs, ProxyEvent{Kind: "poll", Time: at(-60 + i), Host: b, TaskID: "7f3c9a2e-long-task-id"})
	}
	return evs
}

func proxyGolden(t *testing.T, name, got string) {
	t.Helper()
	got = ansi.Strip(got)
	path := filepath.Join("testdata", name+".golden")
	if f := os.Getenv("UPDATE_PROXY_GOLDEN"); f != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_PROXY_GOLDEN=1 to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestProxyViewGolden pins the frame: the header counts hosts, tasks and violations; running
// tasks come first with who polls them and how often; the violations are counted per rule and
// side; escapes in a server's message never reach the terminal.
func TestProxyViewGolden(t *testing.T) {
	m := NewProxyModel(ProxyOptions{Listen: "http://127.0.0.1:7070/mcp", Upstream: "https://mcp.example.com/mcp",
		Ledger: "/home/u/.local/state/mcptask/tasks.json", NoColor: true, Now: func() time.Time { return proxyClock }, DisableClock: true})
	m.width = 140
	for _, ev := range proxyEvents() {
		m.apply(ev)
	}
	frame := m.Render()
	if strings.Contains(frame, "\x1b") {
		t.Errorf("escape sequences in a NO_COLOR frame: %q", frame)
	}
	proxyGolden(t, "proxy_view", frame)
}

// TestProxyViewProgram runs the view as a program: events sent in show up, q ends it.
func TestProxyViewProgram(t *testing.T) {
	m := NewProxyModel(ProxyOptions{Listen: "http://127.0.0.1:7070/mcp", Upstream: "http://up/mcp", NoColor: true, DisableClock: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("no tasks yet")) }, teatest.WithDuration(10*time.Second))
	tm.Send(ProxyEventMsg{Kind: "created", Host: "h", TaskID: "task-one", Tool: "sleep", Status: "working", Message: "step 1/2"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("task-one")) && bytes.Contains(b, []byte("step 1/2"))
	},
		teatest.WithDuration(10*time.Second))
	tm.Send(ProxyEventMsg{Kind: "violation", Host: "h", Rule: "C10", Peer: "host", Section: "EXT", Seen: "no Mcp-Name"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("1 violation")) }, teatest.WithDuration(10*time.Second))
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(ProxyModel)
	if len(final.order) != 1 || final.rules["C10\x00host"].n != 1 {
		t.Errorf("final model: tasks %v rules %v", final.order, final.rules)
	}
}
