// Package ledger is what a run of mcptask does with the task ledger (internal/state): one
// batching Writer shared by the follow engine, the commands and the proxy, the record of a
// task just created (NewRecord), and the copy of what a server said about a task into its
// record (ApplyTask); and the commands' edits by task id (edit.go): which record a task id
// means (Pick), forgetting records (Forget), adopting records another mcptask wrote (Adopt),
// and the ids offered to a shell (Completions).
//
// It is a package beside internal/state rather than part of it because it speaks the wire:
// records are built from rpc.Task values. internal/state stays the file, its format and its
// crash safety, and knows nothing of rpc; internal/rpc knows nothing of the ledger. Before it,
// internal/follow and internal/proxy each had a batcher of their own (issue 21).
package ledger

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

// BatchEvery is how long batched changes wait to be written together (bench/README.md).
const BatchEvery = 200 * time.Millisecond

// Options tune a Writer. The zero value batches every BatchEvery, signs nothing and drops the
// failures of batched writes.
type Options struct {
	// Every is how long batched changes wait (BatchEvery when zero).
	Every time.Duration
	// Sign, when set, signs each record Put writes (state.Keyring.Sign), so that resuming it
	// later may reach its server with the user's credentials (issue 20).
	Sign func(r *state.Record)
	// OnError receives the failure of every batched write, which has no caller to return to:
	// a *state.CorruptError as it is, any other error saying how many changes it lost.
	OnError func(error)
}

