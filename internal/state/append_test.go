package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appendFixture writes a ledger of n records with Put (so the last ones are added lines) and
// returns its path and bytes.
func appendFixture(t *testing.T, n int) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tasks.json")
	st := Open(path)
	for i := range n {
		if err := st.Put(rec(fmt.Sprintf("old-%d", i), "http://a/mcp")); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil && n > 0 {
		t.Fatal(err)
	}
	return path, data
}

// TestPutAppendsOneLine: adding a record to an existing ledger writes only its line over the
// closing "]}", and the file stays JSON that any decoder (jq, an older mcptask) reads whole.
func TestPutAppendsOneLine(t *testing.T) {
	path, before := appendFixture(t, 3)
	fi1, _ := os.Stat(path)
	if err := Open(path).Put(rec("new", "http://a/mcp")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi1, fi2) {
		t.Errorf("adding a record must not replace the file (that is the full rewrite)")
	}
	if !bytes.HasPrefix(after, before[:len(before)-len(closing)]) {
		t.Errorf("every byte before the closing line must stay as it was:\n%s\nthen\n%s", before, after)
	}
	var f File
	if err := json.Unmarshal(after, &f); err != nil || len(f.Tasks) != 4 || f.Tasks[3].TaskID != "new" {
		t.Fatalf("the file must stay JSON holding every record: %v %+v\n%s", err, f, after)
	}
}

// TestPutReplacesByAddingALine: a second Put of the same task and server adds a line; readers
// see only the last one, in the place of the first, and the next rewrite keeps only that.
func TestPutReplacesByAddingALine(t *testing.T) {
	path, _ := appendFixture(t, 2)
	st := Open(path)
	r := rec("old-0", "http://a/mcp")
	r.Status, r.StatusMessage = "input_required", "second"
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(rec("old-0", "http://b/mcp")); err != nil { // same id, other server
		t.Fatal(err)
	}
	f := mustLoad(t, st)
	var got []string
	for _, r := range f.Tasks {
		got = append(got, r.TaskID+"@"+r.Server.URL+"="+r.StatusMessage)
	}
	want := []string{"old-0@http://a/mcp=second", "old-1@http://a/mcp=", "old-0@http://b/mcp="}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if recs, _ := st.Find("old-0"); len(recs) != 2 {
		t.Errorf("Find must see one record per server: %+v", recs)
	}
	if err := st.Patch(r.Server.Key(), "old-1", func(r *Record) { r.StatusMessage = "patched" }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, idPrefix("old-0")); n != 2 {
		t.Errorf("the rewrite must drop the replaced line: %d lines of old-0 left\n%s", n, data)
	}
}

