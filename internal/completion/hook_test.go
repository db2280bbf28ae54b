package completion

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuilder is a Stderr several hooks write to at once.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func needSh(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
}

// waitFor waits for cond, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHookGetsTheTask: the hook gets the envelope byte for byte on stdin and the task in its
// environment, its output goes to Stderr; an id that is not plain visible ASCII is left out
// of the environment, and that is reported.
func TestHookGetsTheTask(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	script := `cat > "$0/stdin.$MCPTASK_EXIT_CODE"; env | grep ^MCPTASK_ | sort > "$0/env.$MCPTASK_EXIT_CODE"; echo hook ran; echo to stderr >&2`
	var stderr lockedBuilder
	h := NewHooks("sh -c ...", []string{"sh", "-c", script, dir}, nil)
	h.Stderr = &stderr
	envelope := []byte(`{"type":"result","taskId":"t-1","status":"completed","note":"ä \u001b"}` + "\n")
	h.Start(Ended{TaskID: "t-1", Tool: "build\x1b[31m", Server: "https://h/mcp", Outcome: "completed", Code: 0, Envelope: envelope})
	h.Start(Ended{TaskID: "bad\nid", Tool: "build", Server: "https://h/mcp", Outcome: "failed", Code: 3})
	h.Wait()

	if got, _ := os.ReadFile(filepath.Join(dir, "stdin.0")); string(got) != string(envelope) {
		t.Errorf("stdin %q, want the envelope %q", got, envelope)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env.0"))
	want := "MCPTASK_EXIT_CODE=0\nMCPTASK_SERVER=https://h/mcp\nMCPTASK_STATUS=completed\nMCPTASK_TASK_ID=t-1\nMCPTASK_TOOL=build\n"
	if string(env) != want {
		t.Errorf("environment:\n%s\nwant\n%s", env, want)
	}
	env, _ = os.ReadFile(filepath.Join(dir, "env.3"))
	if strings.Contains(string(env), "MCPTASK_TASK_ID") || !strings.Contains(string(env), "MCPTASK_STATUS=failed\n") {
		t.Errorf("an unusable id must be left out, the rest kept:\n%s", env)
	}
	out := stderr.String()
	if strings.Count(out, "hook ran\n") != 2 || strings.Count(out, "to stderr\n") != 2 {
		t.Errorf("the hooks' output must reach Stderr:\n%s", out)
	}
	if !strings.Contains(out, "mcptask: --on-complete for task bad id: MCPTASK_TASK_ID is not set: ") {
		t.Errorf("the left-out id must be reported:\n%s", out)
	}
}

// TestHookFailuresAreReported: a hook that cannot be split, cannot start, fails or outlives
// its timeout is reported, with the task.
func TestHookFailuresAreReported(t *testing.T) {
	needSh(t)
	cases := []struct {
		h    *Hooks
		want string
	}{
		{NewHooks("'x", nil, errors.New("unterminated single quote")), `cannot run "'x": unterminated single quote`},
		{NewHooks("", nil, nil), `cannot run "": no command`},
		{NewHooks("no-such-hook-program", []string{"no-such-hook-program"}, nil), "no-such-hook-program: "},
		{NewHooks("sh -c 'exit 7'", []string{"sh", "-c", "exit 7"}, nil), "sh: exit status 7"},
		{NewHooks("sh -c 'sleep 60 & wait'", []string{"sh", "-c", "sleep 60 & wait"}, nil), "sh did not end within 200ms and was killed (--on-complete-timeout)"},
	}
	for _, c := range cases {
		var stderr lockedBuilder
		c.h.Stderr, c.h.Timeout = &stderr, 200*time.Millisecond
		start := time.Now()
		c.h.Start(Ended{TaskID: "t1"})
		c.h.Wait()
		if want := "mcptask: --on-complete for task t1: " + c.want; !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: reported %q, want %q", c.h.command, stderr.String(), want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %s; a killed hook's children must go with it", c.h.command, d)
		}
	}
}

// TestHooksRunAtMostMaxHooksAtOnce: many tasks that end together start at most MaxHooks
// programs at a time, and every one of them runs.
func TestHooksRunAtMostMaxHooksAtOnce(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	running, release := filepath.Join(dir, "running"), filepath.Join(dir, "release")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each hook notes how many run beside it, then waits for the test to let them go.
	script := `touch "$0/$MCPTASK_TASK_ID"; ls "$0" | wc -l > "$0.$MCPTASK_TASK_ID"; while [ ! -e "$1" ]; do sleep 0.01; done; rm "$0/$MCPTASK_TASK_ID"`
	var stderr lockedBuilder
	h := NewHooks("sh -c ...", []string{"sh", "-c", script, running, release}, nil)
	h.Stderr = &stderr
	const n = 3*MaxHooks + 1
	for i := range n {
		h.Start(Ended{TaskID: fmt.Sprintf("t%d", i)})
	}
	waitFor(t, "the first hooks to run", func() bool {
		entries, _ := os.ReadDir(running)
		return len(entries) >= MaxHooks
	})
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.Wait()
	if stderr.String() != "" {
		t.Fatalf("hooks failed:\n%s", stderr.String())
	}
	for i := range n {
		b, err := os.ReadFile(fmt.Sprintf("%s.t%d", running, i))
		if err != nil {
			t.Fatalf("hook %d never ran: %v", i, err)
		}
		if k, _ := strconv.Atoi(strings.TrimSpace(string(b))); k > MaxHooks {
			t.Errorf("hook %d ran beside %d others; at most %d may run at once", i, k-1, MaxHooks)
		}
	}
}
