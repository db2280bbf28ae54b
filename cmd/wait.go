package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// WaitFlags are the flags of every command that waits for tasks: --timeout and --interval.
type WaitFlags struct {
	Timeout  time.Duration
	Interval time.Duration
	// Once is --timeout 0: check once and exit (8 when still running).
	Once bool
}

// AddFlags registers --timeout and --interval on c.
func (w *WaitFlags) AddFlags(c *cobra.Command) {
	c.Flags().DurationVar(&w.Timeout, "timeout", 0, "give up waiting after this long (exit 124); 0 checks once (exit 8 while still running); the task keeps running")
	c.Flags().DurationVar(&w.Interval, "interval", 0, "poll no faster than this (can only slow the server's suggested interval)")
}

// resolve reads what the flags mean once parsed: --timeout 0 given explicitly is Once.
func (w *WaitFlags) resolve(c *cobra.Command) error {
	w.Once = c.Flags().Changed("timeout") && w.Timeout == 0
	if w.Timeout < 0 || w.Interval < 0 {
		return flagErrorf("--timeout and --interval must not be negative")
	}
	return nil
}

// addJSONLFlag registers --jsonl, which implies --json for everything but the event stream.
func addJSONLFlag(c *cobra.Command, f *Factory) {
	c.Flags().BoolVar(&f.Global.JSONL, "jsonl", false, "stream one JSON event per line on stdout (created, status, input_required, result, error)")
}

// Poll cadence. The server's interval is used whenever it gives one (re-read on every
// response, since C25-TASKS §Getting Tasks and EXT §Task Polling let it change); these bound it.
const (
	// defaultPollInterval is used when the server suggests none: slow enough to be polite,
	// fast enough that a short task does not feel stuck.
	defaultPollInterval = 2 * time.Second
	// minPollInterval protects the server from a suggestion of, say, 1 ms.
	minPollInterval = 100 * time.Millisecond
	// maxPollInterval keeps a watch responsive even if the server asks for an hour.
	maxPollInterval = 60 * time.Second
	// maxBackoff caps the exponential backoff after transport errors.
	maxBackoff = 30 * time.Second
	// heartbeatEvery keeps CI systems that kill silent steps from killing a long wait.
	heartbeatEvery = 30 * time.Second
)

// requestTimeout bounds one tasks/get, so a server that never answers cannot hang a wait
// (the wait as a whole is bounded by --timeout). A variable so fault tests can shorten it.
var requestTimeout = 30 * time.Second

// pollInterval is the delay before the next tasks/get: the server's suggestion clamped to
// [minPollInterval, maxPollInterval], never faster than the user's --interval.
func pollInterval(t *rpc.Task, userMin time.Duration) time.Duration {
	d := defaultPollInterval
	if t != nil && t.PollInterval > 0 {
		d = t.PollInterval
	}
	d = max(d, minPollInterval)
	d = min(d, maxPollInterval)
	return max(d, userMin)
}

