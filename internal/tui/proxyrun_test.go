package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// screen is a terminal the test can read while the program draws on it.
type screen struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *screen) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestRunProxy: the events feed hands on reach the screen, and the view ends with its context
// without an error; a feed still sending after that is not stuck.
func TestRunProxy(t *testing.T) {
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &screen{}
	ctx, cancel := context.WithCancel(t.Context())
	fed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- RunProxy(ctx, ProxyOptions{Listen: "http://127.0.0.1:7070/mcp", Upstream: "https://up.example/mcp", NoColor: true, DisableClock: true},
			ProxyScreen{In: inR, Out: out, Width: 100, Height: 30}, func(send func(ProxyEvent)) {
				send(ProxyEvent{Kind: "created", Time: time.Now(), Host: "h", TaskID: "tk1", Tool: "build", Status: "working"})
				<-ctx.Done()
				send(ProxyEvent{Kind: "status", Time: time.Now(), TaskID: "tk1", Status: "completed"}) // after the end
				close(fed)
			})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "1 task (1 running)") {
		if time.Now().After(deadline) {
			t.Fatalf("the fed task never reached the screen:\n%s", out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "127.0.0.1:7070") || !strings.Contains(out.String(), "tk1") {
		t.Errorf("the screen does not show the endpoint and the task:\n%s", out)
	}
	cancel()
	select {
	case <-fed:
	case <-time.After(10 * time.Second):
		t.Fatal("a send after the view ended blocked")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunProxy ended with its context: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunProxy did not end with its context")
	}
}
