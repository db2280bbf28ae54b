package proxy

import (
	"errors"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/state"
)

// Ledger writes the tasks hosts create through the proxy into the mcptask ledger.
//
// Create is synchronous and durable: the proxy calls it before it forwards a CreateTaskResult,
// so that a crash of the host, the proxy or the server right after cannot lose the task id
// (PROTOCOL.md §8; in 2026-07-28 there is no tasks/list to find it again). Creates that arrive
// together (a host starting many tasks at once) share one write: while one write runs, the
// next ones queue and go out in a single rewrite of the ledger.
//
// Status changes only wait for a batch, written every BatchEvery: the id is already safe, and a
// status lost to a crash is learned again by the next `mcptask resume`. The end of a task is
// the exception (Settle): it is written before the host learns of it, so that a host that
// finished with a task (and perhaps ended the session the task lived in) never leaves the
// ledger saying it still runs.
type Ledger struct {
	st *state.Store
	// BatchEvery is how long status updates wait to be written together (200 ms).
	BatchEvery time.Duration
	// Sign, when set, signs each record Create writes (state.Keyring.Sign), so that resuming
	// it later may reach its server with the user's credentials (issue 20).
	Sign func(r *state.Record)

	mu       sync.Mutex
	writeMu  sync.Mutex // status writes one at a time, in the order their changes were taken
	queue    []*createReq
	writing  bool
	changes  []state.Change
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	started  sync.Once
	writeErr func(error)
}

type createReq struct {
	rec  state.Record
	done chan error
}

// NewLedger returns a Ledger on st. onError receives the failures of batched status writes,
// which have no caller to return to.
func NewLedger(st *state.Store, onError func(error)) *Ledger {
	return &Ledger{st: st, BatchEvery: 200 * time.Millisecond, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), writeErr: onError}
}

// Path is the ledger file.
func (l *Ledger) Path() string { return l.st.Path() }

// Create writes rec (inserting it, or replacing the record of the same task on the same
// server) and returns once it is on disk.
func (l *Ledger) Create(rec state.Record) error {
	if l.Sign != nil {
		l.Sign(&rec)
	}
	req := &createReq{rec: rec, done: make(chan error, 1)}
	l.mu.Lock()
	l.queue = append(l.queue, req)
	lead := !l.writing
	l.writing = true
	l.mu.Unlock()
	if lead {
		l.commit()
	}
	return <-req.done
}

// commit writes queued creates until the queue is empty. The caller that found no write
// running does the writing; the others wait on their done channel.
func (l *Ledger) commit() {
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue = nil
		if len(batch) == 0 {
			l.writing = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		var err error
		if len(batch) == 1 {
			err = l.st.Put(batch[0].rec)
		} else {
			now := time.Now().UTC()
			err = l.st.Update(func(f *state.File) error {
				index := make(map[string]int, len(f.Tasks))
				for i, r := range f.Tasks {
					index[r.Server.Key()+"\x00"+r.TaskID] = i
				}
				for _, req := range batch {
					r := req.rec
					r.SavedAt = now
					if i, ok := index[r.Server.Key()+"\x00"+r.TaskID]; ok {
						f.Tasks[i] = r
						continue
					}
					index[r.Server.Key()+"\x00"+r.TaskID] = len(f.Tasks)
					f.Tasks = append(f.Tasks, r)
				}
				return nil
			})
		}
		var ce *state.CorruptError
		if errors.As(err, &ce) {
			// The damaged file is kept aside and the records were written to a fresh one:
			// the task is safe, but the caller must say what happened.
			err = ce
		}
		for _, req := range batch {
			req.done <- err
		}
	}
}

// Update queues a change to the record of task id on the server with key key; a record that
// is not in the ledger is left alone.
func (l *Ledger) Update(key, id string, fn func(r *state.Record)) {
	l.started.Do(func() { go l.run() })
	l.mu.Lock()
	l.changes = append(l.changes, state.Change{Key: key, ID: id, Fn: fn})
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Settle writes a change now, after the ones queued before it: for a task that ended.
func (l *Ledger) Settle(key, id string, fn func(r *state.Record)) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	changes := append(l.changes, state.Change{Key: key, ID: id, Fn: fn})
	l.changes = nil
	l.mu.Unlock()
	return l.st.PatchMany(changes)
}

func (l *Ledger) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-l.kick:
			timer.Reset(l.BatchEvery)
			select {
			case <-timer.C:
				l.Flush()
			case <-l.stop:
				l.Flush()
				return
			}
		case <-l.stop:
			l.Flush()
			return
		}
	}
}

// Flush writes the status changes queued so far.
func (l *Ledger) Flush() {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	changes := l.changes
	l.changes = nil
	l.mu.Unlock()
	if len(changes) == 0 {
		return
	}
	if err := l.st.PatchMany(changes); err != nil && l.writeErr != nil {
		l.writeErr(err)
	}
}

// Close writes what is queued and stops the batch writer.
func (l *Ledger) Close() {
	started := true
	l.started.Do(func() { started = false })
	if !started {
		l.Flush()
		return
	}
	close(l.stop)
	<-l.done
}
