package cmd

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoStaysOnLoopback plays a user who, copying a recipe, serves the demo on every
// interface: the demo has no authentication, so it refuses (exit 2, with the fix), and only
// --allow-remote makes it listen there, with a warning.
func TestDemoStaysOnLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		r := runCLI(t, ctx, nil, "demo", "serve", "--addr", addr)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, "not a loopback address") || !strings.Contains(r.Stderr, "--allow-remote") {
			t.Fatalf("demo serve --addr %s: exit %d, stderr %q; want exit 2 naming --allow-remote", addr, r.Code, r.Stderr)
		}
	}
	if r := runCLI(t, ctx, nil, "demo", "serve", "--addr", "127.0.0.1:0", "--exit-after", "1", "--stdio"); r.Code != ExitOK {
		t.Fatalf("stdio demo: exit %d, %s", r.Code, r.Stderr)
	}

	// With --allow-remote it listens, and says what that means.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errOut := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		io := &IOStreams{In: strings.NewReader(""), Out: &lockedBuffer{}, ErrOut: errOut}
		f := NewFactory(io)
		f.Getenv = func(k string) string { return "" }
		done <- Run(runCtx, f, []string{"demo", "serve", "--addr", "0.0.0.0:0", "--allow-remote"})
	}()
	for !strings.Contains(errOut.String(), "listening on") {
		select {
		case code := <-done:
			t.Fatalf("demo serve --allow-remote ended with %d: %s", code, errOut.String())
		case <-ctx.Done():
			t.Fatalf("demo serve --allow-remote never listened: %s", errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if !strings.Contains(errOut.String(), "Warning") || !strings.Contains(errOut.String(), "without authentication") {
		t.Errorf("no warning: %s", errOut.String())
	}
	stop()
	if code := <-done; code != ExitOK {
		t.Errorf("interrupted demo exited %d", code)
	}
}

// TestDemoSaysWhatNext: `mcptask demo` run by a person ends with commands to try next, each
// against a demo server on the address the demo itself used (so the URL shown is the one the
// suggested `demo serve` will listen on); on a pipe the output is the call's alone.
func TestDemoSaysWhatNext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, out, errOut, code := runOnTerminal(t, ctx, "demo", "--seconds", "1")
	if c := <-code; c != ExitOK {
		t.Fatalf("demo on a terminal: exit %d\n%s", c, errOut.String())
	}
	m := regexp.MustCompile(`listening on (http://(127\.0\.0\.1:\d+)/mcp)`).FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("the demo does not say where it listens:\n%s", errOut.String())
	}
	for _, want := range []string{"mcptask demo serve --addr " + m[2] + "\n", "mcptask call ask --server " + m[1] + "\n", "mcptask resume\n"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the next steps lack %q:\n%s", want, errOut.String())
		}
	}
	if strings.Contains(out.String(), "To try more") {
		t.Errorf("the next steps went to stdout, with the result")
	}
	r := runCLI(t, ctx, nil, "demo", "--seconds", "1")
	if r.Code != ExitOK || strings.Contains(r.Stderr, "To try more") || r.Stdout != "slept 1 second\n" {
		t.Errorf("piped demo: exit %d, stdout %q, stderr %q; want the result alone and no next steps", r.Code, r.Stdout, r.Stderr)
	}
}
