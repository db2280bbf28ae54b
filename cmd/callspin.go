package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/tui"
	"github.com/mcptask/mcptask/internal/tui/feedfollow"
)

// callSpinner draws one line on stderr while a tools/call waits for its answer on a terminal:
// a spinner, the time taken, and the notifications/progress the server sends about the call
// (a bar when it gives a total; tui.CallLine). Without it a long call that answers without a
// task is a blank screen. It is a follow.Sink: the engine's progress events with no task (the
// call's, before there is one) move it.
type callSpinner struct {
	w       io.Writer
	tool    string
	width   int
	noColor bool

	mu      sync.Mutex
	start   time.Time
	prog    *tui.Progress
	frame   int
	running bool
	stop    chan struct{}
	done    chan struct{}
}

// spinEvery is how often the line is drawn again: the spinner turns, the clock moves.
const spinEvery = 100 * time.Millisecond

func newCallSpinner(f *Factory, tool string) *callSpinner {
	w, _ := f.IO.Size()
	if w <= 0 {
		w = 80
	}
	return &callSpinner{w: f.IO.ErrOut, tool: tool, width: w - 1, noColor: f.Getenv("NO_COLOR") != ""}
}

// Event implements follow.Sink.
func (s *callSpinner) Event(ev follow.Event) {
	if ev.Kind != follow.KindProgress || ev.TaskID != "" {
		return
	}
	s.mu.Lock()
	s.prog = feedfollow.Progress(ev)
	s.frame++
	s.mu.Unlock()
}

// Start draws the line until Stop.
func (s *callSpinner) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return
	}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.running, s.stop, s.done = true, make(chan struct{}), make(chan struct{})
	go s.loop(s.stop, s.done)
}

// The first line is drawn a tick after Start: a call that answers at once leaves stderr as it
// was, with no flash of a spinner.
func (s *callSpinner) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(spinEvery)
	defer t.Stop()
	drawn := false
	for {
		select {
		case <-stop:
			if drawn {
				fmt.Fprint(s.w, "\r\x1b[K") // the line goes: what the call printed is what stays
			}
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.frame++
		line := tui.CallLine(s.tool, s.prog, time.Since(s.start), s.frame, s.width, s.noColor)
		s.mu.Unlock()
		fmt.Fprint(s.w, "\r"+line+"\x1b[K")
		drawn = true
	}
}

// Stop clears the line; Start draws it again (a question asked in between has the screen).
func (s *callSpinner) Stop() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.running = false
	stop, done := s.stop, s.done
	s.mu.Unlock()
	close(stop)
	<-done
}
