package output

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/ci"
	"github.com/mcptask/mcptask/internal/completion"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/redact"
)

// Ends reads the end of each task of one run the way the command reports it (its envelope,
// exit code and outcome name), for the sinks beside the printer: the CI job log and summary
// (Verdict) and the --on-complete hooks and notifications (Ended). It knows how the tasks of
// each server are reached again, for the hints, and the command's --timeout. Safe for
// concurrent use.
type Ends struct {
	// Redactor hides the run's secrets in the server text and error text of a verdict.
	Redactor *redact.Redactor

	mu      sync.Mutex
	refs    map[string]connect.Ref
	timeout time.Duration
}

// SetServer records how the tasks of server name are reached again.
func (e *Ends) SetServer(name string, ref connect.Ref) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refs == nil {
		e.refs = map[string]connect.Ref{}
	}
	e.refs[name] = ref
}

// Ref is how the tasks of server name are reached again (Reporter.Ref).
func (e *Ends) Ref(name string) connect.Ref {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refs[name]
}

// SetTimeout records the command's --timeout, for the messages.
func (e *Ends) SetTimeout(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.timeout = d
}

// Judge reads the end of task o as the command reports it: its envelope, exit code, outcome
// name and error.
func (e *Ends) Judge(o follow.Outcome) (Envelope, int, string, error) {
	e.mu.Lock()
	timeout := e.timeout
	e.mu.Unlock()
	described, _, code, err := Describe(o, e.Ref(o.Server), timeout)
	code, err = Judge(context.Background(), code, err)
	return TaskEnvelope(o, described, code, err), code, OutcomeName(o, code), err
}

// Verdict is how the end of task o reads in the job log and summary (ci.Job.Verdict).
func (e *Ends) Verdict(o follow.Outcome) ci.Verdict {
	_, _, name, err := e.Judge(o)
	v := ci.Verdict{Outcome: name, Resume: FollowHint(e.Ref(o.Server), o.TaskID)}
	if o.Task != nil {
		v.Status = o.Task.StatusMessage
	}
	if err != nil {
		v.Problem = err.Error()
	}
	// Both are server text and error text, which may quote a secret of this run.
	red := e.Redactor
	v.Server, v.Status, v.Problem = red.URL(o.Server), red.Text(v.Status), red.Text(v.Problem)
	return v
}

// Ended is the end of task o, followed for took, for its hook and notification
// (completion.Sink.End); with envelope set, the hook's stdin: the task's envelope as --json
// shows it.
func (e *Ends) Ended(o follow.Outcome, took time.Duration, envelope bool) completion.Ended {
	env, code, name, _ := e.Judge(o)
	ended := completion.Ended{TaskID: o.TaskID, Tool: o.Tool, Server: o.Server, Outcome: name, Code: code, Took: took}
	if envelope {
		var b bytes.Buffer
		_ = WriteJSON(&b, env)
		ended.Envelope = b.Bytes()
	}
	return ended
}
