package proxy

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEventQueueNeverBlocks: a consumer that never returns (a view that never reads) does not
// hold up push; what it missed is counted and reported once it catches up.
func TestEventQueueNeverBlocks(t *testing.T) {
	q := NewEventQueue(4)
	release := make(chan struct{})
	var mu sync.Mutex
	var got []Event
	go q.Run(func(ev Event) {
		<-release
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	done := make(chan struct{})
	go func() {
		for i := range 10000 {
			kind := EventStatus
			if i%2 == 0 {
				kind = EventPoll
			}
			q.Push(Event{Kind: kind})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("push blocked on a consumer that never reads")
	}
	close(release)
	q.Close(10 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	var notice string
	for _, ev := range got {
		if ev.Kind == EventNotice {
			notice = ev.Text
		}
	}
	if !strings.Contains(notice, "events were not shown") {
		t.Errorf("no notice of the dropped events; got %d events", len(got))
	}
}
