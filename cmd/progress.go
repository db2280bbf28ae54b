package cmd

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// heartbeatEvery keeps CI systems that kill silent steps from killing a long wait.
const heartbeatEvery = 30 * time.Second

// progressPrinter is the plain sink of the follow engine: one line on stderr per status or
// statusMessage change (RFC 3339 time, task id, status, message), per failed poll, answer and
// remark, and a heartbeat while nothing changes. No colour, no cursor movement: it is what CI
// logs see. With --jsonl it also writes the stream's events on stdout.
type progressPrinter struct {
	mu sync.Mutex
	w  io.Writer
	// events, when set (--jsonl), also receives one JSON event per change.
	events   io.Writer
	now      func() time.Time
	last     map[string]string
	lastLine time.Time
	// wf opens the CI log group of a task before a line about it.
	wf *workflow
	// red redacts each line: it is the job log, and a server may echo a credential into a
	// status message.
	red *redact.Redactor
}

func newProgressPrinter(f *Factory) *progressPrinter {
	p := &progressPrinter{w: f.IO.ErrOut, now: f.Now, last: map[string]string{}, wf: f.wf, red: f.redactor()}
	if f.Global.JSONL {
		p.events = f.IO.Out
	}
	return p
}

// Event implements follow.Sink.
func (p *progressPrinter) Event(ev follow.Event) {
	p.wf.track(ev)
	switch ev.Kind {
	case follow.KindCreated:
		if p.events != nil {
			p.mu.Lock()
			_ = writeJSON(p.events, envelope{Type: "created", TaskID: ev.TaskID, Status: ev.Task.Status, Era: ev.Era, Server: ev.Server, Tool: ev.Tool, Task: ev.Task.Raw})
			p.mu.Unlock()
		}
		p.Note(ev.TaskID, fmt.Sprintf("task created for tool %s (MCP %s)", ev.Tool, ev.Era))
	case follow.KindStatus:
		p.task(ev.Task, ev.Via)
	case follow.KindPolled:
		p.heartbeat(ev.Task)
	case follow.KindError:
		if ev.Transient {
			p.Note(ev.TaskID, fmt.Sprintf("poll failed (%v); retrying in %s", ev.Err, human.Duration(ev.RetryIn)))
			p.event(map[string]any{"type": "error", "taskId": ev.TaskID, "transient": true, "message": ev.Err.Error(),
				"retryInMs": ev.RetryIn.Milliseconds(), "failures": ev.Failures})
			return
		}
		p.Note(ev.TaskID, fmt.Sprintf("%s failed: %v", ev.Op, ev.Err))
	case follow.KindAnswered:
		p.Note(ev.TaskID, "answered "+strings.Join(ev.Keys, ", "))
	case follow.KindCancelRequested:
		p.Note(ev.TaskID, "cancellation requested")
	case follow.KindPushUp:
		// EXT §Task Status Notifications: what was acknowledged against what was asked.
		if ev.Acked < ev.Asked {
			p.Note("-", fmt.Sprintf("push updates for %d of %d tasks; the others are polled", ev.Acked, ev.Asked))
		}
	case follow.KindPushDown:
		p.Note("-", "push stream dropped; polling until it is back")
	case follow.KindProgress:
		// C25-PROG: 2025-11-25 progress carries real progress alongside statusMessage.
		s := "progress " + strconv.FormatFloat(ev.Progress, 'f', -1, 64)
		if ev.Total != nil {
			s += "/" + strconv.FormatFloat(*ev.Total, 'f', -1, 64)
		}
		if ev.Message != "" {
			s += " " + ev.Message
		}
		p.Note("-", s)
	case follow.KindNote:
		p.Note(cmp.Or(ev.TaskID, "-"), ev.Message)
	}
}

// task prints t if its status or message changed since the last line for that task.
func (p *progressPrinter) task(t *rpc.Task, via follow.Via) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := string(t.Status) + "\x00" + t.StatusMessage
	if p.last[t.TaskID] == key {
		return
	}
	p.last[t.TaskID] = key
	if via == "" {
		via = follow.ViaPoll
	}
	if p.events != nil {
		ev := map[string]any{"type": "status", "time": p.now().UTC().Format(time.RFC3339Nano), "taskId": t.TaskID, "status": t.Status, "via": via}
		if t.StatusMessage != "" {
			ev["statusMessage"] = t.StatusMessage
		}
		_ = writeJSON(p.events, ev)
		if t.Status == rpc.StatusInputRequired && len(t.InputRequests) > 0 {
			_ = writeJSON(p.events, map[string]any{"type": "input_required", "taskId": t.TaskID, "inputRequests": t.InputRequests})
		}
	}
	p.wf.groupFor(t.TaskID)
	line := fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(t.TaskID), t.Status)
	if t.StatusMessage != "" {
		line += " " + termsafe.Line(t.StatusMessage)
	}
	if via == follow.ViaPush {
		line += " (push)"
	}
	p.println(line)
}

// event writes one --jsonl event (nothing without --jsonl).
func (p *progressPrinter) event(ev map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events != nil {
		ev["time"] = p.now().UTC().Format(time.RFC3339Nano)
		_ = writeJSON(p.events, ev)
	}
}

// Note prints a free-form line about a task ("-" for none).
func (p *progressPrinter) Note(id, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wf.groupFor(id)
	p.println(fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(id), termsafe.Line(termsafe.Cut(msg))))
}

// heartbeat prints a line if nothing was printed for heartbeatEvery.
func (p *progressPrinter) heartbeat(t *rpc.Task) {
	p.mu.Lock()
	quiet := p.now().Sub(p.lastLine) >= heartbeatEvery
	p.mu.Unlock()
	if quiet {
		p.Note(t.TaskID, fmt.Sprintf("%s (still waiting)", t.Status))
	}
}

func (p *progressPrinter) println(line string) {
	p.lastLine = p.now()
	fmt.Fprintln(p.w, p.red.Text(line))
}
