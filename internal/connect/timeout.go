package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/rpc"
)

// How long mcptask waits, and for what (issue 20, class 7: a server may not hold mcptask up).
//
//   - --timeout, where a command has it, is one deadline that starts when the command starts
//     (Deadline; ErrTimeout is its cause) and bounds everything after: connecting, TLS, OAuth (metadata,
//     registration, refresh and an interactive login alike), the opening handshake, and the
//     calls and follow after them. Reached, it exits 124.
//   - Without it, a server's first answer is still bounded: --connect-timeout
//     ($MCPTASK_CONNECT_TIMEOUT, default DefaultConnectTimeout, AnswerContext) bounds connecting and the
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

// Deadline is when a --timeout of d, counted from start, the start of the command, runs out
// (zero: never). A zero start counts from now.
func Deadline(start time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	if start.IsZero() {
		start = time.Now()
	}
	return start.Add(d)
}

// WithDeadline returns ctx bounded by deadline (none when zero), with ErrTimeout as the cause.
func WithDeadline(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadlineCause(ctx, deadline, ErrTimeout)
}

// Ask runs req, a wait for an answer of ref (what names it), bounded by d (--connect-timeout,
// AnswerContext), and explains how the wait ended (AnswerErr).
func Ask(ctx context.Context, d time.Duration, ref Ref, what string, req func(context.Context) error) error {
	actx, stop := AnswerContext(ctx, d)
	err := req(actx)
	stop()
	return AnswerErr(actx, ref, what, err)
}

// ErrTimeout is the cause of a context whose command --timeout ran out (exit 124).
var ErrTimeout = errors.New("timeout reached")

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

// TimeoutError is a command's --timeout reached while a server had not answered: it is
// ErrTimeout (exit 124), with what was awaited.
type TimeoutError struct{ Msg string }

func (e *TimeoutError) Error() string        { return e.Msg }
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// noAnswerCause ends an AnswerContext when its bound runs out.
type noAnswerCause struct{ d time.Duration }

func (c *noAnswerCause) Error() string { return fmt.Sprintf("no answer within %s", c.d) }

// AnswerContext returns ctx bounded by d (--connect-timeout; none when d <= 0), for a wait for
// the first answer of a server: connecting and its opening, or the one request of a command
// that never waits. A login at the browser pauses the bound (auth.Clock). stop releases it.
func AnswerContext(ctx context.Context, d time.Duration) (actx context.Context, stop func()) {
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

// AnswerErr explains err, with which a wait for ref's answer under actx (an AnswerContext, or
// a context with the command's --timeout as cause ErrTimeout) ended: the server silent past
// --connect-timeout (a NoAnswerError, exit 1), or the command's --timeout reached (a
// TimeoutError, exit 124). what is the request awaited when err does not name it. Any other
// err comes back as it is.
func AnswerErr(actx context.Context, ref Ref, what string, err error) error {
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
		return &NoAnswerError{Server: ref.String(), Waiting: what, After: nc.d, Detail: detail}
	case errors.Is(cause, ErrTimeout):
		msg := fmt.Sprintf("timeout reached: %s had not answered %s", ref, what)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return &TimeoutError{Msg: msg}
	}
	return err
}

// pausableTimer calls fire once d has elapsed, not counting the time it spent paused. It is
// the auth.Clock of an AnswerContext.
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