// backoff returns the delay after the n-th consecutive transport failure (n >= 1): doubling
// from one second, capped, with up to 20% jitter so many clients do not retry in step.
func backoff(n int) time.Duration {
	d := time.Second << min(n-1, 10)
	d = min(d, maxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// progressPrinter writes one plain line per status or statusMessage change: RFC 3339 time,
// task id, status, message. No colour, no cursor movement: it is what CI logs see.
// It is safe for concurrent use (resume follows many tasks at once).
type progressPrinter struct {
	mu sync.Mutex
	w  io.Writer
	// events, when set (--jsonl), also receives one JSON event per change.
	events io.Writer
	// pushed marks the next line of a task as an update that came by push, not by a poll.
	pushed   map[string]bool
	now      func() time.Time
	last     map[string]string
	lastLine time.Time
}

func newProgressPrinter(w io.Writer, now func() time.Time) *progressPrinter {
	return &progressPrinter{w: w, now: now, last: map[string]string{}}
}

// Task prints t if its status or message changed since the last line for that task.
func (p *progressPrinter) Task(t *rpc.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := string(t.Status) + "\x00" + t.StatusMessage
	if p.last[t.TaskID] == key {
		return
	}
	p.last[t.TaskID] = key
	via := "poll"
	if p.pushed[t.TaskID] {
		via = "push"
		delete(p.pushed, t.TaskID)
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
	line := fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(t.TaskID), t.Status)
	if t.StatusMessage != "" {
		line += " " + termsafe.Line(t.StatusMessage)
	}
	if via == "push" {
		line += " (push)"
	}
	p.println(line)
}

// Event writes one --jsonl event (nothing without --jsonl).
func (p *progressPrinter) Event(ev map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events != nil {
		ev["time"] = p.now().UTC().Format(time.RFC3339Nano)
		_ = writeJSON(p.events, ev)
	}
}

// Pushed marks the next line of task id as an update that came by push.
func (p *progressPrinter) Pushed(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pushed == nil {
		p.pushed = map[string]bool{}
	}
	p.pushed[id] = true
}

// Note prints a free-form line about a task (backoff, hints).
func (p *progressPrinter) Note(id, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.println(fmt.Sprintf("%s %s %s", p.now().UTC().Format(time.RFC3339), termsafe.Line(id), msg))
}

// Heartbeat prints a line if nothing was printed for heartbeatEvery.
func (p *progressPrinter) Heartbeat(t *rpc.Task) {
	p.mu.Lock()
	quiet := p.now().Sub(p.lastLine) >= heartbeatEvery
	p.mu.Unlock()
	if quiet {
		p.Note(t.TaskID, fmt.Sprintf("%s (still waiting)", t.Status))
	}
}

func (p *progressPrinter) println(line string) {
	p.lastLine = p.now()
	fmt.Fprintln(p.w, line)
}

// pollOptions tune waitTask.
type pollOptions struct {
	UserMin  time.Duration
	OnChange func(t *rpc.Task) // after every tasks/get whose status or message changed
	OnPoll   func(t *rpc.Task) // after every successful tasks/get
	OnRetry  func(err error, n int, delay time.Duration)
	// StopOnInput makes waitTask return when the task reaches input_required.
	StopOnInput bool
	// Once (--timeout 0) returns errStillRunning instead of polling again.
	Once bool
	// InputDone, when it returns true for an input_required task, keeps the wait going:
	// every question was answered and the server has yet to move on.
	InputDone func(t *rpc.Task) bool
	// InFlight, when set, caps the polls in flight across every task of the run.
	InFlight chan struct{}
	// Push delivers the task as a listen stream reported it (nil: the stream's state changed);
	// PushLive says whether the stream currently reports this task.
	Push     <-chan *rpc.Task
	PushLive func() bool
	// OnPushed is told before OnChange when an update came by push.
	OnPushed func(t *rpc.Task)
	// Server, when set, is the health of the task's server shared by all its tasks: when one
	// poll fails for a transport reason, every task on that server backs off together.
	Server *serverHealth
}

// serverHealth is the backoff state of one server, shared by the waits of all its tasks, so a
// server that is down gets a few polls with growing gaps instead of one per task per interval.
type serverHealth struct {
	mu       sync.Mutex
	failures int
	until    time.Time
}

// wait returns how long polls to the server should still hold off.
func (h *serverHealth) wait() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Until(h.until)
}

// fail records a transport failure and returns the backoff that starts now.
func (h *serverHealth) fail(min time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	d := max(backoff(h.failures), min)
	if u := time.Now().Add(d); u.After(h.until) {
		h.until = u
	}
	return d
}

// ok records a successful poll.
func (h *serverHealth) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = 0
	h.until = time.Time{}
}

// alignPoll rounds a poll's due time up to the next multiple, on the wall clock, of a tick of
// at most pollTickMax and a twentieth of the interval. The polls of many tasks then wake the
// process together a few dozen times a second instead of a thousand times (each wake-up of an
// idle Go process costs scheduler and futex work that dwarfs the poll itself: issue 7's CPU
// budget), while a poll is at most 5% of its interval late. Tasks still spread over the whole
// interval (their first polls are spread: firstPoll), a handful per tick per server, which is
// what the connection pool sends at once anyway.
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

// pollTickMax is the coarsest tick alignPoll rounds to.
const pollTickMax = 25 * time.Millisecond

// getTask sends one tasks/get within a slot of inFlight (when set), under its own deadline
// (requestTimeout): a server that accepts the connection and never answers must not hang a
// wait, whatever --timeout is. It returns when the request went out, zero if it did not.
func getTask(ctx context.Context, c *rpc.Client, id string, inFlight chan struct{}) (*rpc.Task, time.Time, error) {
	if inFlight != nil {
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		}
	}
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	t, err := c.GetTask(rctx, id)
	return t, sent, err
}

