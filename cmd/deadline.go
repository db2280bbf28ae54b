package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// How long mcptask waits, and for what (issue 20, class 7: a server may not hold mcptask up).
//
//   - --timeout, where a command has it, is one deadline that starts when the command starts
//     (Factory.deadline) and bounds everything after: connecting, TLS, OAuth (metadata,
//     registration, refresh and an interactive login alike), the opening handshake, and the
//     calls and follow after them. Reached, it exits 124.
//   - Without it, a server's first answer is still bounded: --connect-timeout
//     ($MCPTASK_CONNECT_TIMEOUT, default DefaultConnectTimeout) bounds connecting and the
//     opening (server/discover, initialize, OAuth discovery and refresh, a stdio child's
//     handshake) and the one request of the commands that never wait (get, cancel without
//     --wait, list --remote, result's first look). A person logging in at the browser pauses
//     it (auth.Clock): that is their time, and the login has its own bound. A server silent
//     past it ends the command with exit 1 and a message that names it and what was awaited.
//   - A task being followed keeps its own per-poll bound (follow.DefaultRequestTimeout), and
//     push streams are long-lived by design: neither is cut by --connect-timeout.

// DefaultConnectTimeout bounds a server's first answer when the user set no other: long
// enough for a cold start of a real server (a container, npx fetching a package), short
// enough that a CI job does not hang on a server that accepted the connection and went
// silent.
const DefaultConnectTimeout = 30 * time.Second

// deadline is when a --timeout of d, counted from the start of the command, runs out (zero:
// never).
func (f *Factory) deadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	start := f.started
	if start.IsZero() {
		start = time.Now()
	}
	return start.Add(d)
}

// NoAnswerError is a server that did not answer within --connect-timeout.
type NoAnswerError struct {
	// Server is the server as the user knows it (URL or stdio command).
	Server string
	// Waiting names what was awaited: a request (server/discover, initialize, tasks/get) or
	// "the connection".
	Waiting string
	// After is the bound that ran out.
	After time.Duration
	// Detail says more when it helps (the wait ended during OAuth).
	Detail string
}

func (e *NoAnswerError) Error() string {
	msg := fmt.Sprintf("%s did not answer %s within %s", e.Server, e.Waiting, e.After)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg + "; check that it is a running MCP server, or wait longer with --connect-timeout"
}

// noAnswerCause ends an answerContext when its bound runs out.
type noAnswerCause struct{ d time.Duration }

func (c *noAnswerCause) Error() string { return fmt.Sprintf("no answer within %s", c.d) }

// answerContext returns ctx bounded by --connect-timeout, for a wait for the first answer of
// a server: connecting and its opening, or the one request of a command that never waits.
// A login at the browser pauses the bound (auth.Clock). stop releases it.
func (f *Factory) answerContext(ctx context.Context) (actx context.Context, stop func()) {
	d := f.Global.ConnectTimeout
	if d <= 0 {
		return ctx, func() {}
	}
	actx, cancel := context.WithCancelCause(ctx)
	clock := newPausableTimer(d, func() { cancel(&noAnswerCause{d: d}) })
	return auth.WithClock(actx, clock), func() {
		clock.stop()
		cancel(nil)
	}
}

// answerErr explains err, with which a wait for ref's answer under actx (an answerContext, or
// a context with the command's --timeout) ended: the server silent past --connect-timeout
// (exit 1), or the command's --timeout reached (exit 124). what is the request awaited when
// err does not name it. Any other err comes back as it is.
func answerErr(actx context.Context, ref ServerRef, what string, err error) error {
	if err == nil || actx.Err() == nil {
		return err
	}
	detail := ""
	var na *rpc.NoAnswerError
	if errors.As(err, &na) {
		what = na.Method
	}
	if s := err.Error(); strings.Contains(s, "during OAuth") {
		detail = "the wait ended during OAuth, at the authorization server or its metadata"
	}
	cause := context.Cause(actx)
	var nc *noAnswerCause
	switch {
	case errors.As(cause, &nc):
		return &ExitError{Code: ExitFailure, Err: &NoAnswerError{Server: ref.String(), Waiting: what, After: nc.d, Detail: detail}}
	case errors.Is(cause, errTimeout):
		msg := fmt.Sprintf("timeout reached: %s had not answered %s", ref, what)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return &ExitError{Code: ExitTimeout, Err: errors.New(msg)}
	}
	return err
}

// withDeadline returns ctx bounded by deadline (none when zero), with errTimeout as the cause.
func withDeadline(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadlineCause(ctx, deadline, errTimeout)
}

// pausableTimer calls fire once d has elapsed, not counting the time it spent paused. It is
// the auth.Clock of an answerContext.
type pausableTimer struct {
	mu      sync.Mutex
	t       *time.Timer
	left    time.Duration
	since   time.Time
	paused  int
	fired   bool
	stopped bool
}

func newPausableTimer(d time.Duration, fire func()) *pausableTimer {
	p := &pausableTimer{left: d, since: time.Now()}
	p.t = time.AfterFunc(d, func() {
		p.mu.Lock()
		p.fired = true
		p.mu.Unlock()
		fire()
	})
	return p
}

// Pause implements auth.Clock.
func (p *pausableTimer) Pause() (resume func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == 0 && !p.fired && !p.stopped && p.t.Stop() {
		p.left -= time.Since(p.since)
	}
	p.paused++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.paused--
		if p.paused == 0 && !p.fired && !p.stopped {
			p.since = time.Now()
			p.t.Reset(max(p.left, 0))
		}
	}
}

func (p *pausableTimer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.t.Stop()
}

// guard is the follow.Guard of the server ref: each wait for an answer is bounded by
// --connect-timeout (answerContext) and a wait that ended is explained (answerErr).
func (f *Factory) guard(ref ServerRef) follow.Guard {
	return func(ctx context.Context, what string, req func(context.Context) error) error {
		actx, stop := f.answerContext(ctx)
		err := req(actx)
		stop()
		return answerErr(actx, ref, what, err)
	}
}
