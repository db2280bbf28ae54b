package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
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
	// answers pre-answer input requests (--answer, --answers); answered holds the keys
	// already answered, seeded from the ledger so a resumed wait never answers twice.
	answers  answerSet
	answered map[string]bool
	printer  *progressPrinter
	// batch, when set, takes the status updates to write them with other tasks' (resume).
	batch *statusBatch
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
	po.OnPushed = func(nt *rpc.Task) { printer.Pushed(nt.TaskID) }
	po.OnRetry = func(err error, n int, d time.Duration) {
		printer.Note(t.TaskID, fmt.Sprintf("poll failed (%v); retrying in %s", err, d.Round(100*time.Millisecond)))
		printer.Event(map[string]any{"type": "error", "taskId": t.TaskID, "transient": true, "message": err.Error(),
			"retryInMs": d.Milliseconds(), "failures": n})
	}
	o.printer = printer
	if o.answers != nil {
		po.InputDone = o.inputsAnswered
	}
	for {
		last, err := waitTask(wctx, o.c, t, po)
		if err != nil {
			return o.abandoned(ctx, wctx, last, err, timeout)
		}
		if last.Status == rpc.StatusInputRequired && o.answers != nil && o.c.Era() == rpc.EraLegacy {
			// C25-TASKS §Input Required Status: the questions come as elicitation/create while
			// tasks/result is open; the OnRequest handler answers them from --answer. tasks/result
			// returns once the task is terminal.
			if _, _, err := o.c.TaskResult(wctx, last.TaskID); err != nil && !isRPCError(err) {
				return o.abandoned(ctx, wctx, last, err, timeout)
			}
			nt, err := o.c.GetTask(wctx, last.TaskID)
			if err != nil {
				return o.abandoned(ctx, wctx, last, err, timeout)
			}
			printer.Task(nt)
			o.saveStatus(ctx, nt)
			if nt.Status == rpc.StatusInputRequired {
				return o.finish(ctx, nt)
			}
			t = nt
			continue
		}
		if last.Status == rpc.StatusInputRequired && o.answers != nil {
			n, err := o.answerInputs(wctx, last)
			if err != nil {
				return err
			}
			if n > 0 {
				t = last
				continue // poll on; the answered keys no longer stop the wait
			}
		}
		return o.finish(ctx, last)
	}
}

// inputsAnswered reports whether every outstanding input request of t was answered already:
// the server repeats requests until it has processed their answers (EXT §Task Update
// Requests), so the wait goes on.
func (o *outcome) inputsAnswered(t *rpc.Task) bool {
	if len(t.InputRequests) == 0 {
		return false
	}
	for k := range t.InputRequests {
		if !o.answered[k] {
			return false
		}
	}
	return true
}

// answerInputs sends, in one tasks/update, the answers given for t's outstanding input
// requests that were not answered before, and records the keys in the ledger. It returns how
// many it answered.
func (o *outcome) answerInputs(ctx context.Context, t *rpc.Task) (int, error) {
	if o.c.Era() != rpc.EraModern {
		return 0, nil // 2025-11-25 input arrives as elicitation/create on tasks/result
	}
	if o.answered == nil {
		o.answered = map[string]bool{}
	}
	responses := map[string]json.RawMessage{}
	for _, k := range sortedKeys(t.InputRequests) {
		if o.answered[k] {
			continue
		}
		ans, ok := o.answers.lookup(k)
		if !ok {
			continue
		}
		resp, err := response(k, t.InputRequests[k], ans)
		if err != nil {
			return 0, err
		}
		responses[k] = resp
	}
	if len(responses) == 0 {
		return 0, nil
	}
	// EXT §Task Update Requests: inputResponses hold only currently outstanding keys.
	if err := o.c.UpdateTask(ctx, t.TaskID, responses); err != nil {
		return 0, fmt.Errorf("answer task %s: %w", t.TaskID, err)
	}
	keys := sortedKeys(responses)
	for _, k := range keys {
		o.answered[k] = true
	}
	o.recordAnswered(t.TaskID, keys)
	if o.printer != nil {
		o.printer.Note(t.TaskID, "answered "+strings.Join(keys, ", "))
	}
	return len(keys), nil
}

// recordAnswered adds keys to the record's answered keys.
func (o *outcome) recordAnswered(id string, keys []string) {
	o.syncLedger()
	st, err := o.f.ledger()
	if err != nil {
		return
	}
	_ = st.Patch(toServer(o.ref).Key(), id, func(r *state.Record) {
		for _, k := range keys {
			if !slices.Contains(r.AnsweredKeys, k) {
				r.AnsweredKeys = append(r.AnsweredKeys, k)
			}
		}
	})
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
	// The last status is recorded even when no poll saw it change (a task already finished
	// when first asked): a record kept with --keep must say how the task ended.
	o.saveStatus(ctx, t)
	switch t.Status {
	case rpc.StatusInputRequired:
		if o.f.Global.JSON {
			_ = o.emitJSON(o.env("input_required", t))
		} else if len(t.InputRequests) > 0 {
			// --on-input fail: the outstanding questions (keys, kinds, messages, schemas) as
			// JSON on stdout, so a script can answer them with 'mcptask update'.
			_ = writeJSON(o.stdout(), map[string]any{"type": "input_required", "taskId": t.TaskID, "inputRequests": t.InputRequests})
		}
		what := "the server will ask for it"
		if len(t.InputRequests) > 0 {
			what = describeInputs(t.InputRequests, sortedKeys(t.InputRequests))
		}
		return &ExitError{Code: ExitInputRequired, Err: fmt.Errorf("task %s needs input (%s) and no --answer was given for it; the task keeps waiting: answer with 'mcptask update %s --answer KEY=JSON', or watch it on a terminal",
			t.TaskID, what, t.TaskID)}
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

// isRPCError reports whether err is a JSON-RPC error from the server (the task's own outcome
// on tasks/result) rather than a failure to reach it.
func isRPCError(err error) bool {
	var rerr *rpc.Error
	return errors.As(err, &rerr)
}
