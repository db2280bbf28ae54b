package cmd

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestCallOnTerminalAnswersInput runs `mcptask call ask` as if on a terminal: the live view
// comes up, shows the question, takes the answer from the keyboard, sends it with
// tasks/update, and the result lands on stdout after the view.
func TestCallOnTerminalAnswersInput(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) { callOnTerminal(t, era) })
	}
}

func callOnTerminal(t *testing.T, era string) {
	url, rec := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	typeKeys, out, errOut, code := runOnTerminal(t, ctx, "call", "ask", "--server", url, "--protocol", era)
	defer func() {
		if t.Failed() {
			t.Logf("stdout: %q\nstderr: %s", out.String(), errOut.String())
		}
	}()
	waitFor(t, "the question in the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "press i to answer") })
	if !strings.Contains(out.String(), "MCP "+era) {
		t.Errorf("the view does not say which protocol the task is followed in (MCP %s)", era)
	}
	typeKeys("i")
	waitFor(t, "the form", 10*time.Second, func() bool { return strings.Contains(out.String(), "Name (required)") })
	typeKeys("Ada\r")
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d\nstderr: %s", c, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("the view never ended:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Hello, Ada!") {
		t.Errorf("the result is missing:\n%s", out.String())
	}
	if era == "2026-07-28" && countMethod(rec, "tasks/update") != 1 {
		t.Errorf("want exactly one tasks/update, got methods %v", rec.Methods())
	}
	if strings.Contains(out.String(), "\x1b[38;") || strings.Contains(out.String(), "\x1b[48;") {
		t.Errorf("NO_COLOR is set but colours were drawn")
	}
}

// TestEscInFormSendsNothing: esc in the question form goes back to the task and sends
// nothing, in both eras; the task keeps waiting, and the question answered afterwards ends it
// well. Before, esc sent the elicitation action cancel and the task ended (exit 4).
func TestEscInFormSendsNothing(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			typeKeys, out, errOut, code := runOnTerminal(t, ctx, "call", "ask", "--server", url, "--protocol", era)
			defer func() {
				if t.Failed() {
					t.Logf("stdout: %q\nstderr: %s", out.String(), errOut.String())
				}
			}()
			count := func(s string) func() bool {
				n := strings.Count(out.String(), s)
				return func() bool { return strings.Count(out.String(), s) > n }
			}
			asked := count("Name (required)")
			waitFor(t, "the question in the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "press i to answer") })
			typeKeys("i")
			waitFor(t, "the form", 10*time.Second, asked)
			back := count("press i to answer")
			typeKeys("\x1b")
			waitFor(t, "the task again", 10*time.Second, back)
			if n := countMethod(rec, "tasks/update"); n != 0 {
				t.Fatalf("esc sent %d tasks/update", n)
			}
			asked = count("Name (required)")
			typeKeys("i")
			waitFor(t, "the form again", 10*time.Second, asked)
			typeKeys("Ada\r")
			select {
			case c := <-code:
				if c != ExitOK {
					t.Fatalf("exit %d, want 0: the task must have kept waiting for the answer", c)
				}
			case <-ctx.Done():
				t.Fatalf("the view never ended")
			}
			if !strings.Contains(out.String(), "Hello, Ada!") {
				t.Errorf("the result is missing")
			}
			if era == "2026-07-28" && countMethod(rec, "tasks/update") != 1 {
				t.Errorf("want exactly one tasks/update, got methods %v", rec.Methods())
			}
		})
	}
}

// TestConfirmOnTerminal: a 2026-07-28 tool that answers tools/call with input_required (MRTR)
// gets its question asked in the terminal, then is called again with the answer.
func TestConfirmOnTerminal(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	typeKeys, out, errOut, code := runOnTerminal(t, ctx, "call", "confirm", "--server", url)
	defer func() {
		if t.Failed() {
			t.Logf("stdout %q\nstderr %s", out.String(), errOut.String())
		}
	}()
	waitFor(t, "the question", 10*time.Second, func() bool { return strings.Contains(out.String(), "Proceed?") })
	typeKeys("k\r") // ok is a yes/no select on no, the safe choice; k moves up to yes
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d\nstdout %q\nstderr %s", c, out.String(), errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("never ended:\n%q", out.String())
	}
	if !strings.Contains(out.String(), "confirmed") || countMethod(rec, "tools/call") != 2 {
		t.Errorf("stdout %q, methods %v", out.String(), rec.Methods())
	}
}

