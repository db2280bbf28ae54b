package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// An outcome of the follow engine becomes output and an exit code here. The same rules serve
// call, result, watch and resume, plain and live, so that a script sees one contract.

// Describe turns how a task's follow ended into what is shown: the --json envelope (nil when
// there is none), the text for stdout, and the error with its exit code (internal/exitcode).
// A nil error is exit 0; code 0 with an error leaves the code to the error itself (a
// connection failure, say). ref is how the task's server is reached again, for the hints.
func Describe(o follow.Outcome, ref connect.Ref, timeout time.Duration) (env *Envelope, text []byte, code int, err error) {
	t := o.Task
	if t == nil {
		t = &rpc.Task{TaskID: o.TaskID}
	}
	id, hint := o.TaskID, FollowHint(ref, o.TaskID)
	switch o.End {
	case follow.EndResult:
		switch {
		case o.RPCError != nil:
			e := outcomeEnvelope("result", o, t)
			e.Status, e.Error = rpc.StatusFailed, o.RPCError
			return e, nil, exitcode.TaskFailed, fmt.Errorf("task %s failed: %w", id, o.RPCError)
		case o.Result == nil:
			return nil, nil, 0, nil // left for 'mcptask result' (cancel --wait)
		}
		return Result(o.Result, t, o.Era, o.Server)
	case follow.EndCancelled:
		return outcomeEnvelope("result", o, t), nil, exitcode.Cancelled, fmt.Errorf("task %s was cancelled", id)
	case follow.EndInputRequired:
		inputs := openInputs(o, t)
		text, err := unanswered(id, inputs)
		e := outcomeEnvelope("input_required", o, t)
		e.Input = inputs
		return e, text, exitcode.InputRequired, err
	case follow.EndExpired:
		return nil, nil, exitcode.Expired, fmt.Errorf("task %s is no longer known to %s (expired, or the server lost it): %w", id, ref, o.Err)
	case follow.EndStillRunning:
		return nil, nil, exitcode.StillRunning, fmt.Errorf("task %s is still %s (--timeout 0 checks once); follow it with: %s", id, t.Status, hint)
	case follow.EndTimeout:
		return nil, nil, exitcode.Timeout, fmt.Errorf("timeout after %s: task %s is still %s and keeps running; follow it with: %s", timeout, id, t.Status, hint)
	case follow.EndInterrupted:
		return nil, nil, exitcode.Interrupted, fmt.Errorf("interrupted: task %s keeps running; follow it with: %s", id, hint)
	case follow.EndDetached:
		return nil, nil, exitcode.Interrupted, fmt.Errorf("detached: task %s keeps running", id)
	}
	return describeFailure(o, t, hint)
}

// describeFailure is Describe for a follow that ended in an error of its own.
func describeFailure(o follow.Outcome, t *rpc.Task, hint string) (*Envelope, []byte, int, error) {
	id := o.TaskID
	var ae *follow.AnswerError
	var coded interface{ ExitCode() int }
	switch {
	case errors.As(o.Err, &ae):
		return nil, nil, exitcode.Usage, o.Err
	case errors.As(o.Err, &coded) && coded.ExitCode() == exitcode.InputRequired:
		// --on-input exec: the program gave no usable answer; nothing was sent.
		return outcomeEnvelope("input_required", o, t), nil, exitcode.InputRequired, fmt.Errorf("task %s: %w; the task keeps waiting: answer with 'mcptask update %s --answer KEY=JSON', or mend the program and run 'mcptask resume'", id, o.Err, id)
	case o.Unreachable:
		return nil, nil, 0, o.Err
	}
	return nil, nil, 0, fmt.Errorf("task %s: %w; it may still be running: %s", id, o.Err, hint)
}

