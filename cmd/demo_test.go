package cmd

import (
	"context"
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
