package state

import (
	"fmt"
	"path/filepath"
	"testing"
)

// seed writes a ledger of n records in one Update.
func seed(b *testing.B, n int) *Store {
	b.Helper()
	st := Open(filepath.Join(b.TempDir(), "tasks.json"))
	err := st.Update(func(f *File) error {
		for i := range n {
			f.Tasks = append(f.Tasks, rec(fmt.Sprintf("task-%05d", i), fmt.Sprintf("http://127.0.0.1:%d/mcp", 8000+i%3)))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkPut10k is one Put in a ledger of 10,000 tasks: since issue 21 one line written in
// place and one fsync under the lock, whatever the ledger holds (it was a locked read, a
// rewrite and two fsyncs). Each iteration adds a line that replaces the last one's.
func BenchmarkPut10k(b *testing.B) {
	st := seed(b, 10_000)
	r := rec("task-05000", "http://127.0.0.1:8002/mcp")
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Put(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFind10k is a lookup by id (get, result, cancel without --server) on a ledger of 10,000 tasks.
func BenchmarkFind10k(b *testing.B) {
	st := seed(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Find("task-09999"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatch10k is one status change in a ledger of 10,000 tasks.
func BenchmarkPatch10k(b *testing.B) {
	st := seed(b, 10_000)
	r := rec("task-05000", "http://127.0.0.1:8002/mcp")
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		if err := st.Patch(r.Server.Key(), r.TaskID, func(r *Record) { r.StatusMessage = fmt.Sprint("step ", n) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutDelete10k adds one record to a ledger of 10,000 and drops it again.
func BenchmarkPutDelete10k(b *testing.B) {
	st := seed(b, 10_000)
	r := rec("task-new", "http://127.0.0.1:8002/mcp")
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Put(r); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Delete(r.Server.Key(), r.TaskID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList10k is `mcptask list`: every record of a 10,000-task ledger decoded.
func BenchmarkList10k(b *testing.B) {
	st := seed(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatchMany1000of10k is what a resume of many tasks writes at once: 1,000 status
// changes in a ledger of 10,000 tasks, in one rewrite (each Patch alone is a rewrite).
func BenchmarkPatchMany1000of10k(b *testing.B) {
	st := seed(b, 10_000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		changes := make([]Change, 0, 1000)
		for i := range 1000 {
			r := rec(fmt.Sprintf("task-%05d", i*10), fmt.Sprintf("http://127.0.0.1:%d/mcp", 8000+i*10%3))
			changes = append(changes, Change{Key: r.Server.Key(), ID: r.TaskID, Fn: func(r *Record) { r.StatusMessage = fmt.Sprint("step ", n) }})
		}
		if err := st.PatchMany(changes); err != nil {
			b.Fatal(err)
		}
	}
}
