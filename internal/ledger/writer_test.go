package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

const srvURL = "http://127.0.0.1:1/mcp"

func newStore(t *testing.T) *state.Store {
	t.Helper()
	return state.Open(filepath.Join(t.TempDir(), "tasks.json"))
}

func record(id string) state.Record {
	return NewRecord(Origin{Server: state.Server{URL: srvURL}, Era: "2026-07-28", Tool: "slow"},
		&rpc.Task{TaskID: id, Status: rpc.StatusWorking}, time.Now())
}

func key() string { return state.Server{URL: srvURL}.Key() }

func find(t *testing.T, st *state.Store, id string) *state.Record {
	t.Helper()
	recs, err := st.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		return nil
	}
	return &recs[0]
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A change made while the Put of its record is still waiting to be written lands after that
// Put, whichever write runs first: the batcher's flush or the Put's own. Two batchers that
// took their queues apart (the proxy's before issue 21) lost the change when the flush won.
func TestPatchQueuedAfterPutLandsAfterIt(t *testing.T) {
	for i := range 30 {
		st := newStore(t)
		w := New(st, Options{Every: time.Hour})
		id := fmt.Sprintf("t%d", i)
		w.writeMu.Lock() // a write is running: the Put below queues behind it
		put := make(chan error, 1)
		go func() { put <- w.Put(record(id)) }()
		waitFor(t, "the Put to queue", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.puts) == 1 })
		w.Patch(key(), id, func(r *state.Record) { r.Status, r.StatusMessage = "completed", "done" })
		w.writeMu.Unlock()
		w.Flush() // races the Put for the next write, and mostly wins: it was running
		if err := <-put; err != nil {
			t.Fatal(err)
		}
		w.Close()
		r := find(t, st, id)
		if r == nil || r.Status != "completed" || r.StatusMessage != "done" {
			t.Fatalf("round %d: the change made after the Put was lost: %+v", i, r)
		}
	}
}

// A Put returns with its record on disk, and a change made after it lands after it.
func TestPutIsDurableAndChangesFollowIt(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Every: time.Hour})
	defer w.Close()
	if err := w.Put(record("a")); err != nil {
		t.Fatal(err)
	}
	if r := find(t, st, "a"); r == nil || r.Status != "working" {
		t.Fatalf("after Put the record is %+v, want it on disk, working", r)
	}
	w.Status(key(), &rpc.Task{TaskID: "a", Status: rpc.StatusInputRequired})
	if r := find(t, st, "a"); r.Status != "working" {
		t.Fatalf("a batched change was written before its batch: %+v", r)
	}
	w.Flush()
	if r := find(t, st, "a"); r.Status != "input_required" {
		t.Fatalf("after Flush the record is %+v", r)
	}
}

// PatchNow is written at once, after everything queued before it: a change queued earlier
// cannot overwrite it, and a record dropped earlier stays gone.
func TestPatchNowLandsAfterWhatIsQueued(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Every: time.Hour})
	defer w.Close()
	for _, id := range []string{"a", "b"} {
		if err := w.Put(record(id)); err != nil {
			t.Fatal(err)
		}
	}
	w.Patch(key(), "a", func(r *state.Record) { r.Status, r.StatusMessage = "working", "halfway" })
	w.Drop(key(), "b")
	if err := w.PatchNow(key(), "a", func(r *state.Record) { r.Status = "completed" }); err != nil {
		t.Fatal(err)
	}
	if err := w.PatchNow(key(), "b", func(r *state.Record) { r.Status = "completed" }); err != nil {
		t.Fatal(err)
	}
	r := find(t, st, "a")
	if r == nil || r.Status != "completed" || r.StatusMessage != "halfway" {
		t.Fatalf("record a = %+v, want the queued change and then the PatchNow", r)
	}
	if r := find(t, st, "b"); r != nil {
		t.Fatalf("record b was dropped before the PatchNow, and is back: %+v", r)
	}
}

// Close writes what is queued, may be called twice, and a change made after it is still
// written.
func TestCloseFlushes(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Every: time.Hour})
	if err := w.Put(record("a")); err != nil {
		t.Fatal(err)
	}
	w.Expired(key(), "a")
	w.Close()
	if r := find(t, st, "a"); r == nil || !r.Expired {
		t.Fatalf("Close did not write the queued change: %+v", r)
	}
	w.Close()
	w.Error(key(), "a", errors.New("late"))
	if r := find(t, st, "a"); r.LastError != "late" {
		t.Fatalf("a change made after Close was lost: %+v", r)
	}
}