// TestKilledAppend simulates a writer killed at every byte of its append: the file holds the
// first k bytes of what it was writing over the closing "]}\n" (and, when k < 3, what is left
// of that line), and, on a file system that extends the file before the data lands, zeros
// for the rest of the write past the old end. In every case the ledger loads with every earlier record, the new record is there
// exactly when its line was written whole, the next Put repairs the file and keeps the cut
// line aside, and nothing is lost.
func TestKilledAppend(t *testing.T) {
	for _, n := range []int{0, 2} {
		path, base := appendFixture(t, n)
		if n == 0 {
			// The first Put creates the file by a rewrite; start from an empty ledger.
			base = append(append([]byte{}, header...), closing...)
		}
		line, err := encodeRecord(rec("cut", "http://a/mcp"))
		if err != nil {
			t.Fatal(err)
		}
		var write []byte
		if n > 0 {
			write = append(write, ',')
		}
		write = append(append(write, line...), '\n')
		lineEnd := len(write) // the bytes up to here make the record whole
		write = append(write, closing...)
		end := len(base) - len(closing)
		for _, zeros := range []bool{false, true} {
			for k := 0; k <= len(write); k++ {
				t.Run(fmt.Sprintf("records=%d/zeros=%v/k=%d", n, zeros, k), func(t *testing.T) {
					data := append([]byte{}, base[:end]...)
					data = append(data, write[:k]...)
					if end+k < len(base) {
						data = append(data, base[end+k:]...)
					}
					if zeros {
						// Only the bytes past the old end can read as zeros: the ones
						// written over hold old or new data.
						data = append(data, make([]byte, end+len(write)-len(data))...)
					}
					if err := os.WriteFile(path, data, 0o600); err != nil {
						t.Fatal(err)
					}
					for _, old := range mustGlob(t, path+".torn-*") {
						os.Remove(old)
					}
					st := Open(path)
					whole := k >= lineEnd-1 // the line without its newline is whole JSON too
					checkRecords(t, st, n, whole)
					if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
						t.Fatalf("a reader must not change the file")
					}

					err := st.Put(rec("next", "http://a/mcp"))
					torn := mustGlob(t, path+".torn-*")
					var ce *CorruptError
					switch {
					case errors.As(err, &ce) && ce.Torn:
						if len(torn) != 1 || torn[0] != ce.Aside {
							t.Fatalf("the cut line must be kept aside as the error says: %v, %v", torn, ce.Aside)
						}
						kept, _ := os.ReadFile(ce.Aside)
						if whole || !bytes.HasPrefix(write, bytes.TrimRight(kept, "\x00")) && !bytes.HasPrefix(data[end:], kept) {
							t.Errorf("kept aside %q, which is not the cut line %q", kept, write[:k])
						}
					case err != nil:
						t.Fatalf("Put after the cut: %v", err)
					case len(torn) != 0:
						t.Errorf("kept aside %v but did not say so", torn)
					}
					checkRecords(t, st, n, whole, "next")
					if b, _ := os.ReadFile(path); !json.Valid(b) {
						t.Errorf("after the next write the file must be JSON again:\n%s", b)
					}
				})
			}
		}
	}
}

