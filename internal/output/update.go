package output

import (
	"errors"
	"fmt"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Updated turns what update did (follow.Update's Run: out and err) for task id into what it
// shows: the --json document (nil when there is none), a note for stderr, and the error with
// its exit code (as Describe). A task that had already ended asks nothing: nothing was sent,
// and the exit code is the task's own outcome, as 'mcptask result' gives it (0 completed, 3
// failed, 4 cancelled); 5 would tell a script, wrongly, that the task still waits.
func Updated(id string, era rpc.Era, server string, out follow.Updated, err error) (doc *Update, note string, code int, _ error) {
	if err != nil {
		return nil, "", updateCode(out, err), err
	}
	switch t := out.Task; {
	case out.Ended():
		msg := fmt.Sprintf("task %s already ended %s and asks nothing any more; nothing was sent (its outcome: mcptask result %s)", t.TaskID, t.Status, t.TaskID)
		doc = &Update{Type: "update", TaskID: t.TaskID, Era: era, Server: server, Status: t.Status, Answered: []string{}}
		switch t.Status {
		case rpc.StatusFailed:
			return doc, "", exitcode.TaskFailed, errors.New(msg)
		case rpc.StatusCancelled:
			return doc, "", exitcode.Cancelled, errors.New(msg)
		}
		return doc, msg + "\n", 0, nil
	case out.Finished:
		return nil, fmt.Sprintf("task %s finished without asking\n", id), 0, nil
	case era == rpc.EraModern:
		note = fmt.Sprintf("answered %d input request(s) of task %s\n", len(out.Answered), id)
	default:
		note = fmt.Sprintf("answered the question of task %s\n", id)
	}
	return &Update{Type: "update", TaskID: id, Era: era, Server: server, Answered: out.Answered}, note, 0, nil
}

// updateCode is the exit code of an update that did not answer (0 leaves it to err).
func updateCode(out follow.Updated, err error) int {
	var nw *follow.NotWaitingError
	var un *follow.UnneededError
	var nq *follow.NoQuestionError
	var ae *follow.AnswerError
	switch {
	case out.Task == nil: // tasks/get failed
		if rpc.IsUnknownTask(err) {
			return exitcode.Expired
		}
	case errors.As(err, &nw):
		return exitcode.InputRequired
	case errors.As(err, &un), errors.As(err, &ae): // a wrong answer: nothing was sent
		return exitcode.Usage
	case errors.As(err, &nq):
		return exitcode.Timeout
	}
	return 0
}
