package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestCallProgressPlain calls the demo's progress tool over HTTP in both eras with no
// terminal: the call carries a progressToken, the server's notifications/progress reach
// stderr as plain lines, throttled (ten steps in well under output.ProgressEvery give the
// first line and the last, not ten), and the result reaches stdout.
func TestCallProgressPlain(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{StepDelay: 10 * time.Millisecond})
			r := runCLI(t, t.Context(), nil, "call", "progress", "--arg", "steps=10", "--server", url, "--protocol", era)
			if r.Code != ExitOK || r.Stdout != "counted 10 steps\n" {
				t.Fatalf("code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			if countMethod(rec, "tasks/get") != 0 {
				t.Errorf("the progress tool is never a task, yet something was polled")
			}
			if !strings.Contains(r.Stderr, " - progress 1/10 step 1 of 10\n") || !strings.Contains(r.Stderr, " - progress 10/10 step 10 of 10\n") {
				t.Errorf("stderr lacks the first and last progress lines:\n%s", r.Stderr)
			}
			if n := strings.Count(r.Stderr, " progress "); n != 2 {
				t.Errorf("%d progress lines for ten notifications in 100ms; want 2 (throttled):\n%s", n, r.Stderr)
			}
		})
	}
}

// TestCallProgressOnTerminal: a plain call on a terminal is not a blank screen while it waits:
// stderr shows the tool, a bar and n/total as the server counts, and the line is cleared once
// the result is on stdout.
func TestCallProgressOnTerminal(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{StepDelay: 150 * time.Millisecond})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			_, out, errOut, code := runOnTerminal(t, ctx, "call", "progress", "--arg", "steps=5", "--server", url, "--protocol", era)
			select {
			case c := <-code:
				if c != ExitOK {
					t.Fatalf("exit %d\nstderr %q", c, errOut.String())
				}
			case <-ctx.Done():
				t.Fatalf("never ended:\n%q", errOut.String())
			}
			if out.String() != "counted 5 steps\n" {
				t.Errorf("stdout %q: want the result once, nothing else", out.String())
			}
			e := errOut.String()
			for _, want := range []string{"progress · ", "█", "3/5 · step 3 of 5"} {
				if !strings.Contains(e, want) {
					t.Errorf("the waiting line never showed %q:\n%q", want, e)
				}
			}
			if !strings.HasSuffix(e, "\r\x1b[K") {
				t.Errorf("the waiting line was left on the screen: %q", e[max(0, len(e)-200):])
			}
		})
	}
}

// TestLiveViewFinalFrameOnTerminal: a task followed in the live view to its end leaves a last
// frame that says it completed, and its result on stdout exactly once (printed after the
// view, not also inside its last frame).
func TestLiveViewFinalFrameOnTerminal(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{StepDelay: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			_, out, errOut, code := runOnTerminal(t, ctx, "call", "sleep", "--arg", "seconds=2", "--server", url, "--protocol", era)
			select {
			case c := <-code:
				if c != ExitOK {
					t.Fatalf("exit %d\nstderr %q", c, errOut.String())
				}
			case <-ctx.Done():
				t.Fatalf("never ended:\n%q", out.String())
			}
			o := out.String()
			if n := strings.Count(o, "slept 2 seconds"); n != 1 {
				t.Errorf("the result is on the terminal %d times, want once:\n%q", n, o)
			}
			// The renderer draws changes only: the last frame is what follows the last help
			// line, and it must end the task (the frame itself is pinned by internal/tui's
			// TestLive1FinalFrame).
			if last := o[strings.LastIndex(o, "q detach"):]; !strings.Contains(last, "✓ completed") || strings.Contains(last, "result\n") {
				t.Errorf("the last frame misses the end, or shows the result too:\n%q", last)
			}
		})
	}
}

