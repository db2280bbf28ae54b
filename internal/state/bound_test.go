package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// TestRecordsAreBounded: whatever path a record takes into the file (Put, Patch, PatchMany,
// Update), the free texts a server or a host chose are cut to termsafe.Limit with a visible
// mark, so one hostile task cannot grow the ledger every mcptask process reads whole.
func TestRecordsAreBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	st := Open(path)
	huge := strings.Repeat("x", 1<<20)
	r := rec("t1", "http://a/mcp")
	r.StatusMessage, r.LastError, r.Tool, r.Via = huge, huge, huge, huge
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	key := r.Server.Key()
	if err := st.Patch(key, "t1", func(r *Record) { r.StatusMessage = huge + "y" }); err != nil {
		t.Fatal(err)
	}
	if err := st.PatchMany([]Change{{Key: key, ID: "t1", Fn: func(r *Record) { r.LastError = huge + "z" }}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(f *File) error {
		r2 := rec("t2", "http://a/mcp")
		r2.StatusMessage = huge
		f.Tasks = append(f.Tasks, r2)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 2*5*(termsafe.Limit+64)+4096 {
		t.Fatalf("the ledger is %d bytes: %v", fi.Size(), err)
	}
	got, _ := st.Find("t1")
	if len(got) != 1 {
		t.Fatalf("records t1: %d", len(got))
	}
	// Cut once, and not again when t2's Update wrote t1 back: the mark still counts the MiB.
	for name, s := range map[string]string{"status": got[0].StatusMessage, "error": got[0].LastError, "tool": got[0].Tool} {
		if len(s) > termsafe.Limit || !strings.Contains(s, "…[cut 104") || !strings.HasSuffix(s, " bytes]") {
			t.Errorf("%s: %d bytes ending %q", name, len(s), s[max(0, len(s)-30):])
		}
	}
}
