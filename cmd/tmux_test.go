package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestWatchInRealTerminal runs the mcptask binary under tmux, a real terminal, against the demo
// server: `mcptask watch` must draw the live view, follow the task to completion, and leave the
// result and exit status on the screen. In CI tmux is installed by .ci/run and the test must run.
func TestWatchInRealTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required in CI (.ci/run installs it)")
		}
		t.Skip("tmux not installed; the real-terminal check is skipped")
	}
	bin := filepath.Join(t.TempDir(), "mcptask")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	url, _ := demoServer(t, demo.Options{StepDelay: 200 * time.Millisecond, PollInterval: 200 * time.Millisecond})
	state := filepath.Join(t.TempDir(), "tasks.json")
	r := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": state}, "call", "sleep", "--arg", "seconds=6", "--detach", "--server", url)
	id := strings.TrimSpace(r.Stdout)
	if r.Code != ExitOK || id == "" {
		t.Fatalf("call: %d %s", r.Code, r.Stderr)
	}
	session := "mcptask-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// A person's terminal: the pane inherits the test's environment, and in a CI job CI would
	// rightly turn the live view off (IOStreams.CanPrompt).
	script := "unset CI; MCPTASK_STATE=" + shellQuote(state) + " " + shellQuote(bin) + " watch " + id + "; echo EXIT=$?; sleep 30"
	tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })

	var screen string
	waitFor(t, "the live view", 15*time.Second, func() bool {
		screen = tmux("capture-pane", "-p", "-t", session)
		return strings.Contains(screen, "working") && strings.Contains(screen, "next poll")
	})
	waitFor(t, "the task to finish and mcptask to exit", 30*time.Second, func() bool {
		screen = tmux("capture-pane", "-p", "-t", session)
		return strings.Contains(screen, "EXIT=")
	})
	for _, want := range []string{"completed", "history", "slept 6 seconds", "EXIT=0"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
}
