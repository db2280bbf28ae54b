package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
)

// An outcome of the follow engine becomes output and an exit code in internal/output
// (Describe, Reporter); here it gets cmd's error types, which carry the exit code to Main.

// describe is output.Describe with the exit code on cmd's error types (see exitErr).
func describe(o follow.Outcome, ref ServerRef, timeout time.Duration) (*envelope, []byte, error) {
	env, text, code, err := output.Describe(o, ref, timeout)
	return env, text, exitErr(code, err)
}

// exitErr gives err the exit code chosen for it; judge types err, of an outcome described
// with code, and gives the exit code it means (internal/output).
var (
	exitErr = output.Coded
	judge   = output.Judge
)

// reporter is the sink that shows each task's outcome as its follow ends (output.Reporter).
// With hold set (the live view) it keeps them for finishLive; err is the one task's error
// (call, result), read once the run is over.
type reporter struct {
	*output.Reporter
	f    *Factory
	hold bool
	err  error
}

func newReporter(f *Factory, kind string, timeout time.Duration, many bool) *reporter {
	f.wf.setTimeout(timeout)
	return &reporter{f: f, Reporter: &output.Reporter{P: f.printer(), Kind: kind, Timeout: timeout, Many: many, Ref: f.wf.ends.Ref, Judge: judge}}
}

// server records how the tasks of server name are reached again, for the hints.
func (r *reporter) server(name string, ref ServerRef) { r.f.wf.server(name, ref) }

// Event implements follow.Sink.
func (r *reporter) Event(ev follow.Event) {
	if ev.Kind != follow.KindResult || r.hold {
		return
	}
	if err := r.Show(*ev.Outcome); !r.Many {
		r.err = err // one task: one result
	}
}

// finish ends a run of many tasks: the --json document, the most severe exit code, and a
// message that says what to do next.
func (r *reporter) finish() error {
	code, msg, err := r.Finish()
	if err != nil || code == ExitOK {
		return err
	}
	return &ExitError{Code: code, Err: errors.New(msg)}
}

// finishLive reports the tasks of the live view once it is gone (output.Reporter.ShowLive):
// the most severe exit code, and on detach exit 130 with the command that resumes.
func (r *reporter) finishLive(ctx context.Context, ids []string, outs []follow.Outcome) error {
	codes := r.ShowLive(ctx, ids, outs, r.f.IO.ErrOut, r.f.errorText)
	switch code := worstCode(codes); code {
	case ExitOK:
		return nil
	case ExitInterrupted:
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("detached; the tasks keep running and stay in the ledger: mcptask resume")}
	default:
		return &ExitError{Code: code, Err: fmt.Errorf("%d of %d task(s) did not complete well", countBad(codes), len(codes)), Silent: len(codes) == 1}
	}
}

// writeText is a Printer's text form that writes b as it is.
func writeText(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// usageIfAnswer reports an answer that does not fit its question as a usage error (exit 2).
func usageIfAnswer(err error) error {
	var ae *follow.AnswerError
	if errors.As(err, &ae) {
		return &FlagError{Err: err}
	}
	return err
}