// unanswered is what a task waiting for input nobody gave shows: the outstanding questions
// (keys, kinds, messages, schemas) as JSON for stdout, so that a script can answer them with
// 'mcptask update' (--on-input fail), and the error that says so.
func unanswered(id string, inputs map[string]json.RawMessage) ([]byte, error) {
	var text []byte
	what := "the server will ask for it"
	if len(inputs) > 0 {
		text, _ = json.Marshal(InputRequiredEvent{Type: "input_required", TaskID: id, InputRequests: inputs})
		// Read on a terminal as often as by a script: no server control reaches it raw.
		text = append(termsafe.JSON(text), '\n')
		what = DescribeInputs(inputs, SortedKeys(inputs))
	}
	return text, fmt.Errorf("task %s needs input (%s) and no --answer was given for it; the task keeps waiting: answer with 'mcptask update %s --answer KEY=JSON' (or --answers FILE), follow it with 'mcptask result %s' and --answer, --answers or --on-input decline|exec:CMD, or watch it on a terminal",
		id, what, id, id)
}

// openInputs are the questions a task left open, by the key that answers each: on
// 2026-07-28 the task's inputRequests; on 2025-11-25, where a question comes as a request
// while tasks/result is open, the ones the follow took and left unanswered, keyed as
// 'mcptask update --answer' takes them ("elicitation"), in the same {method, params} form.
func openInputs(o follow.Outcome, t *rpc.Task) map[string]json.RawMessage {
	if len(t.InputRequests) > 0 || len(o.Requests) == 0 {
		return t.InputRequests
	}
	out := make(map[string]json.RawMessage, len(o.Requests))
	for _, r := range o.Requests {
		raw, err := json.Marshal(struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params,omitempty"`
		}{r.Method, r.Params})
		if err == nil {
			out[r.Key] = raw
		}
	}
	return out
}

func outcomeEnvelope(typ string, o follow.Outcome, t *rpc.Task) *Envelope {
	return &Envelope{Type: typ, TaskID: o.TaskID, Status: t.Status, Era: o.Era, Server: o.Server, Task: t.Raw, Input: t.InputRequests}
}

// Result is the output of a CallToolResult: the envelope, the text, and exit 3 for isError.
// t is nil for a plain result (no task).
func Result(tr *rpc.ToolResult, t *rpc.Task, era rpc.Era, server string) (*Envelope, []byte, int, error) {
	e := &Envelope{Type: "result", Era: era, Server: server, Result: tr.Raw}
	if t != nil {
		e.TaskID, e.Status, e.Task = t.TaskID, t.Status, t.Raw
	}
	var b bytes.Buffer
	ToolResult(&b, tr)
	if tr.IsError {
		what := "the tool"
		if t != nil {
			what = "task " + t.TaskID
		}
		return e, b.Bytes(), exitcode.TaskFailed, fmt.Errorf("%s returned an error result (isError)", what)
	}
	return e, b.Bytes(), 0, nil
}

// TaskEnvelope is one task's entry in a many-task --json document, a --jsonl result event
// and an --on-complete command's stdin: Describe's envelope (or the task's status when there
// is none), with the task's exit code and error.
func TaskEnvelope(o follow.Outcome, env *Envelope, code int, err error) Envelope {
	e := Envelope{Type: "status", TaskID: o.TaskID, Tool: o.Tool, Era: o.Era, Server: o.Server}
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
		if code == exitcode.Expired {
			e.Status = taskstatus.Expired
		}
	}
	return e
}

// OutcomeName is the name a task's end has in summaries, annotations and MCPTASK_STATUS.
func OutcomeName(o follow.Outcome, code int) string {
	switch o.End {
	case follow.EndResult:
		if code == exitcode.TaskFailed {
			return "failed"
		}
		if o.Task != nil && o.Result == nil && o.RPCError == nil {
			return string(o.Task.Status) // cancel --wait: the result stays for 'mcptask result'
		}
		return "completed"
	case follow.EndCancelled:
		return "cancelled"
	case follow.EndExpired:
		return "expired"
	case follow.EndInputRequired:
		return "input_required"
	case follow.EndTimeout, follow.EndStillRunning:
		return "timeout"
	case follow.EndInterrupted, follow.EndDetached:
		return "interrupted"
	}
	return "error"
}
