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

// BenchmarkPut10k is one status update in a ledger of 10,000 tasks: a locked read, a
// rewrite and two fsyncs. It bounds how often a resume over many tasks may save statuses.
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

// BenchmarkLoad10k is `mcptask list` or a lookup by id on a ledger of 10,000 tasks.
func BenchmarkLoad10k(b *testing.B) {
	st := seed(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Find("task-09999"); err != nil {
			b.Fatal(err)
		}
	}
}
