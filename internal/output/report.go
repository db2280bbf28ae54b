package output

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Reporter shows each task's outcome as its follow ends: the result on stdout (text, or the
// --json envelope) and the exit code. For many tasks (watch, resume) each result gets a
// header, each failure a note on the progress lines, and --json one document at the end
// (Finish); the live view keeps the outcomes until it is gone (ShowLive).
type Reporter struct {
	P       *Printer
	Kind    string // the --json document's type for many tasks: "watch", "resume"
	Timeout time.Duration
	Many    bool
	// Progress, when set, gets a note for each of many tasks that did not end well.
	Progress *Progress
	// Ref is how the tasks of server name are reached again, for the hints.
	Ref func(name string) connect.Ref
	// Judge types err, of an outcome Describe gave code, as the commands' errors, and gives
	// its exit code (under ctx: an interrupted run).
	Judge func(ctx context.Context, code int, err error) (int, error)

	mu      sync.Mutex
	results []Envelope
	codes   []int
}

// describe is Describe with the error and exit code the commands give it.
func (r *Reporter) describe(ctx context.Context, o follow.Outcome) (*Envelope, []byte, int, error) {
	env, text, code, err := Describe(o, r.Ref(o.Server), r.Timeout)
	code, err = r.Judge(ctx, code, err)
	return env, text, code, err
}

// Show reports outcome o as it comes and returns its error (the one task's, for call and
// result).
func (r *Reporter) Show(o follow.Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	env, text, code, err := r.describe(context.Background(), o)
	text = r.P.ResultText(env, text)
	if !r.Many {
		if env != nil || !r.P.JSON() {
			_ = r.P.Print(env, func(w io.Writer) error { _, err := w.Write(text); return err })
		}
		return err
	}
	e := TaskEnvelope(o, env, code, err)
	r.codes = append(r.codes, code)
	r.note(o, err)
	switch {
	case r.P.Stream():
		if e.Type == "status" {
			e.Type = "result"
		}
		_ = r.P.Print(e, nil) // each outcome as it comes
	case r.P.JSON():
		r.results = append(r.results, e)
	case len(text) > 0:
		fmt.Fprintf(r.P.Out, "── task %s (%s): %s\n", termsafe.Line(o.TaskID), termsafe.Line(o.Tool), e.Status)
		_, _ = r.P.Out.Write(text)
	}
	return err
}

// note says on the progress lines why a task of many did not end well.
func (r *Reporter) note(o follow.Outcome, err error) {
	var untrusted *connect.UntrustedRecordError
	switch {
	case r.Progress == nil:
	case o.Unreachable && errors.As(err, &untrusted):
		r.Progress.Note(o.TaskID, "skipped: "+err.Error())
	case o.Unreachable:
		r.Progress.Note(o.TaskID, "cannot reach "+o.Server+": "+err.Error())
	case err != nil && !r.P.JSON():
		r.Progress.Note(o.TaskID, err.Error())
	}
}

// Finish ends a run of many tasks: the --json document, then the most severe exit code and,
// when it is not 0, a message that says what to do next.
func (r *Reporter) Finish() (code int, msg string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.P.Mode == JSON {
		results := r.results
		if results == nil {
			results = []Envelope{}
		}
		slices.SortFunc(results, func(a, b Envelope) int { return strings.Compare(a.TaskID, b.TaskID) })
		if err := r.P.Print(Envelope{Type: r.Kind, Tasks: results}, nil); err != nil {
			return 0, "", err
		}
	}
	switch code = exitcode.Worst(r.codes); code {
	case exitcode.OK:
	case exitcode.Timeout:
		msg = fmt.Sprintf("timeout after %s; unfinished tasks keep running: mcptask resume", r.Timeout)
	case exitcode.Interrupted:
		msg = "interrupted; unfinished tasks keep running: mcptask resume"
	case exitcode.StillRunning:
		msg = "tasks still running (--timeout 0 checks once): mcptask resume"
	default:
		msg = fmt.Sprintf("%d of %d task(s) did not complete well", exitcode.CountBad(r.codes), len(r.codes))
	}
	return code, msg, nil
}

// ShowLive reports the tasks of the live view once it is gone, in the order it showed them:
// the results of finished tasks on stdout, an error line on errOut (as errorText writes it)
// for each that did not end well, except an interrupted one. It returns each task's exit code.
func (r *Reporter) ShowLive(ctx context.Context, ids []string, outs []follow.Outcome, errOut io.Writer, errorText func(error) string) []int {
	byID := make(map[string]follow.Outcome, len(outs))
	for _, o := range outs {
		if _, dup := byID[o.TaskID]; !dup {
			byID[o.TaskID] = o
		}
	}
	var codes []int
	for _, id := range ids {
		o := byID[id]
		env, text, code, err := r.describe(ctx, o)
		text = r.P.ResultText(env, text)
		if (o.End == follow.EndResult || o.End == follow.EndCancelled) && len(ids) > 1 {
			fmt.Fprintf(r.P.Out, "── task %s (%s): %s\n", termsafe.Line(id), termsafe.Line(o.Tool), o.Task.Status)
		}
		_, _ = r.P.Out.Write(text)
		if err != nil && code != exitcode.Interrupted {
			fmt.Fprintf(errOut, "mcptask: %s\n", errorText(err))
		}
		codes = append(codes, code)
	}
	return codes
}