// TestInteropEverythingProgress calls server-everything's trigger-long-running-operation, whose
// progress has a total but no message, over stdio and HTTP: the plain lines show the first and
// the last step, and on a terminal the waiting line shows the count as the server reports it.
func TestInteropEverythingProgress(t *testing.T) {
	index := everythingServer(t)
	httpURL := startEverythingHTTP(t, index)
	args := []string{"call", "trigger-long-running-operation", "--arg", "duration=1", "--arg", "steps=5", "--timeout", "60s"}
	for _, tr := range []struct {
		name  string
		flags []string
	}{
		{"stdio", []string{"--stdio", "node " + shellQuote(index) + " stdio"}},
		{"http", []string{"--server", httpURL}},
	} {
		t.Run(tr.name, func(t *testing.T) {
			r := runCLI(t, t.Context(), nil, append(args, tr.flags...)...)
			if r.Code != ExitOK || !strings.Contains(r.Stdout, "Long running operation completed") {
				t.Fatalf("code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, " - progress 1/5\n") || !strings.Contains(r.Stderr, " - progress 5/5\n") {
				t.Errorf("stderr lacks the first and last progress lines:\n%s", r.Stderr)
			}
		})
	}
	t.Run("terminal", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		_, out, errOut, code := runOnTerminal(t, ctx, append(args[:len(args)-2:len(args)-2], "--server", httpURL)...) // --timeout turns the view off
		if c := <-code; c != ExitOK {
			t.Fatalf("exit %d\nstderr %q", c, errOut.String())
		}
		if !strings.Contains(out.String(), "Long running operation completed") || !strings.Contains(errOut.String(), "3/5") {
			t.Errorf("stdout %q\nstderr %q", out.String(), errOut.String())
		}
	})
}

// TestCallProgressJSONL: with --jsonl the call's progress is on stdout as "progress" events
// (no taskId: there is no task), throttled like the lines, before the result.
func TestCallProgressJSONL(t *testing.T) {
	url, _ := demoServer(t, demo.Options{StepDelay: 10 * time.Millisecond})
	r := runCLI(t, t.Context(), nil, "call", "progress", "--arg", "steps=4", "--server", url, "--jsonl")
	if r.Code != ExitOK {
		t.Fatalf("code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var progress []map[string]any
	for _, l := range lines {
		if ev := decodeJSON(t, l); ev["type"] == "progress" {
			progress = append(progress, ev)
		}
	}
	if len(progress) != 2 || progress[0]["progress"] != 1.0 || progress[1]["progress"] != 4.0 || progress[1]["total"] != 4.0 ||
		progress[1]["message"] != "step 4 of 4" || progress[0]["taskId"] != nil {
		t.Errorf("progress events %v; want the first and the last, without a taskId", progress)
	}
	if last := decodeJSON(t, lines[len(lines)-1]); last["type"] != "result" {
		t.Errorf("the last event is %v, want the result", last["type"])
	}
}

// TestLiveViewTaskProgress follows a 2025-11-25 task over stdio in the live view: the demo
// sends notifications/progress with the token of the tools/call that created the task, for
// the task's life, and the detail view draws them as a progress row with n/total (the token
// is how the engine knows whose progress it is: the notifications carry no related-task).
func TestLiveViewTaskProgress(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	server := demoStdio(t, "--step", "150ms", "--poll-interval", "5s")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, out, errOut, code := runOnTerminal(t, ctx, "call", "sleep", "--arg", "seconds=5", "--stdio", server, "--protocol", "2025-11-25")
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d\nstderr %q", c, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("never ended:\n%q", out.String())
	}
	o := out.String()
	if !strings.Contains(o, "progress    ") || !strings.Contains(o, "/5 · ") {
		t.Errorf("the live view never drew the task's progress:\n%q", o[max(0, len(o)-3000):])
	}
}

// TestListAndGetStatusOnTerminal: list and get write a status with its symbol on a terminal,
// in its colour unless NO_COLOR, and the bare word in a pipe (what a script reads).
func TestListAndGetStatusOnTerminal(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url)
	id := strings.TrimSpace(r.Stdout)
	if r.Code != ExitOK || id == "" {
		t.Fatalf("call --detach: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	run := func(tty bool, env map[string]string, args ...string) string {
		out, errOut := &lockedBuffer{}, &lockedBuffer{}
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
		ios.SetTTY(false, tty, false)
		if code := runOn(t, t.Context(), ios, env, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut.String())
		}
		return out.String()
	}
	for _, args := range [][]string{{"list"}, {"get", id}} {
		if got := run(true, nil, args...); !strings.Contains(got, "\x1b[34m● working\x1b[0m") {
			t.Errorf("%v on a terminal: no blue ● working:\n%q", args, got)
		}
		if got := run(true, map[string]string{"NO_COLOR": "1"}, args...); !strings.Contains(got, "● working") || strings.Contains(got, "\x1b[") {
			t.Errorf("%v with NO_COLOR: want the symbol and word, no colour:\n%q", args, got)
		}
		if got := run(false, nil, args...); strings.Contains(got, "●") || !strings.Contains(got, "working") {
			t.Errorf("%v in a pipe: want the bare word:\n%q", args, got)
		}
	}
	runCLI(t, t.Context(), nil, "cancel", id)
}
