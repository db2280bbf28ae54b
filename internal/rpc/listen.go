package rpc

import (
	"context"
	"encoding/json"
	"fmt"
)

// Subscription receives the notifications of one subscriptions/listen stream (2026-07-28,
// EXT §Task Status Notifications, C26-SUBS).
type Subscription struct {
	// OnAck gets the task ids the server agreed to report (compare with those asked for).
	OnAck func(taskIDs []string)
	// OnTask gets each notifications/tasks: a full DetailedTask, as tasks/get would return it.
	OnTask func(t *Task)
}

// Listen opens a subscriptions/listen stream for taskIDs and delivers its notifications to
// sub until the stream ends: it returns nil when the server closed the subscription
// gracefully, ctx.Err() when ctx ended (closing the stream ends the subscription on HTTP; on
// stdio the transport sends notifications/cancelled), and an error otherwise. A server that
// does not offer subscriptions answers with an *Error (-32601).
func (c *Client) Listen(ctx context.Context, taskIDs []string, sub *Subscription) error {
	if c.Era() != EraModern {
		return fmt.Errorf("subscriptions/listen exists only in %s", VersionModern)
	}
	msg, hdr, err := c.build("subscriptions/listen", reqParams{m: map[string]any{"notifications": map[string]any{"taskIds": taskIDs}}}, "", true)
	if err != nil {
		return err
	}
	key := msg.IDKey()
	c.mu.Lock()
	if c.subs == nil {
		c.subs = map[string]*Subscription{}
	}
	c.subs[key] = sub
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.subs, key)
		c.mu.Unlock()
	}()
	resp, err := c.t.RoundTrip(ctx, msg, hdr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	return nil // C26-SUBS §Graceful Closure
}

// dispatchSubscription routes a listen-stream notification by its _meta subscription id
// (C26-SUBS: every message on the stream carries it; clients MUST demultiplex on it). It
// reports whether the message belonged to a subscription.
func (c *Client) dispatchSubscription(msg *Message) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	sid, onStream := p.Meta[MetaSubscriptionID]
	if msg.Method != "notifications/tasks" && msg.Method != "notifications/subscriptions/acknowledged" {
		if onStream && c.opts.OnStreamNotice != nil {
			// EXT §Task Status Notifications: progress and log notifications MUST NOT be sent
			// on a task's listen stream; the linter reports them.
			c.opts.OnStreamNotice(msg.Method)
		}
		return false
	}
	c.mu.Lock()
	sub := c.subs[idKey(sid)]
	c.mu.Unlock()
	if sub == nil {
		return true // a stream that is not ours (or gone): nothing to do with it
	}
	switch msg.Method {
	case "notifications/subscriptions/acknowledged":
		var a struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		}
		_ = json.Unmarshal(msg.Params, &a)
		if sub.OnAck != nil {
			sub.OnAck(a.Notifications.TaskIDs)
		}
	case "notifications/tasks":
		t, err := DecodeTask(msg.Params)
		if err != nil {
			// A notification about a task mcptask cannot use (a malformed one, an unusable
			// id) is dropped; the task's next poll says what is wrong with it.
			c.note("notifications/tasks ignored: %s", err)
		} else if sub.OnTask != nil {
			sub.OnTask(t)
		}
	}
	return true
}
