package output

import (
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Cancel turns an acknowledged cancellation of task id on the server ref (follow.Cancel's
// out) into what cancel shows: the --json envelope, the text for stdout and a note for stderr
// (both for a person only), and the error with its exit code (as Describe). A failure that the
// text already explains comes with text. timeout is cancel --wait's --timeout.
func Cancel(id string, era rpc.Era, ref connect.Ref, out follow.Cancelled, timeout time.Duration) (env Envelope, text, note string, code int, err error) {
	env = Envelope{Type: "cancel", TaskID: id, Era: era, Server: ref.String(), Ack: out.Ack}
	if t := out.Task; t != nil {
		env.Status, env.Task = t.Status, t.Raw
	}
	if o := out.Outcome; o != nil {
		// Followed to its real end (cancel --wait): say how it really ended.
		switch o.End {
		case follow.EndCancelled, follow.EndResult:
		default:
			_, _, code, err = Describe(*o, ref, timeout)
			return env, "", "", code, err
		}
		last := o.Task
		env.Status, env.Task = last.Status, last.Raw
		var verdict string
		switch last.Status {
		case rpc.StatusCancelled:
			verdict = "cancelled" // and the record is gone: nothing more to show
		case rpc.StatusCompleted:
			// The record stays until 'mcptask result' shows what the task produced.
			verdict = "completed anyway: the cancellation came too late; its result: " + FollowHint(ref, id)
		default:
			verdict = "failed anyway: the cancellation came too late; details: " + FollowHint(ref, id)
			code, err = exitcode.TaskFailed, fmt.Errorf("task %s failed before the cancellation took effect", id)
		}
		return env, fmt.Sprintf("task %s %s\n", termsafe.Line(id), verdict), "", code, err
	}
	if t := out.Task; t != nil {
		// C25-TASKS §Task Cancellation: the server MUST move the task to cancelled first.
		text = fmt.Sprintf("task %s is %s", termsafe.Line(t.TaskID), t.Status)
		if t.StatusMessage != "" {
			text += ": " + termsafe.Line(t.StatusMessage)
		}
		return env, text + "\n", "", 0, nil
	}
	// EXT §Task Cancellation: the ack does not mean the task is cancelled.
	return env, fmt.Sprintf("cancellation of task %s requested\n", termsafe.Line(id)),
		fmt.Sprintf("Cancellation is cooperative on MCP %s: the task may still complete or fail.\nFollow it with: %s (or use --wait)\n", era, FollowHint(ref, id)), 0, nil
}
