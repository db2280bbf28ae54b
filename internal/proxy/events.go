package proxy

// What shows the proxy's events (the live view, the plain lines on stderr) may be slow or
// stuck; this file keeps it from holding up the traffic, and renders the plain lines.

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// EventBuffer is how many events wait for the live view or the plain lines before new ones
// are dropped: a few seconds of a busy proxy, a few MiB at most.
var EventBuffer = 4096

// EventQueue carries the proxy's events to whatever shows them (the live view, the plain lines
// on stderr), which may be slow or stuck: a terminal paused with ctrl+s, a pipe nobody reads.
// Push never blocks, because it runs on the relay's goroutines and the proxy's promise is that
// its display never holds up the traffic; when the queue is full, polls are dropped first,
// then everything, and the count of dropped events is shown once the consumer catches up.
// The ledger and --record do not go through it and miss nothing.
type EventQueue struct {
	ch      chan Event
	dropped atomic.Int64
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// NewEventQueue returns a queue that holds size events.
func NewEventQueue(size int) *EventQueue {
	return &EventQueue{ch: make(chan Event, size), stop: make(chan struct{}), done: make(chan struct{})}
}

// Push queues ev, or drops it and counts it; it never blocks. It fits Options.OnEvent.
func (q *EventQueue) Push(ev Event) {
	// Polls are the bulk and carry the least: leave the last quarter of the queue to the rest.
	if ev.Kind == EventPoll && len(q.ch) >= cap(q.ch)*3/4 {
		q.dropped.Add(1)
		return
	}
	select {
	case q.ch <- ev:
	default:
		q.dropped.Add(1)
	}
}

// Run hands the queued events to consume, one at a time, until Close; it reports what was
// dropped before the next event it hands on. Only Run calls consume, so consume may block.
func (q *EventQueue) Run(consume func(Event)) {
	defer close(q.done)
	give := func(ev Event) {
		if n := q.dropped.Swap(0); n > 0 {
			consume(Event{Kind: EventNotice, Time: ev.Time,
				Text: fmt.Sprintf("%d events were not shown: the display could not keep up (the ledger and --record have them all)", n)})
		}
		consume(ev)
	}
	for {
		select {
		case ev := <-q.ch:
			give(ev)
		case <-q.stop:
			for {
				select {
				case ev := <-q.ch:
					give(ev)
				default:
					return
				}
			}
		}
	}
}

// Close stops Run once it has handed on what is queued, waiting at most wait for a consumer
// that is stuck (the process is ending; a stuck terminal must not keep it alive).
func (q *EventQueue) Close(wait time.Duration) {
	q.once.Do(func() { close(q.stop) })
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
}

// PlainEvents prints one line per task event and violation on w: no view, no terminal. The
// lines go through an EventQueue, so that a stderr nobody reads (a host that never drains the
// stdio proxy's stderr, a terminal paused with ctrl+s) never holds up the traffic; the returned
// func writes what is still queued (waiting at most a second for a stuck stderr). The lines
// are a log (a CI job's, often), so they are redacted: a server may echo a credential.
func PlainEvents(w io.Writer, red *redact.Redactor) (onEvent func(Event), flush func()) {
	q := NewEventQueue(EventBuffer)
	go q.Run(func(ev Event) {
		if line := EventLine(ev); line != "" {
			fmt.Fprintln(w, red.Text(line))
		}
	})
	return q.Push, func() { q.Close(time.Second) }
}

// EventLine renders ev as the one-line form of the plain output, "" for events that have none
// (polls). Every string from a host or a server is made safe for a terminal.
func EventLine(ev Event) string {
	ts := ev.Time.UTC().Format(time.RFC3339)
	t := ev.Task
	switch ev.Kind {
	case EventCreated:
		where := ""
		if t.OnHost {
			where = " (a task on the host)"
		}
		s := fmt.Sprintf("%s %s created by %s: %s, MCP %s, %s", ts, termsafe.Line(t.ID), termsafe.Line(ev.Host), termsafe.Line(t.Tool), t.Version, termsafe.Line(t.Status))
		if t.Message != "" {
			s += " " + termsafe.Line(t.Message)
		}
		return s + where
	case EventStatus:
		s := fmt.Sprintf("%s %s %s", ts, termsafe.Line(t.ID), termsafe.Line(t.Status))
		if t.Message != "" {
			s += " " + termsafe.Line(t.Message)
		}
		if ev.Via == "push" {
			s += " (push)"
		}
		return s
	case EventViolation:
		v := ev.Violation
		who := "the server"
		if v.Peer == check.PeerHost {
			who = "the host " + termsafe.Line(v.Host)
		}
		return fmt.Sprintf("%s violation: %s broke rule %s (%s): %s", ts, who, v.Rule, v.Section, termsafe.Line(v.Seen))
	case EventNotice:
		return fmt.Sprintf("%s notice: %s", ts, termsafe.Line(ev.Text))
	}
	return ""
}
