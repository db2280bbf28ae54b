package output

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

// HeartbeatEvery keeps CI systems that kill silent steps from killing a long wait.
const HeartbeatEvery = 30 * time.Second

// Groups is told of each event and of each task a line is about to be written for, so that a
// CI system's log groups follow the tasks (nil: no groups).
type Groups interface {
	Track(ev follow.Event)
	GroupFor(taskID string)
}

// Progress is the plain sink of the follow engine: one line on stderr per status or
// statusMessage change (RFC 3339 time, task id, status, message), per failed poll, answer and
// remark, and a heartbeat while nothing changes. No colour, no cursor movement: it is what CI
// logs see. With --jsonl it also writes the stream's events on stdout.
type Progress struct {
	mu sync.Mutex
	w  io.Writer
	// events, when set (--jsonl), also receives one JSON event per change.
	events   io.Writer
	now      func() time.Time
	last     map[string]string
	lastLine time.Time
	// progressAt is when each task's (or the call's, "") last progress line was written.
	progressAt map[string]time.Time
	groups     Groups
	// red redacts each line: it is the job log, and a server may echo a credential into a
	// status message.
	red *redact.Redactor
}

// NewProgress returns the progress sink writing lines on w and, when events is not nil, the
// --jsonl events on it.
func NewProgress(w, events io.Writer, now func() time.Time, groups Groups, red *redact.Redactor) *Progress {
	return &Progress{w: w, events: events, now: now, last: map[string]string{}, groups: groups, red: red}
}

// Event implements follow.Sink.
func (p *Progress) Event(ev follow.Event) {
	if p.groups != nil {
		p.groups.Track(ev)
	}
	switch ev.Kind {
	case follow.KindCreated:
		p.emit(Envelope{Type: "created", TaskID: ev.TaskID, Status: ev.Task.Status, Era: ev.Era, Server: ev.Server, Tool: ev.Tool, Task: ev.Task.Raw})
		p.Note(ev.TaskID, fmt.Sprintf("task created for tool %s (MCP %s)", ev.Tool, ev.Era))
	case follow.KindStatus:
		p.task(ev.Task, ev.Via)
	case follow.KindPolled:
		p.heartbeat(ev.Task)
	case follow.KindProgress:
		if p.progressDue(ev) {
			p.emit(ProgressEvent{Type: "progress", TaskID: ev.TaskID, Progress: ev.Progress, Total: ev.Total, Message: ev.Message,
				Time: p.now().UTC().Format(time.RFC3339Nano)})
			msg, _ := remark(ev)
			p.Note(cmp.Or(ev.TaskID, "-"), msg)
		}
	case follow.KindError:
		if ev.Transient {
			p.Note(ev.TaskID, fmt.Sprintf("poll failed (%v); retrying in %s", ev.Err, human.Duration(ev.RetryIn)))
			p.emit(PollErrorEvent{Type: "error", TaskID: ev.TaskID, Transient: true, Message: ev.Err.Error(),
				RetryInMs: ev.RetryIn.Milliseconds(), Failures: ev.Failures, Time: p.now().UTC().Format(time.RFC3339Nano)})
			return
		}
		p.Note(ev.TaskID, fmt.Sprintf("%s failed: %v", ev.Op, ev.Err))
	default:
		if msg, ok := remark(ev); ok {
			p.Note(cmp.Or(ev.TaskID, "-"), msg)
		}
	}
}

// ProgressEvery is the least time between two progress lines of one task (or call): a server
// may send notifications/progress many times a second, and a log needs a line now and then.
// The first and the last (progress reaching its total) are always written.
const ProgressEvery = 2 * time.Second

// progressDue reports whether ev, a progress event, gets a line, and notes the time if so.
func (p *Progress) progressDue(ev follow.Event) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	last, seen := p.progressAt[ev.TaskID]
	final := ev.Total != nil && ev.Progress >= *ev.Total
	if seen && !final && now.Sub(last) < ProgressEvery {
		return false
	}
	if p.progressAt == nil {
		p.progressAt = map[string]time.Time{}
	}
	p.progressAt[ev.TaskID] = now
	return true
}

// remark is the line for an event that only says something (false: no line).
func remark(ev follow.Event) (string, bool) {
	switch ev.Kind {
	case follow.KindAnswered:
		return "answered " + strings.Join(ev.Keys, ", "), true
	case follow.KindCancelRequested:
		return "cancellation requested", true
	case follow.KindPushUp:
		// EXT §Task Status Notifications: what was acknowledged against what was asked.
		if ev.Acked < ev.Asked {
			return fmt.Sprintf("push updates for %d of %d tasks; the others are polled", ev.Acked, ev.Asked), true
		}
	case follow.KindPushDown:
		return "push stream dropped; polling until it is back", true
	case follow.KindProgress:
		// C25-PROG: 2025-11-25 progress carries real progress alongside statusMessage.
		s := "progress " + strconv.FormatFloat(ev.Progress, 'f', -1, 64)
		if ev.Total != nil {
			s += "/" + strconv.FormatFloat(*ev.Total, 'f', -1, 64)
		}
		if ev.Message != "" {
			s += " " + ev.Message
		}
		return s, true
	case follow.KindNote:
		return ev.Message, true
	}
	return "", false
}

// task prints t if its status or message changed since the last line for that task.
func (p *Progress) task(t *rpc.Task, via follow.Via) {
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
		_ = WriteJSON(p.events, StatusEvent{Type: "status", Time: p.now().UTC().Format(time.RFC3339Nano), TaskID: t.TaskID, Status: t.Status, Via: via, StatusMessage: t.StatusMessage})
		if t.Status == rpc.StatusInputRequired && len(t.InputRequests) > 0 {
			_ = WriteJSON(p.events, InputRequiredEvent{Type: "input_required", TaskID: t.TaskID, InputRequests: t.InputRequests})
		}
	}
	p.group(t.TaskID)
	line := fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(t.TaskID), t.Status)
	if t.StatusMessage != "" {
		line += " " + termsafe.Line(t.StatusMessage)
	}
	if via == follow.ViaPush {
		line += " (push)"
	}
	p.println(line)
}

// emit writes one --jsonl event (nothing without --jsonl).
func (p *Progress) emit(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events != nil {
		_ = WriteJSON(p.events, ev)
	}
}

// Note prints a free-form line about a task ("-" for none).
func (p *Progress) Note(id, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.group(id)
	p.println(fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(id), termsafe.Line(termsafe.Cut(msg))))
}

func (p *Progress) group(id string) {
	if p.groups != nil {
		p.groups.GroupFor(id)
	}
}

// heartbeat prints a line if nothing was printed for HeartbeatEvery.
func (p *Progress) heartbeat(t *rpc.Task) {
	p.mu.Lock()
	quiet := p.now().Sub(p.lastLine) >= HeartbeatEvery
	p.mu.Unlock()
	if quiet {
		p.Note(t.TaskID, fmt.Sprintf("%s (still waiting)", t.Status))
	}
}

func (p *Progress) println(line string) {
	p.lastLine = p.now()
	fmt.Fprintln(p.w, p.red.Text(line))
}
