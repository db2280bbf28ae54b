package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// outcome turns a finished (or abandoned) task into output and an exit code. The same rules
// serve call, result and resume so that a script sees one contract.
type outcome struct {
	f   *Factory
	c   *rpc.Client
	ref ServerRef
	// w and emit redirect stdout and --json documents; resume collects many tasks' outcomes
	// into one document. Nil means straight to stdout.
	w    io.Writer
	emit func(envelope) error
}

func (o *outcome) stdout() io.Writer {
	if o.w != nil {
		return o.w
	}
	return o.f.IO.Out
}

func (o *outcome) emitJSON(e envelope) error {
	if o.emit != nil {
		return o.emit(e)
	}
	return writeJSON(o.f.IO.Out, e)
}

// follow polls t to its end and reports it. wctx carries --timeout; ctx is the command's own
// context (cancelled by SIGINT).
func (o *outcome) follow(wctx, ctx context.Context, t *rpc.Task, po pollOptions, printer *progressPrinter, timeout time.Duration) error {
	po.OnChange = func(nt *rpc.Task) {
		printer.Task(nt)
		o.saveStatus(ctx, nt)
	}
	po.OnPoll = func(nt *rpc.Task) { printer.Heartbeat(nt) }
	po.OnRetry = func(err error, n int, d time.Duration) {
		printer.Note(t.TaskID, fmt.Sprintf("poll failed (%v); retrying in %s", err, d.Round(100*time.Millisecond)))
	}
	last, err := waitTask(wctx, o.c, t, po)
	if err != nil {
		return o.abandoned(ctx, wctx, last, err, timeout)
	}
	return o.finish(ctx, last)
}

// abandoned explains why the wait ended before the task did.
func (o *outcome) abandoned(ctx, wctx context.Context, t *rpc.Task, err error, timeout time.Duration) error {
	hint := o.followHint(t.TaskID)
	switch {
	case errors.Is(err, errStillRunning):
		return &ExitError{Code: ExitStillRunning, Err: fmt.Errorf("task %s is still %s (--timeout 0 checks once); follow it with: %s", t.TaskID, t.Status, hint)}
	case errors.Is(context.Cause(wctx), errTimeout):
		return &ExitError{Code: ExitTimeout, Err: fmt.Errorf("timeout after %s: task %s is still %s and keeps running; follow it with: %s", timeout, t.TaskID, t.Status, hint)}
	case ctx.Err() != nil:
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: task %s keeps running; follow it with: %s", t.TaskID, hint)}
	case errors.Is(err, errTaskGone):
		o.markExpired(t.TaskID)
		return &ExitError{Code: ExitExpired, Err: fmt.Errorf("task %s: %w", t.TaskID, err)}
	}
	return fmt.Errorf("task %s: %w; it may still be running: %s", t.TaskID, err, hint)
}

// finish reports a task whose wait is over: terminal, or needing input.
func (o *outcome) finish(ctx context.Context, t *rpc.Task) error {
	switch t.Status {
	case rpc.StatusInputRequired:
		if o.f.Global.JSON {
			_ = o.emitJSON(o.env("input_required", t))
		}
		what := "the server will ask for it"
		if len(t.InputRequests) > 0 {
			what = describeInputs(t.InputRequests, sortedKeys(t.InputRequests))
		}
		return &ExitError{Code: ExitInputRequired, Err: fmt.Errorf("task %s needs input (%s); mcptask cannot answer input requests yet; the task keeps waiting: %s",
			t.TaskID, what, o.followHint(t.TaskID))}
	case rpc.StatusCancelled:
		o.dropRecord(ctx, t.TaskID)
		if o.f.Global.JSON {
			_ = o.emitJSON(o.env("result", t))
		}
		return &ExitError{Code: ExitCancelled, Err: fmt.Errorf("task %s was cancelled", t.TaskID)}
	}
	tr, rerr, err := o.fetchResult(ctx, t)
	if err != nil {
		return err
	}
	o.dropRecord(ctx, t.TaskID)
	if rerr != nil {
		if o.f.Global.JSON {
			e := o.env("result", t)
			e.Status = rpc.StatusFailed
			e.Error = rerr
			_ = o.emitJSON(e)
		}
		return &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("task %s failed: %w", t.TaskID, rerr)}
	}
	return o.toolResult(tr, t)
}

