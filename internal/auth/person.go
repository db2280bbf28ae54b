package auth

import (
	"context"
	"sync"
)

// A Clock is a bound on a wait that a person's own time should not use up: the caller's
// bound on a server's first answer (mcptask's --connect-timeout) must not run out while the
// person logs in at the browser. A context carries it (WithClock); the login pauses it while
// it waits for the authorization response and resumes it after. A hard deadline of the
// context itself (the user's --timeout) is not paused: it counts the login too.
type Clock interface {
	// Pause stops the clock until resume is called.
	Pause() (resume func())
}

type clockKey struct{}

// WithClock returns ctx carrying c, for the login to pause while it waits for a person.
func WithClock(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// pauseClock pauses the Clock ctx carries, if any, and returns what resumes it; calling that
// more than once resumes it once.
func pauseClock(ctx context.Context) (resume func()) {
	if c, ok := ctx.Value(clockKey{}).(Clock); ok && c != nil {
		return sync.OnceFunc(c.Pause())
	}
	return func() {}
}
