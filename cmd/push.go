package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// pushHub follows a 2026-07-28 server's subscriptions/listen stream for the tasks of one
// connection and hands each notifications/tasks to the wait of that task. Polling goes on as
// the safety net, relaxed while the stream reports a task, and takes over when it drops.
type pushHub struct {
	mu    sync.Mutex
	ch    map[string]chan *rpc.Task
	acked map[string]bool
	up    bool
}

func newPushHub(ids []string) *pushHub {
	h := &pushHub{ch: map[string]chan *rpc.Task{}, acked: map[string]bool{}}
	for _, id := range ids {
		h.ch[id] = make(chan *rpc.Task, 1)
	}
	return h
}

// deliver hands t to its task's wait; only the latest state matters, so an unread older one
// is replaced.
func (h *pushHub) deliver(id string, t *rpc.Task) {
	c := h.ch[id]
	if c == nil {
		return
	}
	for {
		select {
		case c <- t:
			return
		default:
			select {
			case <-c:
			default:
			}
		}
	}
}

func (h *pushHub) wakeAll() {
	for id := range h.ch {
		h.deliver(id, nil)
	}
}

// live reports whether the stream currently reports task id.
func (h *pushHub) live(id string) func() bool {
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.up && h.acked[id]
	}
}

// run keeps a listen stream open until ctx ends, reopening it with backoff when it drops. A
// server without subscriptions (an error answer) leaves the tasks to polling alone.
func (h *pushHub) run(ctx context.Context, c *rpc.Client, note func(string)) {
	ids := make([]string, 0, len(h.ch))
	for id := range h.ch {
		ids = append(ids, id)
	}
	wait := time.Second
	for ctx.Err() == nil {
		err := c.Listen(ctx, ids, &rpc.Subscription{
			OnAck: func(acked []string) {
				h.mu.Lock()
				h.up = true
				h.acked = map[string]bool{}
				for _, id := range acked {
					h.acked[id] = true
				}
				h.mu.Unlock()
				// EXT §Task Status Notifications: compare what was acknowledged with what was asked.
				if len(acked) < len(ids) {
					note(fmt.Sprintf("push updates for %d of %d tasks; the others are polled", len(acked), len(ids)))
				}
				h.wakeAll()
			},
			OnTask: func(t *rpc.Task) { h.deliver(t.TaskID, t) },
		})
		h.mu.Lock()
		wasUp := h.up
		h.up = false
		h.mu.Unlock()
		h.wakeAll()
		if ctx.Err() != nil {
			return
		}
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			return // no subscriptions here: polling only
		}
		if wasUp {
			note("push stream dropped; polling until it is back")
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(wait*2, 30*time.Second)
	}
}
