package follow

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// pushHub follows a 2026-07-28 server's subscriptions/listen stream for the tasks of one
// connection and hands each notifications/tasks to the follow of that task. Polling goes on as
// the safety net, relaxed while the stream reports a task, and takes over when it drops.
type pushHub struct {
	srv *Server

	mu    sync.Mutex
	up    bool
	acked map[string]bool
}

// live reports whether the stream currently reports task id.
func (h *pushHub) live(id string) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up && h.acked[id]
}

// run keeps a listen stream open until ctx ends, reopening it with backoff when it drops. A
// server without subscriptions (an error answer) leaves the tasks to polling alone.
func (h *pushHub) run(ctx context.Context, c *rpc.Client, ids []string) {
	s := h.srv
	wait := time.Second
	for ctx.Err() == nil {
		err := c.Listen(ctx, ids, &rpc.Subscription{
			OnAck: func(acked []string) {
				h.mu.Lock()
				h.up = true
				h.acked = make(map[string]bool, len(acked))
				for _, id := range acked {
					h.acked[id] = true
				}
				h.mu.Unlock()
				// EXT §Task Status Notifications: compare what was acknowledged with what was
				// asked; the tasks not acknowledged are polled as before.
				s.e.emit(Event{Kind: KindPushUp, Server: s.name, Era: rpc.EraModern, Acked: len(acked), Asked: len(ids)})
				s.wakeAll()
			},
			OnTask: func(t *rpc.Task) { s.deliver(t, ViaPush) },
		})
		h.mu.Lock()
		wasUp := h.up
		h.up = false
		h.mu.Unlock()
		s.wakeAll()
		if ctx.Err() != nil {
			return
		}
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			return // no subscriptions here: polling only
		}
		if wasUp {
			s.e.emit(Event{Kind: KindPushDown, Server: s.name, Era: rpc.EraModern, Err: err})
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(wait*2, maxBackoff)
	}
}