// Writer keeps the ledger's records in step with a run. It has two kinds of write:
//
//   - Put is durable: it returns once the record is on disk. A task id is written before
//     anything is printed or forwarded about it (PROTOCOL.md §5 rule 26, §8: 2026-07-28 has no
//     tasks/list to find a lost one again). Puts that arrive while a write runs share the
//     next write (a host starting many tasks at once through the proxy).
//   - Changes (Patch, Drop and the task helpers) wait and are written together, at most every
//     Options.Every, in the order they were made: a resume of a thousand tasks, or a server
//     restart that expires a thousand, would otherwise rewrite (and fsync) the ledger a
//     thousand times. A change lost to a crash is learned again by the next resume.
//     Answered starts its write at once without waiting for it (a resumed follow must never
//     answer a question twice); PatchNow writes at once and returns the error (the end of a
//     task the proxy forwards, so the ledger never says a task runs that a host saw end).
//
// Ordering: writes happen one at a time. A change lands after every Put that was called
// before it (even one still writing when the change was made), and after every change made
// before it; PatchNow lands after everything queued. A Put does not wait for the changes
// queued before it: they land after it, which matters only for a Put that replaces a record
// with changes pending (no caller does that).
//
// A nil *Writer, or one on a nil Store, writes nothing. All methods may be called from any
// goroutine.
type Writer struct {
	st   *state.Store
	opts Options

	mu      sync.Mutex
	puts    []*putReq
	pending []state.Change
	onError func(error)
	closed  bool

	writeMu sync.Mutex // one write at a time: writes land in the order their work was taken
	writes  atomic.Int64

	started sync.Once
	kick    chan struct{}
	urgent  chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

type putReq struct {
	rec  state.Record
	err  error
	done chan struct{}
}

// New returns a Writer on st (nil writes nothing). Close it when the run ends.
func New(st *state.Store, opts Options) *Writer {
	if opts.Every <= 0 {
		opts.Every = BatchEvery
	}
	return &Writer{st: st, opts: opts, onError: opts.OnError, kick: make(chan struct{}, 1),
		urgent: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// ReportTo sends the failures of batched writes to fn when Options.OnError was not set (the
// proxy turns them into notices once it exists).
func (w *Writer) ReportTo(fn func(error)) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.onError == nil {
		w.onError = fn
	}
	w.mu.Unlock()
}

// Store is the store w writes to (nil for a Writer that writes nothing).
func (w *Writer) Store() *state.Store {
	if w == nil {
		return nil
	}
	return w.st
}

// Put writes rec (inserting it, or replacing the record of the same task on the same server),
// signed with Options.Sign, and returns once it is on disk. A *state.CorruptError means the
// record is safe in a fresh ledger and the damaged one was kept aside: say so.
func (w *Writer) Put(rec state.Record) error {
	if w == nil || w.st == nil {
		return nil
	}
	if w.opts.Sign != nil {
		w.opts.Sign(&rec)
	}
	req := &putReq{rec: rec, done: make(chan struct{})}
	w.mu.Lock()
	w.puts = append(w.puts, req)
	w.mu.Unlock()
	w.writeMu.Lock()
	w.mu.Lock()
	puts := w.puts
	w.puts = nil
	w.mu.Unlock()
	w.writePuts(puts) // ours, unless a write that ran meanwhile took it along
	w.writeMu.Unlock()
	<-req.done
	return req.err
}

// writePuts writes puts in one write; the caller holds writeMu.
func (w *Writer) writePuts(puts []*putReq) {
	if len(puts) == 0 {
		return
	}
	recs := make([]state.Record, len(puts))
	for i, p := range puts {
		recs[i] = p.rec
	}
	err := w.st.PutMany(recs)
	for _, p := range puts {
		p.err = err
		close(p.done)
	}
}

// Patch queues fn for the record of task id on the server whose ledger key is key; a record
// that is not in the ledger is left alone.
func (w *Writer) Patch(key, id string, fn func(r *state.Record)) {
	w.add(state.Change{Key: key, ID: id, Fn: fn}, false)
}

// Drop queues the removal of the record of task id on the server of key.
func (w *Writer) Drop(key, id string) {
	w.add(state.Change{Key: key, ID: id, Delete: true}, false)
}

// PatchNow writes fn for the record (key, id) now, after everything queued before it, and
// returns the error of that write.
func (w *Writer) PatchNow(key, id string, fn func(r *state.Record)) error {
	if w == nil || w.st == nil {
		return nil
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	puts, changes := w.puts, append(w.pending, state.Change{Key: key, ID: id, Fn: fn})
	w.puts, w.pending = nil, nil
	w.mu.Unlock()
	w.writePuts(puts)
	return w.st.PatchMany(changes)
}

// Status records what the server said about task t on the server of key.
func (w *Writer) Status(key string, t *rpc.Task) {
	w.Patch(key, t.TaskID, func(r *state.Record) { ApplyTask(r, t) })
}

// Expired records that the server no longer knows task id.
func (w *Writer) Expired(key, id string) {
	w.Patch(key, id, func(r *state.Record) { r.Expired = true })
}

// Error records on task id what went wrong while following it; the record stays resumable.
func (w *Writer) Error(key, id string, err error) {
	msg := err.Error()
	w.Patch(key, id, func(r *state.Record) { r.LastError = msg })
}

// Answered adds keys to the answered keys of task id, and starts the write at once, with
// whatever else is pending.
func (w *Writer) Answered(key, id string, keys []string) {
	keys = slices.Clone(keys)
	w.add(state.Change{Key: key, ID: id, Fn: func(r *state.Record) {
		for _, k := range keys {
			if !slices.Contains(r.AnsweredKeys, k) {
				r.AnsweredKeys = append(r.AnsweredKeys, k)
			}
		}
	}}, true)
}

// Shown is called once a finished task's outcome is known to whoever shows it: the record
// goes, or with keep (--keep) stays as history, marked shown.
func (w *Writer) Shown(key, id string, keep bool) {
	if keep {
		w.Patch(key, id, func(r *state.Record) { r.ResultShown = true })
		return
	}
	w.Drop(key, id)
}

// SessionInUse reports whether a record on the server of key still needs the 2025-11-25
// session sid: an unfinished task is bound to it. Pending changes are written first.
func (w *Writer) SessionInUse(key, sid string, now time.Time) bool {
	if w == nil || w.st == nil {
		return false
	}
	w.Flush()
	file, err := w.st.Load()
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

func (w *Writer) add(c state.Change, urgent bool) {
	if w == nil || w.st == nil {
		return
	}
	w.mu.Lock()
	w.pending = append(w.pending, c)
	closed := w.closed
	w.mu.Unlock()
	if closed {
		w.Flush() // no batcher any more: a late change is written at once rather than lost
		return
	}
	w.started.Do(func() { go w.run() })
	ch := w.kick
	if urgent {
		ch = w.urgent
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-w.urgent:
			w.Flush()
			continue
		case <-w.kick:
		case <-w.stop:
			w.Flush()
			return
		}
		timer.Reset(w.opts.Every)
		select {
		case <-timer.C:
		case <-w.urgent:
			timer.Stop()
		case <-w.stop:
			timer.Stop()
			w.Flush()
			return
		}
		w.Flush()
	}
}

// Flush writes what is queued now. A failure goes to the error callback.
func (w *Writer) Flush() {
	if w == nil || w.st == nil {
		return
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	puts, changes := w.puts, w.pending
	w.puts, w.pending = nil, nil
	onError := w.onError
	w.mu.Unlock()
	w.writePuts(puts)
	if len(changes) == 0 {
		return
	}
	w.writes.Add(1)
	err := w.st.PatchMany(changes)
	if err == nil || onError == nil {
		return
	}
	var ce *state.CorruptError
	if errors.As(err, &ce) {
		onError(ce)
		return
	}
	onError(fmt.Errorf("could not update %d task change(s) in the ledger: %w", len(changes), err))
}

// Writes is how many batched writes of changes w made (the batching figure tests check).
func (w *Writer) Writes() int64 {
	if w == nil {
		return 0
	}
	return w.writes.Load()
}

// Close writes what is queued and stops the batcher. It may be called more than once; a
// change made after it is written at once.
func (w *Writer) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.started.Do(func() { close(w.done) }) // never started: there is no batcher to wait for
	w.stopped.Do(func() { close(w.stop) })
	<-w.done
	w.Flush()
}
