package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
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
		got := notification(func(k string) string { return c.env[k] }, "mcptask: build completed", "task t1")
		if got != c.want {
			t.Errorf("%v: got %q, want %q", c.env, got, c.want)
		}
	}
	got := notification(func(k string) string { return map[string]string{"VTE_VERSION": "1"}[k] }, "x\x1b]0;evil\a;more", "b\x1b\\c")
	if strings.Count(got, "\x1b") != 2 || strings.Contains(got, "\a") || strings.Count(got, ";") != 3 {
		t.Errorf("server text must not add escapes or separators: %q", got)
	}
}

// TestNotifyOnlyWhenAway: a short wait in front of the view is not notified; a long one is,
// and so is a short one while the terminal is not in front.
func TestNotifyOnlyWhenAway(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var buf lockedBuffer
	f := NewFactory(&IOStreams{})
	f.Now = func() time.Time { return now }
	f.Getenv = func(k string) string { return map[string]string{"TERM_PROGRAM": "WezTerm"}[k] }
	f.Workflow = WorkflowOptions{Notify: true, NotifyAfter: 10 * time.Second}
	w := &workflow{f: f, start: now, term: &buf}
	o := follow.Outcome{TaskID: "t1", Tool: "build", End: follow.EndResult, Task: &rpc.Task{TaskID: "t1", Status: rpc.StatusCompleted}}
	w.notify(o, "completed", time.Second)
	if buf.String() != "" {
		t.Fatalf("a 0 s wait in front of the view was notified: %q", buf.String())
	}
	w.setBlurred(true)
	w.notify(o, "completed", time.Second)
	if !strings.Contains(buf.String(), "\x1b]9;mcptask: build completed") {
		t.Fatalf("a task that ends while the terminal is not in front must be notified: %q", buf.String())
	}
	w.setBlurred(false)
	now = now.Add(11 * time.Second)
	w.notify(o, "failed", time.Second)
	if !strings.Contains(buf.String(), "\x1b]9;mcptask: build failed") {
		t.Fatalf("a wait over --notify-after must be notified: %q", buf.String())
	}
	w.term = nil // a pipe: never
	w.notify(o, "cancelled", time.Second)
	if strings.Contains(buf.String(), "cancelled") {
		t.Fatalf("nothing may be written when no terminal is there")
	}
}

// TestNotifyReachesTheTerminal runs mcptask under tmux and records, with pipe-pane, the bytes
// the program writes to its terminal: when the task ends, the OSC 9 notification is among
// them, wrapped for tmux to pass it on to the outer terminal.
func TestNotifyReachesTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required in CI (.ci/run installs it)")
		}
		t.Skip("tmux not installed")
	}
	bin := mcptaskBinary(t)
	url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	dir := t.TempDir()
	sock, raw := filepath.Join(dir, "tmux.sock"), filepath.Join(dir, "pane.raw")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	session := "mcptask-notify"
	tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "sh")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("pipe-pane", "-o", "-t", session, "cat >> "+shellQuote(raw))
	line := "TERM_PROGRAM=WezTerm MCPTASK_STATE=" + shellQuote(filepath.Join(dir, "tasks.json")) + " " + shellQuote(bin) +
		" call sleep --arg seconds=1 --server " + shellQuote(url) + " --notify --notify-after 0s --on-input fail; echo EXIT=$?"
	tmux("send-keys", "-t", session, line, "Enter")
	exited := regexp.MustCompile(`EXIT=\d`) // the typed line shows EXIT=$?
	waitFor(t, "mcptask to exit", 30*time.Second, func() bool {
		return exited.MatchString(tmux("capture-pane", "-p", "-t", session))
	})
	if screen := tmux("capture-pane", "-p", "-t", session); !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("mcptask did not succeed:\n%s", screen)
	}
	var got []byte
	waitFor(t, "the pane's bytes", 10*time.Second, func() bool {
		got, _ = os.ReadFile(raw)
		return exited.Match(got)
	})
	if want := "\x1bPtmux;\x1b\x1b]9;mcptask: sleep completed: task "; !strings.Contains(string(got), want) {
		t.Fatalf("the terminal never got the notification %q; it got:\n%q", want, got)
	}
}
