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
	inR, inW := io.Pipe()
	defer inW.Close()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
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
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- Run(ctx, f, []string{"call", "ask", "--server", url, "--protocol", era}) }()
	defer func() {
		if t.Failed() {
			t.Logf("stdout: %q\nstderr: %s", out.String(), errOut.String())
		}
	}()
	waitFor(t, "the question in the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "press i to answer") })
	_, _ = io.WriteString(inW, "i")
	waitFor(t, "the form", 10*time.Second, func() bool { return strings.Contains(out.String(), "Name*") })
	_, _ = io.WriteString(inW, "Ada\r")
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

// TestConfirmOnTerminal: a 2026-07-28 tool that answers tools/call with input_required (MRTR)
// gets its question asked in the terminal, then is called again with the answer.
func TestConfirmOnTerminal(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
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
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- Run(ctx, f, []string{"call", "confirm", "--server", url}) }()
	defer func() {
		if t.Failed() {
			t.Logf("stdout %q\nstderr %s", out.String(), errOut.String())
		}
	}()
	waitFor(t, "the question", 10*time.Second, func() bool { return strings.Contains(out.String(), "Proceed?") })
	_, _ = io.WriteString(inW, "yes\r")
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
