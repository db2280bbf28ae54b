package connect

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeadline: --timeout counts from the start of the command, not from when a wait begins;
// no --timeout is no deadline, and a context past it ends with ErrTimeout as its cause.
func TestDeadline(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := Deadline(start, 5*time.Second); !got.Equal(start.Add(5 * time.Second)) {
		t.Errorf("Deadline = %v, want start+5s", got)
	}
	if got := Deadline(start, 0); !got.IsZero() {
		t.Errorf("Deadline without --timeout = %v, want none", got)
	}
	ctx, cancel := WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), ErrTimeout) {
		t.Errorf("cause %v, want ErrTimeout", context.Cause(ctx))
	}
}
