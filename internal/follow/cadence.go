package follow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Poll cadence. The server's interval is used whenever it gives one (re-read on every
// response, since C25-TASKS §Getting Tasks and EXT §Task Polling let it change); these bound it.
const (
	// DefaultInterval is used when the server suggests none: slow enough to be polite, fast
	// enough that a short task does not feel stuck.
	DefaultInterval = 2 * time.Second
	// MinInterval protects the server from a suggestion of, say, 1 ms.
	MinInterval = 100 * time.Millisecond
	// MaxInterval keeps a follow responsive even if the server asks for an hour.
	MaxInterval = 60 * time.Second
	// maxBackoff caps the exponential backoff after transport errors.
	maxBackoff = 30 * time.Second
	// minBackoff is the first backoff's floor: a server that just failed is not asked again
	// within a second, however short its interval.
	minBackoff = time.Second
	// maxRetryAfter bounds how long a server's Retry-After can hold polling off.
	maxRetryAfter = 10 * time.Minute
	// pushedPollFloor is the slowest safety-net poll while a listen stream reports a task.
	pushedPollFloor = 10 * time.Second
	// DefaultRequestTimeout bounds one tasks/get, so a server that accepts the connection and
	// never answers cannot hang a follow (the follow as a whole is bounded by Options.Timeout).
	DefaultRequestTimeout = 30 * time.Second
	// DefaultMaxInFlight caps concurrent tasks/get across a run, protecting both sides when a
	// thousand tasks are followed at once.
	DefaultMaxInFlight = 64
	// pollTickMax is the coarsest tick alignPoll rounds to.
	pollTickMax = 25 * time.Millisecond
)

// Interval sources, as the live view names them.
const (
	sourceServer  = "server's"
	sourceDefault = "default"
	sourceUser    = "your --interval"
)

// Interval is the delay between polls of t: the server's suggestion clamped to
// [MinInterval, MaxInterval] (DefaultInterval when it gave none), never faster than userMin
// (--interval). It also says where the value comes from.
func Interval(t *rpc.Task, userMin time.Duration) (time.Duration, string) {
	d, src := DefaultInterval, sourceDefault
	if t != nil && t.PollInterval > 0 {
		// C25-TASKS §Getting Tasks, EXT §Task Polling: the client SHOULD poll at the
		// server's pollInterval and re-read it on every response, since it may change.
		d, src = t.PollInterval, sourceServer
	}
	d = min(max(d, MinInterval), MaxInterval)
	if userMin > d {
		d, src = userMin, sourceUser
	}
	return d, src
}

// Backoff returns the delay before the next poll after the n-th consecutive failed poll
// (n >= 1) of a task polled every interval: doubling from twice the interval (and at least
// one second), capped at 30 s but never shorter than the interval itself, with up to a
// fifth taken off at random so that many tasks failing together (one server restarting) do
// not all retry in the same instant. A server that is down gets fewer requests the longer it
// stays down, whatever its interval.
func Backoff(n int, interval time.Duration) time.Duration {
	base := max(interval, minBackoff/2)
	d := min(base<<min(n, 10), maxBackoff)
	d -= time.Duration(rand.Int64N(int64(d)/5 + 1))
	return max(d, interval)
}

// backoffSource names a backoff for the live view.
func backoffSource(n int) string {
	s := fmt.Sprintf("backed off after %d failed poll", n)
	if n > 1 {
		s += "s"
	}
	return s
}

// alignPoll rounds a poll's due time up to the next multiple, on the wall clock, of a tick of
// at most pollTickMax and a twentieth of the interval. The polls of many tasks then wake the
// process together a few dozen times a second instead of a thousand times (each wake-up of an
// idle Go process costs scheduler and futex work that dwarfs the poll itself: issue 7's CPU
// budget), while a poll is at most 5% of its interval late. Tasks still spread over the whole
// interval (their first polls are spread), a handful per tick per server, which is what the
// connection pool sends at once anyway.
//
// A due time just past a tick (within a tenth of it) goes back to that tick: a poll goes out a
// little after its tick (the timer's own lateness, the wait for a connection), and rounding
// that up would add a whole tick to every interval.
func alignPoll(due time.Time, interval time.Duration) time.Time {
	tick := min(pollTickMax, interval/20)
	if tick < time.Millisecond {
		return due
	}
	r := time.Duration(due.UnixNano() % int64(tick))
	switch {
	case r == 0:
		return due
	case r <= tick/10:
		return due.Add(-r)
	}
	return due.Add(tick - r)
}

// health is the backoff state of one server, shared by the follows of all its tasks, so a
// server that is down gets a few polls with growing gaps instead of one per task per interval.
type health struct {
	mu       sync.Mutex
	failures int
	until    time.Time
}

// hold returns how long polls to the server should still hold off, and after how many
// failures in a row.
func (h *health) hold() (time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Until(h.until), h.failures
}

// fail records a transport failure of one poll whose own backoff is d, and returns the
// backoff that starts now: the longer of d and the server's.
func (h *health) fail(d, interval time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	d = max(d, Backoff(h.failures, interval))
	if u := time.Now().Add(d); u.After(h.until) {
		h.until = u
	}
	return d
}

// ok records a successful poll.
func (h *health) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = 0
	h.until = time.Time{}
}

// Retryable says whether a failed poll is worth retrying: transport trouble and server-side
// hiccups are; authentication failures and malformed answers are not.
func Retryable(err error) bool {
	if errors.Is(err, rpc.ErrAuth) || errors.Is(err, rpc.ErrMalformed) || errors.Is(err, rpc.ErrTooLarge) {
		return false
	}
	var rerr *rpc.Error
	if errors.As(err, &rerr) {
		return rerr.Code == rpc.CodeInternalError || rerr.HTTPStatus == 429 || rerr.HTTPStatus >= 500
	}
	return true
}

// retryAfter is how long a failed request's answer asked to wait: RFC 9110 §10.2.3, a 429 or
// 503 says when to come back; never sooner.
func retryAfter(err error) time.Duration {
	var he *rpc.HTTPError
	if errors.As(err, &he) && he.RetryAfter > 0 {
		return min(he.RetryAfter, maxRetryAfter)
	}
	return 0
}

// getTask sends one tasks/get within a slot of inFlight (when set), under its own deadline: a
// server that accepts the connection and never answers must not hang a follow. It returns
// when the request went out, zero if it did not.
func getTask(ctx context.Context, c *rpc.Client, id string, inFlight chan struct{}, timeout time.Duration) (*rpc.Task, time.Time, error) {
	if inFlight != nil {
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		}
	}
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := c.GetTask(rctx, id)
	return t, sent, err
}

// WaitWhile polls task id at its server's interval (never faster than userMin) for as long as
// it reports status, and returns the first answer with another status. It is the small
// follow of a one-shot command (mcptask update waits for a 2025-11-25 server to take an
// answer), with the engine's cadence and per-request deadline.
func WaitWhile(ctx context.Context, c *rpc.Client, id string, status rpc.TaskStatus, userMin time.Duration) (*rpc.Task, error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t, _, err := getTask(ctx, c, id, nil, DefaultRequestTimeout)
		if err != nil || t.Status != status {
			return t, err
		}
		d, _ := Interval(t, userMin)
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-timer.C:
		}
	}
}
