package cmd

import (
	"context"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
)

// How long mcptask waits, and for what, is internal/connect's (timeout.go): --timeout is one
// deadline from the start of the command, --connect-timeout bounds a server's first answer.

// deadline is when a --timeout of d, counted from the start of the command, runs out (zero:
// never).
func (f *Factory) deadline(d time.Duration) time.Time { return connect.Deadline(f.started, d) }

// withDeadline returns ctx bounded by deadline (none when zero), with errTimeout as the cause.
var withDeadline = connect.WithDeadline

// answerContext returns ctx bounded by --connect-timeout, for a wait for the first answer of
// a server (connect.AnswerContext). stop releases it.
func (f *Factory) answerContext(ctx context.Context) (actx context.Context, stop func()) {
	return connect.AnswerContext(ctx, f.Global.ConnectTimeout)
}

// answerErr explains err, with which a wait for ref's answer under actx ended, with its exit
// code (connect.AnswerErr). Any other err comes back as it is.
func answerErr(actx context.Context, ref ServerRef, what string, err error) error {
	if aerr := connect.AnswerErr(actx, ref, what, err); aerr != err {
		return connErr(aerr)
	}
	return err
}

// guard is the follow.Guard of the server ref: each wait for an answer is bounded by
// --connect-timeout and a wait that ended is explained (connect.Ask).
func (f *Factory) guard(ref ServerRef) follow.Guard {
	return func(ctx context.Context, what string, req func(context.Context) error) error {
		return connErr(connect.Ask(ctx, f.Global.ConnectTimeout, ref, what, req))
	}
}