// runOnTerminal starts mcptask as if on a 100x30 terminal and returns a way to type into it.
func runOnTerminal(t *testing.T, ctx context.Context, args ...string) (type_ func(string), out *lockedBuffer, errOut *lockedBuffer, code <-chan int) {
	t.Helper()
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out, errOut = &lockedBuffer{}, &lockedBuffer{}
	ios := &IOStreams{In: inR, Out: out, ErrOut: errOut}
	ios.SetTTY(true, true, true)
	ios.SetSize(100, 30)
	f := NewFactory(ios)
	f.Getenv = func(k string) string {
		switch k {
		case "MCPTASK_STATE":
			return testLedger(t)
		case "NO_COLOR":
			return "1"
		}
		return ""
	}
	c := make(chan int, 1)
	go func() { c <- Run(ctx, f, args) }()
	return func(s string) { _, _ = io.WriteString(inW, s) }, out, errOut, c
}

// TestWatchOnTerminalCancelDetachResume drives the live view against the demo server: cancel a
// task from the keyboard (c, y), detach from another (q: exit 130, task kept), then resume it.
func TestWatchOnTerminalCancelDetachResume(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	r := runCLI(t, ctx, nil, "call", "forever", "--detach", "--server", url)
	a := strings.TrimSpace(r.Stdout)
	r = runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=20", "--detach", "--server", url)
	b := strings.TrimSpace(r.Stdout)

	typeKeys, out, errOut, code := runOnTerminal(t, ctx, "watch", a)
	waitFor(t, "the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "next poll") })
	typeKeys("c")
	waitFor(t, "the confirmation", 10*time.Second, func() bool { return strings.Contains(out.String(), "(y/n)") })
	typeKeys("y")
	if c := <-code; c != ExitCancelled {
		t.Fatalf("watch after cancelling from the keyboard: exit %d, want %d\n%s", c, ExitCancelled, errOut.String())
	}

	typeKeys, out, errOut, code = runOnTerminal(t, ctx, "watch", b)
	waitFor(t, "the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "next poll") })
	typeKeys("q")
	if c := <-code; c != ExitInterrupted || !strings.Contains(errOut.String(), "mcptask resume") {
		t.Fatalf("detach: exit %d, want %d, with the resume command\n%s", c, ExitInterrupted, errOut.String())
	}
	if recs := ledgerRecords(t, testLedger(t)); len(recs) == 0 {
		t.Fatal("a detached task must stay in the ledger")
	}
	res := runCLI(t, ctx, nil, "resume", b)
	if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept 20 seconds") {
		t.Fatalf("resume after detach: %d %q %s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestWatchOnTerminalByPush: the live view takes 2026-07-28 push updates and says so; the
// task's 30 s poll interval would otherwise keep it waiting.
func TestWatchOnTerminalByPush(t *testing.T) {
	url, _ := demoServer(t, demo.Options{PollInterval: 30 * time.Second, StepDelay: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=5", "--detach", "--server", url, "--protocol", "2026-07-28")
	id := strings.TrimSpace(r.Stdout)
	start := time.Now()
	_, out, errOut, code := runOnTerminal(t, ctx, "watch", id)
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d\n%s", c, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("the view never ended:\n%q", out.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s; the push should have ended it", took)
	}
	if !strings.Contains(out.String(), "(by push)") || !strings.Contains(out.String(), "slept 5 seconds") {
		t.Errorf("the view does not show the pushed update:\n%q", out.String())
	}
}

// TestResultOnTerminal: `mcptask result ID` on a terminal shows the live view, as call, watch
// and resume do (before, it printed plain progress lines), takes its keys (here c and y cancel
// the task from the keyboard), and prints the outcome after the view. Piped it prints the
// result and nothing of the view.
func TestResultOnTerminal(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	r := runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", url)
	done := strings.TrimSpace(r.Stdout)
	r = runCLI(t, ctx, nil, "call", "forever", "--detach", "--server", url)
	forever := strings.TrimSpace(r.Stdout)

	_, out, errOut, code := runOnTerminal(t, ctx, "result", done)
	if c := <-code; c != ExitOK || !strings.Contains(out.String(), "q detach") || !strings.Contains(out.String(), "sleep · task "+done) {
		t.Fatalf("result on a terminal: exit %d, want 0 after the live view\nstdout %q\nstderr %s", c, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "slept 1 second") {
		t.Errorf("the result is not printed after the view:\n%q", out.String())
	}

	typeKeys, out, errOut, code := runOnTerminal(t, ctx, "result", forever)
	waitFor(t, "the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "c cancel task") })
	typeKeys("c")
	waitFor(t, "the confirmation", 10*time.Second, func() bool { return strings.Contains(out.String(), "(y/n)") })
	typeKeys("y")
	if c := <-code; c != ExitCancelled || countMethod(rec, "tasks/cancel") != 1 {
		t.Fatalf("result, cancelled from the keyboard: exit %d, want %d; methods %v\n%s", c, ExitCancelled, rec.Methods(), errOut.String())
	}

	r = runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", url)
	r = runCLI(t, ctx, nil, "result", strings.TrimSpace(r.Stdout))
	if r.Code != ExitOK || r.Stdout != "slept 1 second\n" {
		t.Errorf("piped: exit %d, stdout %q; want only the result\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
