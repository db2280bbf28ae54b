package follow

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// BatchEvery is how long ledger changes wait to be written together.
const BatchEvery = 200 * time.Millisecond

// Ledger keeps the ledger's records in step with what servers say about the tasks being
// followed. Changes (statuses, expiry and error marks, answered keys, dropped records) are
// written together, at most every BatchEvery, in the order they were made: a resume of a
// thousand tasks, or a server restart that expires a thousand, would otherwise rewrite (and
// fsync) the ledger a thousand times. Only changes wait: the task ids are in the ledger
// already (PROTOCOL.md §5 rule 26: written before anything is printed), and a status lost to
// a crash is learned again by the next resume. Answered keys do not wait: the write that
// carries them starts at once, with whatever else is pending, because a resumed follow must
// never answer a question twice.
//
// A nil *Ledger, or one on a nil Store, writes nothing. Failures are warnings: the tasks go
// on regardless.
type Ledger struct {
	st   *state.Store
	warn func(string)

	mu      sync.Mutex
	pending []state.Change
	writeMu sync.Mutex // one write at a time, so batches land in order
	writes  atomic.Int64

	kick   chan struct{}
	urgent chan struct{}
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// NewLedger starts the batch writer of st. warn gets one line per failed write.
func NewLedger(st *state.Store, warn func(string)) *Ledger {
	l := &Ledger{st: st, warn: warn, kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if st == nil {
		close(l.done)
		return l
	}
	go l.run()
	return l
}

// ApplyTask copies what the server said about t into r. A good update clears the last error.
func ApplyTask(r *state.Record, t *rpc.Task) {
	if t.TTL != nil {
		ms := state.Millis(t.TTL.Milliseconds())
		r.TTL = &ms
	} else {
		r.TTL = nil
	}
	if t.PollInterval > 0 {
		r.PollInterval = state.Millis(t.PollInterval.Milliseconds())
	}
	r.Status = string(t.Status)
	r.StatusMessage = t.StatusMessage
	r.LastError = ""
	if !t.LastUpdatedAt.IsZero() {
		r.LastUpdatedAt = t.LastUpdatedAt
	}
}

// Status records what the server said about task t on the server whose ledger key is key.
func (l *Ledger) Status(key string, t *rpc.Task) {
	l.add(state.Change{Key: key, ID: t.TaskID, Fn: func(r *state.Record) { ApplyTask(r, t) }}, false)
}

// Expired records that the server no longer knows task id.
func (l *Ledger) Expired(key, id string) {
	l.add(state.Change{Key: key, ID: id, Fn: func(r *state.Record) { r.Expired = true }}, false)
}

// Error records on task id what went wrong while following it; the record stays resumable.
func (l *Ledger) Error(key, id string, err error) {
	msg := err.Error()
	l.add(state.Change{Key: key, ID: id, Fn: func(r *state.Record) { r.LastError = msg }}, false)
}

// Answered adds keys to the answered keys of task id, and has them written at once.
func (l *Ledger) Answered(key, id string, keys []string) {
	keys = slices.Clone(keys)
	l.add(state.Change{Key: key, ID: id, Fn: func(r *state.Record) {
		for _, k := range keys {
			if !slices.Contains(r.AnsweredKeys, k) {
				r.AnsweredKeys = append(r.AnsweredKeys, k)
			}
		}
	}}, true)
}

// Shown is called once a finished task's outcome is known to whoever shows it: the record
// goes, or with keep (--keep) stays as history, marked shown.
func (l *Ledger) Shown(key, id string, keep bool) {
	if keep {
		l.add(state.Change{Key: key, ID: id, Fn: func(r *state.Record) { r.ResultShown = true }}, false)
		return
	}
	l.add(state.Change{Key: key, ID: id, Delete: true}, false)
}

// SessionInUse reports whether a record on the server of key still needs the 2025-11-25
// session sid: an unfinished task is bound to it. Pending changes are written first.
func (l *Ledger) SessionInUse(key, sid string, now time.Time) bool {
	if l == nil || l.st == nil {
		return false
	}
	l.Flush()
	file, err := l.st.Load()
	if err != nil {
		return true // when in doubt, keep the session
	}
	for _, r := range file.Tasks {
		if r.SessionID == sid && r.Server.Key() == key && r.Unfinished(now) {
			return true
		}
	}
	return false
}

func (l *Ledger) add(c state.Change, urgent bool) {
	if l == nil || l.st == nil {
		return
	}
	l.mu.Lock()
	l.pending = append(l.pending, c)
	l.mu.Unlock()
	ch := l.kick
	if urgent {
		ch = l.urgent
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (l *Ledger) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-l.urgent:
			l.Flush()
			continue
		case <-l.kick:
		case <-l.stop:
			l.Flush()
			return
		}
		timer.Reset(BatchEvery)
		select {
		case <-timer.C:
		case <-l.urgent:
			timer.Stop()
		case <-l.stop:
			timer.Stop()
			l.Flush()
			return
		}
		l.Flush()
	}
}

// Flush writes what is pending now.
func (l *Ledger) Flush() {
	if l == nil || l.st == nil {
		return
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	changes := l.pending
	l.pending = nil
	l.mu.Unlock()
	if len(changes) == 0 {
		return
	}
	l.writes.Add(1)
	if err := l.st.PatchMany(changes); err != nil && l.warn != nil {
		var ce *state.CorruptError
		if errors.As(err, &ce) {
			l.warn(err.Error())
			return
		}
		l.warn(fmt.Sprintf("could not update %d task change(s) in the ledger: %v", len(changes), err))
	}
}

// Close writes what is pending and stops the batch writer. It may be called more than once.
func (l *Ledger) Close() {
	if l == nil {
		return
	}
	l.closed.Do(func() {
		if l.st != nil {
			close(l.stop)
		}
	})
	<-l.done
}
