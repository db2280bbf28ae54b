package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritable: a ledger that can take a record passes and is left as it was (no file made,
// none changed); one that cannot says why.
func TestWritable(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh", "tasks.json")
	if err := Open(fresh).Writable(); err != nil {
		t.Fatalf("a ledger not yet made: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("Writable made the ledger file (%v): an empty one reads as damage", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(fresh))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("Writable left %s behind", e.Name())
		}
	}

	existing := filepath.Join(dir, "existing", "tasks.json")
	st := Open(existing)
	if err := st.Put(Record{TaskID: "t1", Server: Server{URL: "http://127.0.0.1/mcp"}, Status: "working"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(existing)
	if err := st.Writable(); err != nil {
		t.Fatalf("an existing ledger: %v", err)
	}
	if after, _ := os.ReadFile(existing); string(after) != string(before) {
		t.Errorf("Writable changed the ledger:\n%s\nwas\n%s", after, before)
	}

	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Open(filepath.Join(file, "tasks.json")).Writable(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a path through a file: %v, want an error that says not a directory", err)
	}
	isDir := filepath.Join(dir, "isdir", "tasks.json")
	if err := os.MkdirAll(isDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Open(isDir).Writable(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a ledger path that is a directory: %v, want an error that says so", err)
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		if err := Open(filepath.Join(ro, "tasks.json")).Writable(); err == nil {
			t.Errorf("a read-only directory passed")
		}
	}
}

// BenchmarkWritable is the cost the check adds to every call before its tools/call (against
// the whole call --detach, bench/README.md): a few system calls, whatever the ledger holds.
func BenchmarkWritable(b *testing.B) {
	st := Open(filepath.Join(b.TempDir(), "tasks.json"))
	if err := st.Put(Record{TaskID: "t1", Server: Server{URL: "http://127.0.0.1/mcp"}, Status: "working"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := st.Writable(); err != nil {
			b.Fatal(err)
		}
	}
}