// errStillRunning is --timeout 0 finding the task not finished.
var errStillRunning = errors.New("still running")

// errTaskGone wraps the server saying it no longer knows a task.
var errTaskGone = errors.New("task expired or unknown to the server")

// waitTask polls tasks/get until the task is terminal (or needs input, with StopOnInput). It
// returns the last task seen. Transport failures back off exponentially and retry until ctx
// ends; a -32602 answer means the task is gone and ends the wait with errTaskGone.
func waitTask(ctx context.Context, c *rpc.Client, t *rpc.Task, o pollOptions) (*rpc.Task, error) {
	failures := 0
	var nextAfter time.Duration // a server's Retry-After
	var lastSent time.Time      // when the last tasks/get went out
	prev := t
	timer := time.NewTimer(time.Hour) // one timer per wait, reset for every poll
	defer timer.Stop()
	for {
		if t.Status.Terminal() || (o.StopOnInput && t.Status == rpc.StatusInputRequired && (o.InputDone == nil || !o.InputDone(t))) {
			return t, nil
		}
		if o.Once {
			return t, errStillRunning
		}
		interval := pollInterval(t, o.UserMin)
		// The interval runs from when the last poll went out, so that the gap between polls
		// is the server's interval and not the interval plus the answer's latency.
		now := time.Now()
		due := now.Add(interval)
		if !lastSent.IsZero() {
			due = lastSent.Add(interval)
		}
		if failures > 0 {
			due = now.Add(max(interval, backoff(failures), nextAfter))
		}
		nextAfter = 0
		if o.Server != nil {
			if hold := o.Server.wait(); hold > due.Sub(now) {
				due = now.Add(hold)
			}
		}
		if o.PushLive != nil && o.PushLive() {
			// Push updates arrive on a listen stream; polling stays as the safety net, relaxed
			// (EXT §Task Status Notifications: clients MAY rely on them instead of polling).
			due = now.Add(min(max(interval*5, 10*time.Second), maxPollInterval))
		}
		timer.Reset(max(alignPoll(due, interval).Sub(now), 0))
		var pushed *rpc.Task
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-timer.C:
		case pushed = <-o.Push:
			timer.Stop()
			if pushed == nil {
				continue // the stream's state changed: work out the delay again
			}
		}
		if pushed != nil {
			t = pushed
			if o.OnPushed != nil {
				o.OnPushed(t)
			}
			if o.OnPoll != nil {
				o.OnPoll(t)
			}
			if o.OnChange != nil && (t.Status != prev.Status || t.StatusMessage != prev.StatusMessage) {
				o.OnChange(t)
			}
			prev = t
			continue
		}
		nt, sent, err := getTask(ctx, c, t.TaskID, o.InFlight)
		if !sent.IsZero() {
			lastSent = sent
		}
		if err != nil {
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			if rpc.IsUnknownTask(err) {
				return t, fmt.Errorf("%w: %w", errTaskGone, err)
			}
			if !retryable(err) {
				return t, err
			}
			failures++
			retryIn := backoff(failures)
			// RFC 9110 §10.2.3: a 429 or 503 says when to come back; never sooner.
			var he *rpc.HTTPError
			if errors.As(err, &he) && he.RetryAfter > 0 {
				retryIn = max(retryIn, min(he.RetryAfter, 10*time.Minute))
				nextAfter = retryIn
			}
			if o.Server != nil {
				retryIn = o.Server.fail(retryIn)
			}
			if o.OnRetry != nil {
				o.OnRetry(err, failures, retryIn)
			}
			continue
		}
		failures = 0
		if o.Server != nil {
			o.Server.ok()
		}
		t = nt
		if o.OnPoll != nil {
			o.OnPoll(t)
		}
		if o.OnChange != nil && (t.Status != prev.Status || t.StatusMessage != prev.StatusMessage) {
			o.OnChange(t)
		}
		prev = t
	}
}

// retryable says whether a failed poll is worth retrying: transport trouble and server-side
// hiccups are; authentication failures and malformed answers are not.
func retryable(err error) bool {
	if errors.Is(err, rpc.ErrAuth) || errors.Is(err, rpc.ErrMalformed) || errors.Is(err, rpc.ErrTooLarge) {
		return false
	}
	var rerr *rpc.Error
	if errors.As(err, &rerr) {
		return rerr.Code == rpc.CodeInternalError || rerr.HTTPStatus == 429 || rerr.HTTPStatus >= 500
	}
	return true
}
