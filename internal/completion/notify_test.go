package completion

import (
	"strings"
	"testing"
	"time"
)

// TestNotificationSequences: each family of terminals gets the escape it reads, tmux gets it
// passed through to the outer terminal, and the rest the bell; a server's text cannot end
// the sequence early or start another one.
func TestNotificationSequences(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TERM_PROGRAM": "WezTerm"}, "\x1b]9;mcptask: build completed: task t1\x1b\\"},
		{map[string]string{"TERM_PROGRAM": "iTerm.app"}, "\x1b]9;mcptask: build completed: task t1\x1b\\"},
		{map[string]string{"WT_SESSION": "x"}, "\x1b]9;mcptask: build completed: task t1\x1b\\"},
		{map[string]string{"VTE_VERSION": "7600"}, "\x1b]777;notify;mcptask: build completed;task t1\x1b\\"},
		{map[string]string{"TERM": "foot"}, "\x1b]777;notify;mcptask: build completed;task t1\x1b\\"},
		{map[string]string{"TERM": "xterm-256color"}, "\a"},
		{map[string]string{"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-0/default,1,0"}, "\x1bPtmux;\x1b\x1b]9;mcptask: build completed: task t1\x1b\x1b\\\x1b\\"},
	}
	for _, c := range cases {
		got := sequence(func(k string) string { return c.env[k] }, "mcptask: build completed", "task t1")
		if got != c.want {
			t.Errorf("%v: got %q, want %q", c.env, got, c.want)
		}
	}
	got := sequence(func(k string) string { return map[string]string{"VTE_VERSION": "1"}[k] }, "x\x1b]0;evil\a;more", "b\x1b\\c")
	if strings.Count(got, "\x1b") != 2 || strings.Contains(got, "\a") || strings.Count(got, ";") != 3 {
		t.Errorf("server text must not add escapes or separators: %q", got)
	}
}

// TestNotifyOnlyWhenAway: a short wait in front of the view is not notified; a long one is,
// and so is a short one while the terminal is not in front.
func TestNotifyOnlyWhenAway(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var buf strings.Builder
	n := &Notifier{Term: &buf, Start: now, Now: func() time.Time { return now }, After: 10 * time.Second,
		Getenv: func(k string) string { return map[string]string{"TERM_PROGRAM": "WezTerm"}[k] }}
	e := Ended{TaskID: "t1", Tool: "build", Outcome: "completed", Took: time.Second}
	n.Notify(e)
	if buf.String() != "" {
		t.Fatalf("a 0 s wait in front of the view was notified: %q", buf.String())
	}
	n.SetBlurred(true)
	n.Notify(e)
	if !strings.Contains(buf.String(), "\x1b]9;mcptask: build completed") {
		t.Fatalf("a task that ends while the terminal is not in front must be notified: %q", buf.String())
	}
	n.SetBlurred(false)
	now = now.Add(11 * time.Second)
	e.Outcome = "failed"
	n.Notify(e)
	if !strings.Contains(buf.String(), "\x1b]9;mcptask: build failed") {
		t.Fatalf("a wait over --notify-after must be notified: %q", buf.String())
	}
	n.Term = nil // a pipe: never
	e.Outcome = "cancelled"
	n.Notify(e)
	if strings.Contains(buf.String(), "cancelled") {
		t.Fatalf("nothing may be written when no terminal is there")
	}
}
