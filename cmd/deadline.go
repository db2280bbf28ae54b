package cmd

import (
	"context"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
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
type NoAnswerError = connect.NoAnswerError

// answerContext returns ctx bounded by --connect-timeout, for a wait for the first answer of
// a server (connect.AnswerContext). stop releases it.
func (f *Factory) answerContext(ctx context.Context) (actx context.Context, stop func()) {
	return connect.AnswerContext(ctx, f.Global.ConnectTimeout)
}

// answerErr explains err, with which a wait for ref's answer under actx ended: the server
// silent past --connect-timeout (exit 1), or the command's --timeout reached (exit 124)
// (connect.AnswerErr). Any other err comes back as it is.
func answerErr(actx context.Context, ref ServerRef, what string, err error) error {
	if aerr := connect.AnswerErr(actx, ref, what, err); aerr != err {
		return connErr(aerr)
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