// checkRecords loads the ledger and checks it holds old-0..old-(n-1), "cut" when whole, and
// every id in more.
func checkRecords(t *testing.T, st *Store, n int, whole bool, more ...string) {
	t.Helper()
	f, err := st.Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	have := map[string]int{}
	for _, r := range f.Tasks {
		have[r.TaskID]++
	}
	for i := range n {
		if have[fmt.Sprintf("old-%d", i)] != 1 {
			t.Fatalf("record old-%d lost or doubled: %v", i, have)
		}
	}
	if (have["cut"] == 1) != whole || have["cut"] > 1 {
		t.Fatalf("the record being added must be there exactly when its line is whole (%v): %v", whole, have)
	}
	for _, id := range more {
		if have[id] != 1 {
			t.Fatalf("record %s lost: %v", id, have)
		}
	}
	if want := n + len(more) + map[bool]int{true: 1}[whole]; len(f.Tasks) != want {
		t.Fatalf("%d records, want %d: %v", len(f.Tasks), want, have)
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAppendNeedsItsOwnLayout: a ledger of another version or layout is never appended to,
// but rewritten (a version 1 file must not get signed records behind its header).
func TestAppendNeedsItsOwnLayout(t *testing.T) {
	for name, data := range map[string]string{
		"version 1": "{\"version\":1,\"tasks\":[\n{\"taskId\":\"a\",\"server\":{\"url\":\"u\"},\"era\":\"2026-07-28\",\"tool\":\"t\",\"createdAt\":\"2026-11-23T00:00:00Z\",\"ttlMs\":null,\"status\":\"working\",\"savedAt\":\"2026-11-23T00:00:00Z\"}\n]}\n",
		"general":   `{"version": 2, "tasks": [{"taskId": "a", "server": {"url": "u"}, "status": "working"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tasks.json")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			st := Open(path)
			if err := st.Put(rec("b", "http://a/mcp")); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if !bytes.HasPrefix(b, header) || bytes.Contains(b, []byte("\n,{")) {
				t.Errorf("want a rewrite in this version's layout:\n%s", b)
			}
			if f := mustLoad(t, st); len(f.Tasks) != 2 {
				t.Errorf("records: %+v", f.Tasks)
			}
		})
	}
}

// TestPutManyAppends: several records added together are one write in place, in order, with
// a later record of the same task and server winning; the file stays JSON.
func TestPutManyAppends(t *testing.T) {
	path, before := appendFixture(t, 2)
	fi1, _ := os.Stat(path)
	second := rec("b", "http://a/mcp")
	second.StatusMessage = "second"
	if err := Open(path).PutMany([]Record{rec("a", "http://a/mcp"), rec("b", "http://a/mcp"), second, rec("old-0", "http://b/mcp")}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi1, fi2) || !bytes.HasPrefix(after, before[:len(before)-len(closing)]) {
		t.Errorf("adding records must write in place, over the closing line only")
	}
	if !json.Valid(after) {
		t.Fatalf("the file must stay JSON:\n%s", after)
	}
	var got []string
	for _, r := range mustLoad(t, Open(path)).Tasks {
		got = append(got, r.TaskID+"@"+r.Server.URL+"="+r.StatusMessage)
	}
	want := []string{"old-0@http://a/mcp=", "old-1@http://a/mcp=", "a@http://a/mcp=", "b@http://a/mcp=second", "old-0@http://b/mcp="}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// TestKilledPutMany: a writer killed at any byte of a write of two records leaves every
// earlier record, each new record exactly when its line is whole, and a file the next Put
// repairs.
func TestKilledPutMany(t *testing.T) {
	path, base := appendFixture(t, 2)
	var write []byte
	var ends []int
	for _, id := range []string{"cut1", "cut2"} {
		line, err := encodeRecord(rec(id, "http://a/mcp"))
		if err != nil {
			t.Fatal(err)
		}
		write = append(append(append(write, ','), line...), '\n')
		ends = append(ends, len(write)-1) // the line without its newline is whole JSON too
	}
	write = append(write, closing...)
	end := len(base) - len(closing)
	for k := 0; k <= len(write); k++ {
		data := append([]byte{}, base[:end]...)
		data = append(data, write[:k]...)
		if end+k < len(base) {
			data = append(data, base[end+k:]...)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		st := Open(path)
		for _, next := range []bool{false, true} {
			if next {
				var ce *CorruptError
				if err := st.Put(rec("next", "http://a/mcp")); err != nil && !(errors.As(err, &ce) && ce.Torn) {
					t.Fatalf("k=%d: Put after the cut: %v", k, err)
				}
			}
			f, err := st.Load()
			if err != nil {
				t.Fatalf("k=%d: Load: %v", k, err)
			}
			have := map[string]int{}
			for _, r := range f.Tasks {
				have[r.TaskID]++
			}
			wantN := 2
			for i, id := range []string{"cut1", "cut2"} {
				if whole := k >= ends[i]; (have[id] == 1) != whole {
					t.Fatalf("k=%d next=%v: %s there %d times, whole=%v: %v", k, next, id, have[id], whole, have)
				} else if whole {
					wantN++
				}
			}
			if next {
				wantN++
			}
			if have["old-0"] != 1 || have["old-1"] != 1 || len(f.Tasks) != wantN {
				t.Fatalf("k=%d next=%v: records %v, want %d", k, next, have, wantN)
			}
		}
		for _, old := range mustGlob(t, path+".torn-*") {
			os.Remove(old)
		}
	}
}

// TestLedgerWritesNoSymlinkTarget plays a ledger directory someone else prepared: tasks.json
// a symbolic link to a file of the user's, and tasks.json.lock a link to another. No write
// goes through either link: a lock that is a link is refused with a message naming it, and a
// ledger that is a link is replaced by a file of its own, the link's target untouched.
func TestLedgerWritesNoSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(victim, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state", "tasks.json")
	st := Open(path)
	if err := st.Put(Record{TaskID: "a", Status: "working", CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	// The ledger's own file becomes a link to the victim, with a valid ledger's content so
	// that an append would take it.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(victim, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(Record{TaskID: "b", Status: "working", CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); !bytes.Equal(got, data) {
		t.Fatalf("the link's target was written:\n%s", got)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("the ledger is still a link: %v", err)
	}
	lockVictim := filepath.Join(dir, "lockvictim")
	_ = os.WriteFile(lockVictim, []byte("keep"), 0o600)
	_ = os.Remove(path + ".lock")
	if err := os.Symlink(lockVictim, path+".lock"); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(Record{TaskID: "c", Status: "working", CreatedAt: time.Now().UTC()}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a lock that is a link: %v", err)
	}
}
