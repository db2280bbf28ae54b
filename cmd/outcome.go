package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// An outcome of the follow engine becomes output and an exit code here. The same rules serve
// call, result, watch and resume, plain and live, so that a script sees one contract.

// describe turns how a task's follow ended into what is shown: the --json envelope (nil when
// there is none), the text for stdout, and the error that carries the exit code (nil: 0).
func describe(o follow.Outcome, ref ServerRef, timeout time.Duration) (*envelope, []byte, error) {
	t := o.Task
	if t == nil {
		t = &rpc.Task{TaskID: o.TaskID}
	}
	id, hint := o.TaskID, followHint(ref, o.TaskID)
	env := func(typ string) *envelope {
		return &envelope{Type: typ, TaskID: id, Status: t.Status, Era: o.Era, Server: o.Server, Task: t.Raw, Input: t.InputRequests}
	}
	switch o.End {
	case follow.EndResult:
		switch {
		case o.RPCError != nil:
			e := env("result")
			e.Status, e.Error = rpc.StatusFailed, o.RPCError
			return e, nil, &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("task %s failed: %w", id, o.RPCError)}
		case o.Result == nil:
			return nil, nil, nil // left for 'mcptask result' (cancel --wait)
		}
		return resultOutput(o.Result, t, o.Era, o.Server)
	case follow.EndCancelled:
		return env("result"), nil, &ExitError{Code: ExitCancelled, Err: fmt.Errorf("task %s was cancelled", id)}
	case follow.EndInputRequired:
		var text []byte
		if len(t.InputRequests) > 0 {
			// --on-input fail: the outstanding questions (keys, kinds, messages, schemas) as
			// JSON on stdout, so a script can answer them with 'mcptask update'.
			text, _ = json.Marshal(output.InputRequiredEvent{Type: "input_required", TaskID: id, InputRequests: t.InputRequests})
			text = append(text, '\n')
		}
		what := "the server will ask for it"
		if len(t.InputRequests) > 0 {
			what = output.DescribeInputs(t.InputRequests, output.SortedKeys(t.InputRequests))
		}
		return env("input_required"), text, &ExitError{Code: ExitInputRequired, Err: fmt.Errorf("task %s needs input (%s) and no --answer was given for it; the task keeps waiting: answer with 'mcptask update %s --answer KEY=JSON', or watch it on a terminal",
			id, what, id)}
	case follow.EndExpired:
		return nil, nil, &ExitError{Code: ExitExpired, Err: fmt.Errorf("task %s is no longer known to %s (expired, or the server lost it): %w", id, ref, o.Err)}
	case follow.EndStillRunning:
		return nil, nil, &ExitError{Code: ExitStillRunning, Err: fmt.Errorf("task %s is still %s (--timeout 0 checks once); follow it with: %s", id, t.Status, hint)}
	case follow.EndTimeout:
		return nil, nil, &ExitError{Code: ExitTimeout, Err: fmt.Errorf("timeout after %s: task %s is still %s and keeps running; follow it with: %s", timeout, id, t.Status, hint)}
	case follow.EndInterrupted:
		return nil, nil, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: task %s keeps running; follow it with: %s", id, hint)}
	case follow.EndDetached:
		return nil, nil, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("detached: task %s keeps running", id)}
	}
	var ae *follow.AnswerError
	var unanswered *ExitError
	switch {
	case errors.As(o.Err, &ae):
		return nil, nil, &FlagError{Err: o.Err}
	case errors.As(o.Err, &unanswered) && unanswered.Code == ExitInputRequired:
		// --on-input exec: the program gave no usable answer; nothing was sent.
		return env("input_required"), nil, &ExitError{Code: ExitInputRequired, Err: fmt.Errorf("task %s: %w; the task keeps waiting: answer with 'mcptask update %s --answer KEY=JSON', or mend the program and run 'mcptask resume'", id, o.Err, id)}
	case o.Unreachable:
		return nil, nil, o.Err
	}
	return nil, nil, fmt.Errorf("task %s: %w; it may still be running: %s", id, o.Err, hint)
}

// resultOutput is the output of a CallToolResult: the envelope, the text, and exit 3 for
// isError. t is nil for a plain result (no task).
func resultOutput(tr *rpc.ToolResult, t *rpc.Task, era rpc.Era, server string) (*envelope, []byte, error) {
	e := &envelope{Type: "result", Era: era, Server: server, Result: tr.Raw}
	if t != nil {
		e.TaskID, e.Status, e.Task = t.TaskID, t.Status, t.Raw
	}
	var b bytes.Buffer
	output.ToolResult(&b, tr)
	if tr.IsError {
		what := "the tool"
		if t != nil {
			what = "task " + t.TaskID
		}
		return e, b.Bytes(), &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("%s returned an error result (isError)", what)}
	}
	return e, b.Bytes(), nil
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

// taskEnvelope is one task's entry in a many-task --json document, a --jsonl result event
// and an --on-complete command's stdin: describe's envelope (or the task's status when there
// is none), with the task's exit code and error.
func taskEnvelope(o follow.Outcome, env *envelope, err error) envelope {
	code := exitCode(context.Background(), err)
	e := envelope{Type: "status", TaskID: o.TaskID, Tool: o.Tool, Era: o.Era, Server: o.Server}
	if o.Task != nil {
		e.Status = o.Task.Status
	}
	if env != nil {
		e = *env
		e.Tool = o.Tool
	}
	if o.Unreachable {
		e.Type = "error"
	}
	e.Code = &code
	if err != nil {
		e.Message = redact.Text(err.Error())
		if code == ExitExpired {
			e.Status = taskstatus.Expired
		}
	}
	return e
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

// severity orders exit codes for a many-task outcome: the first in this list that occurs wins.
var severity = []int{ExitInterrupted, ExitTimeout, ExitUsage, ExitFailure, ExitAuth, ExitTaskFailed, ExitCancelled, ExitInputRequired, ExitExpired, ExitStillRunning, ExitOK}

// worstCode returns the most severe of codes.
func worstCode(codes []int) int {
	best := len(severity)
	for _, c := range codes {
		i := slices.Index(severity, c)
		if i < 0 {
			i = slices.Index(severity, ExitFailure)
		}
		best = min(best, i)
	}
	if best == len(severity) {
		return ExitOK
	}
	return severity[best]
}

func countBad(codes []int) int {
	n := 0
	for _, c := range codes {
		if c != ExitOK {
			n++
		}
	}
	return n
}

// usageIfAnswer reports an answer that does not fit its question as a usage error (exit 2).
func usageIfAnswer(err error) error {
	var ae *follow.AnswerError
	if errors.As(err, &ae) {
		return &FlagError{Err: err}
	}
	return err
}
