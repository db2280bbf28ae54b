package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// An outcome of the follow engine becomes output and an exit code here. The same rules serve
// call, result, watch and resume, plain and live, so that a script sees one contract.

// describe is output.Describe with the exit code on cmd's error types (see exitErr).
func describe(o follow.Outcome, ref ServerRef, timeout time.Duration) (*envelope, []byte, error) {
	env, text, code, err := output.Describe(o, ref, timeout)
	return env, text, exitErr(code, err)
}

// exitErr gives err the exit code chosen for it: a usage error for ExitUsage, none (0) leaves
// the code to err itself.
func exitErr(code int, err error) error {
	switch {
	case err == nil || code == ExitOK:
		return err
	case code == ExitUsage:
		return &FlagError{Err: err}
	}
	return &ExitError{Code: code, Err: err}
}

// reporter is the sink that shows each task's outcome as its follow ends: the result on
// stdout (text, or the --json envelope), the exit code. For watch and resume (many) each
// result gets a header, each failure a note, and --json one document at the end; the live view
// (hold) keeps the outcomes until the view is gone.
type reporter struct {
	f       *Factory
	kind    string
	timeout time.Duration
	many    bool
	hold    bool
	printer *output.Progress

	mu      sync.Mutex
	results []envelope
	codes   []int
	err     error // the one task's (call, result)
}

func newReporter(f *Factory, kind string, timeout time.Duration, many bool) *reporter {
	f.wf.setTimeout(timeout)
	return &reporter{f: f, kind: kind, timeout: timeout, many: many}
}

// server records how the tasks of server name are reached again, for the hints.
func (r *reporter) server(name string, ref ServerRef) { r.f.wf.server(name, ref) }

// Event implements follow.Sink.
func (r *reporter) Event(ev follow.Event) {
	if ev.Kind != follow.KindResult || r.hold {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.show(*ev.Outcome)
}

func (r *reporter) show(o follow.Outcome) {
	p := r.f.printer()
	env, text, err := describe(o, r.f.wf.ref(o.Server), r.timeout)
	if !r.many {
		r.err = err
		if env != nil || !p.JSON() {
			_ = p.Print(env, writeText(text))
		}
		return
	}
	e := taskEnvelope(o, env, err)
	r.codes = append(r.codes, *e.Code)
	r.note(o, err, p.JSON())
	switch {
	case p.Stream():
		if e.Type == "status" {
			e.Type = "result"
		}
		_ = p.Print(e, nil) // each outcome as it comes
	case p.JSON():
		r.results = append(r.results, e)
	case len(text) > 0:
		fmt.Fprintf(p.Out, "── task %s (%s): %s\n", termsafe.Line(o.TaskID), termsafe.Line(o.Tool), e.Status)
		_, _ = p.Out.Write(text)
	}
}

// note says on the progress lines why a task of many did not end well.
func (r *reporter) note(o follow.Outcome, err error, json bool) {
	switch {
	case r.printer == nil:
	case o.Unreachable && isUntrustedRecord(err):
		r.printer.Note(o.TaskID, "skipped: "+err.Error())
	case o.Unreachable:
		r.printer.Note(o.TaskID, "cannot reach "+o.Server+": "+err.Error())
	case err != nil && !json:
		r.printer.Note(o.TaskID, err.Error())
	}
}

// writeText is a Printer's text form that writes b as it is.
func writeText(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// taskEnvelope is output.TaskEnvelope with the exit code err gives.
func taskEnvelope(o follow.Outcome, env *envelope, err error) envelope {
	return output.TaskEnvelope(o, env, exitCode(context.Background(), err), err)
}

// finish ends a run of many tasks: the --json document, the most severe exit code, and a
// message that says what to do next.
func (r *reporter) finish() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.f.printer(); p.Mode == output.JSON {
		results := r.results
		if results == nil {
			results = []envelope{}
		}
		slices.SortFunc(results, func(a, b envelope) int { return strings.Compare(a.TaskID, b.TaskID) })
		if err := p.Print(envelope{Type: r.kind, Tasks: results}, nil); err != nil {
			return err
		}
	}
	code := worstCode(r.codes)
	if code == ExitOK {
		return nil
	}
	var msg string
	switch code {
	case ExitTimeout:
		msg = fmt.Sprintf("timeout after %s; unfinished tasks keep running: mcptask resume", r.timeout)
	case ExitInterrupted:
		msg = "interrupted; unfinished tasks keep running: mcptask resume"
	case ExitStillRunning:
		msg = "tasks still running (--timeout 0 checks once): mcptask resume"
	default:
		msg = fmt.Sprintf("%d of %d task(s) did not complete well", countBad(r.codes), len(r.codes))
	}
	return &ExitError{Code: code, Err: errors.New(msg)}
}

// finishLive reports the tasks of the live view once it is gone, in the order it showed them:
// the results of finished tasks on stdout, an error line for each that did not end well, the
// most severe exit code, and on detach exit 130 with the command that resumes.
func (r *reporter) finishLive(ctx context.Context, ids []string, outs []follow.Outcome) error {
	f := r.f
	byID := make(map[string]follow.Outcome, len(outs))
	for _, o := range outs {
		if _, dup := byID[o.TaskID]; !dup {
			byID[o.TaskID] = o
		}
	}
	var codes []int
	for _, id := range ids {
		o := byID[id]
		_, text, err := describe(o, f.wf.ref(o.Server), r.timeout)
		if (o.End == follow.EndResult || o.End == follow.EndCancelled) && len(ids) > 1 {
			fmt.Fprintf(f.IO.Out, "── task %s (%s): %s\n", termsafe.Line(id), termsafe.Line(o.Tool), o.Task.Status)
		}
		_, _ = f.IO.Out.Write(text)
		code := exitCode(ctx, err)
		if err != nil && code != ExitInterrupted {
			fmt.Fprintf(f.IO.ErrOut, "mcptask: %s\n", f.errorText(err))
		}
		codes = append(codes, code)
	}
	code := worstCode(codes)
	switch code {
	case ExitOK:
		return nil
	case ExitInterrupted:
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("detached; the tasks keep running and stay in the ledger: mcptask resume")}
	}
	return &ExitError{Code: code, Err: fmt.Errorf("%d of %d task(s) did not complete well", countBad(codes), len(codes)), Silent: len(codes) == 1}
}

// usageIfAnswer reports an answer that does not fit its question as a usage error (exit 2).
func usageIfAnswer(err error) error {
	var ae *follow.AnswerError
	if errors.As(err, &ae) {
		return &FlagError{Err: err}
	}
	return err
}