// fetchResult gets the outcome of a terminal task: 2025-11-25 tasks/result, 2026-07-28 the
// inline result or error of tasks/get (EXT §Task Polling). A JSON-RPC error as the task's
// outcome comes back as rerr, distinct from a failure to fetch.
func (o *outcome) fetchResult(ctx context.Context, t *rpc.Task) (*rpc.ToolResult, *rpc.Error, error) {
	if o.c.Era() == rpc.EraModern {
		if t.Result == nil && t.Error == nil {
			// A CreateTaskResult that is already terminal carries no result (EXT §Task
			// Creation): ask tasks/get for it.
			nt, err := o.c.GetTask(ctx, t.TaskID)
			if err != nil {
				return nil, nil, err
			}
			*t = *nt
		}
		tr, _, err := rpc.ModernResult(t)
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			return nil, rerr, nil
		}
		return tr, nil, err
	}
	tr, _, err := o.c.TaskResult(ctx, t.TaskID)
	var rerr *rpc.Error
	if errors.As(err, &rerr) && !rpc.IsUnknownTask(err) {
		// C25-TASKS §Result Retrieval: tasks/result returns the underlying JSON-RPC error.
		return nil, rerr, nil
	}
	if rpc.IsUnknownTask(err) {
		o.markExpired(t.TaskID)
		return nil, nil, &ExitError{Code: ExitExpired, Err: fmt.Errorf("task %s: %w: %w", t.TaskID, errTaskGone, err)}
	}
	return tr, nil, err
}

// toolResult prints a CallToolResult and maps isError to exit 3. t is nil for a plain result.
func (o *outcome) toolResult(tr *rpc.ToolResult, t *rpc.Task) error {
	if o.f.Global.JSON {
		e := envelope{Type: "result", Era: o.c.Era(), Server: o.ref.String(), Result: tr.Raw}
		if t != nil {
			e.TaskID, e.Status, e.Task = t.TaskID, t.Status, stripInline(t)
		}
		if err := o.emitJSON(e); err != nil {
			return err
		}
	} else {
		printToolResult(o.stdout(), tr)
	}
	if tr.IsError {
		what := "the tool"
		if t != nil {
			what = "task " + t.TaskID
		}
		return &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("%s returned an error result (isError)", what)}
	}
	return nil
}

// env builds the --json envelope of a task.
func (o *outcome) env(typ string, t *rpc.Task) envelope {
	return envelope{Type: typ, TaskID: t.TaskID, Status: t.Status, Era: o.c.Era(), Server: o.ref.String(), Task: t.Raw, Input: t.InputRequests}
}

// stripInline returns the task's wire object; the 2026-07-28 inline result is already in the
// envelope's result, but the task object is kept as sent so nothing is lost.
func stripInline(t *rpc.Task) []byte { return t.Raw }

// followHint is the command that picks a task up again.
func (o *outcome) followHint(id string) string {
	return followHint(o.ref, id)
}

func followHint(ref ServerRef, id string) string {
	// The ledger knows the server; the flags are spelled out anyway so that the hint also
	// works from another machine or ledger.
	return "mcptask result " + id + " " + serverFlags(ref)
}

// serverFlags renders the flags that reach ref again, secrets left as references.
func serverFlags(ref ServerRef) string {
	var parts []string
	if ref.URL != "" {
		parts = append(parts, "--server "+shellQuote(ref.URL))
	} else {
		parts = append(parts, "--stdio "+shellQuote(strings.Join(quoteAll(ref.Argv), " ")))
	}
	for _, h := range ref.HeaderNames {
		parts = append(parts, "--header "+shellQuote(h+": …"))
	}
	if ref.BearerEnv != "" {
		parts = append(parts, "--bearer-env "+ref.BearerEnv)
	}
	return strings.Join(parts, " ")
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = shellQuote(a)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
