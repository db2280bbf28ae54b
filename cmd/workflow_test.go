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
)

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
