package tui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Feed carries Updates from the engine to a running view. Send never blocks and may be called
// from any goroutine; the view takes what has arrived in one batch, at most once a frame,
// however many updates come in between: a thousand answers a second must not mean a thousand
// redraws (bubbletea draws the View after every message).
type Feed struct {
	mu      sync.Mutex
	pending []Update
	spare   []Update // the batch before last, whose array the next batch reuses
	signal  chan struct{}
	closed  chan struct{}
	once    sync.Once
}

// batchEvery is the shortest time between two batches: a frame, and a twentieth more, so that
// the few messages a program gets besides the batches (its start, a resize, a key) still fit
// in one View per frame over any stretch of time; a batch a twentieth of a frame late is not
// seen.
const batchEvery = frame + frame/20

// NewFeed returns an empty feed.
func NewFeed() *Feed {
	return &Feed{signal: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Send queues u for the view's next batch.
func (f *Feed) Send(u Update) {
	f.mu.Lock()
	f.pending = append(f.pending, u)
	f.mu.Unlock()
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

// Close ends the view's wait for updates; call it once the program has ended.
func (f *Feed) Close() { f.once.Do(func() { close(f.closed) }) }

// wait returns the next batch: once something was sent (or clock passed with nothing, when
// clock is not zero), and never sooner than batchEvery after the batch before, which arrived
// at last. It is the body of a tea.Cmd, so it may block; it never touches the model.
func (f *Feed) wait(last time.Time, clock time.Duration) tea.Msg {
	var tick <-chan time.Time
	if clock > 0 {
		t := time.NewTimer(clock)
		defer t.Stop()
		tick = t.C
	}
	for {
		ticked := false
		select {
		case <-f.signal:
		case <-tick:
			ticked = true
		case <-f.closed:
			return nil
		}
		if d := batchEvery - time.Since(last); d > 0 {
			// What arrives meanwhile joins this batch.
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-f.closed:
				t.Stop()
				return nil
			}
		}
		f.mu.Lock()
		// The view is done with the batch before this one (it asks for the next batch only
		// once it has applied the last), so its array takes the updates that come next.
		batch := f.pending
		f.pending, f.spare = f.spare[:0], batch
		f.mu.Unlock()
		if len(batch) > 0 || ticked {
			return feedMsg{updates: batch, at: time.Now()}
		}
		// A signal left over from updates an earlier batch already took: wait on.
	}
}