// Close returns when called again, whether or not the batcher ever started (cancel closes its
// writer before the follow and again on return).
func TestCloseTwice(t *testing.T) {
	for _, started := range []bool{false, true} {
		w := New(newStore(t), Options{Every: time.Hour})
		if started {
			w.Expired(key(), "a")
		}
		done := make(chan struct{})
		go func() { w.Close(); w.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("started=%v: the second Close hangs", started)
		}
	}
}

// Changes made within one batch interval cost one write.
func TestChangesAreBatched(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Every: time.Hour})
	for i := range 50 {
		if err := w.Put(record(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		w.Status(key(), &rpc.Task{TaskID: fmt.Sprint(i), Status: rpc.StatusCompleted})
	}
	w.Close()
	if n := w.Writes(); n != 1 {
		t.Fatalf("%d writes for 50 changes in one batch, want 1", n)
	}
	f, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Tasks {
		if r.Status != "completed" {
			t.Fatalf("record %s: %s", r.TaskID, r.Status)
		}
	}
}

// The batcher writes on its own after Every, and Answered does not wait for it.
func TestBatchesAreWrittenWithoutFlush(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Every: 5 * time.Millisecond})
	defer w.Close()
	if err := w.Put(record("a")); err != nil {
		t.Fatal(err)
	}
	w.Shown(key(), "a", true)
	waitFor(t, "the batch", func() bool { r := find(t, st, "a"); return r != nil && r.ResultShown })

	slow := New(st, Options{Every: time.Hour})
	defer slow.Close()
	slow.Answered(key(), "a", []string{"q1"})
	waitFor(t, "the answered key", func() bool { r := find(t, st, "a"); return len(r.AnsweredKeys) == 1 })
}

// A batched write that fails reaches the error callback, saying how many changes it lost; a
// Put's failure is returned to its caller.
func TestErrorReachesCallback(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []error
	w := New(state.Open(filepath.Join(blocker, "tasks.json")), Options{Every: time.Hour, OnError: func(err error) {
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
	}})
	if err := w.Put(record("a")); err == nil {
		t.Fatal("a Put into a ledger that cannot be written returned no error")
	}
	w.Expired(key(), "a")
	w.Expired(key(), "b")
	w.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0].Error(), "could not update 2 task change(s) in the ledger") {
		t.Fatalf("callback got %v, want one error for the 2 changes", got)
	}
}

// ReportTo sets the callback only when none was given.
func TestReportTo(t *testing.T) {
	var first, second int
	w := New(nil, Options{OnError: func(error) { first++ }})
	w.ReportTo(func(error) { second++ })
	w.onError(errors.New("x"))
	if first != 1 || second != 0 {
		t.Fatalf("ReportTo replaced the given callback")
	}
}

// Puts that arrive together share writes, are all durable, and are signed.
func TestPutsAreSignedAndShareWrites(t *testing.T) {
	st := newStore(t)
	w := New(st, Options{Sign: func(r *state.Record) { r.MAC = "signed-" + r.TaskID }})
	defer w.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() { errs <- w.Put(record(fmt.Sprint(i))) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tasks) != 40 {
		t.Fatalf("%d records, want 40", len(f.Tasks))
	}
	for _, r := range f.Tasks {
		if r.MAC != "signed-"+r.TaskID {
			t.Fatalf("record %s was not signed: %q", r.TaskID, r.MAC)
		}
	}
}

// A nil Writer, or one on no store, writes nothing and does not fail.
func TestNilWriter(t *testing.T) {
	var w *Writer
	w.Status(key(), &rpc.Task{TaskID: "a"})
	w.Flush()
	w.Close()
	if err := w.Put(record("a")); err != nil {
		t.Fatal(err)
	}
	w = New(nil, Options{})
	w.Answered(key(), "a", []string{"k"})
	if err := w.PatchNow(key(), "a", func(*state.Record) {}); err != nil {
		t.Fatal(err)
	}
	if w.SessionInUse(key(), "s", time.Now()) {
		t.Fatal("a writer without a store says a session is in use")
	}
	w.Close()
}
