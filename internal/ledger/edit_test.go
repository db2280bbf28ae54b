package ledger

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/state"
)

// TestForget removes a task id on every server, or only on the server key names, and tells
// the ids it removed from those it did not find (a repeated id is not found the second time).
func TestForget(t *testing.T) {
	st := newStore(t)
	other := record("a")
	other.Server = state.Server{URL: "http://127.0.0.1:2/mcp"}
	if err := st.PutMany([]state.Record{record("a"), other, record("b"), record("c")}); err != nil {
		t.Fatal(err)
	}
	forgot, missing, err := Forget(st, []string{"a", "nope"}, other.Server.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forgot, []string{"a"}) || !slices.Equal(missing, []string{"nope"}) {
		t.Fatalf("Forget = %v, %v; want [a], [nope]", forgot, missing)
	}
	if recs, _ := st.Find("a"); len(recs) != 1 || recs[0].Server.Key() != key() {
		t.Fatalf("a on the other server should stay: %+v", recs)
	}
	forgot, missing, err = Forget(st, []string{"a", "b", "b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forgot, []string{"a"}) || !slices.Equal(missing, []string{"b"}) {
		t.Fatalf("Forget with a repeated id = %v, %v; want [a], [b]", forgot, missing)
	}
	file, _ := st.Load()
	if len(file.Tasks) != 1 || file.Tasks[0].TaskID != "c" {
		t.Fatalf("ledger after forget = %+v, want c alone", file.Tasks)
	}
	if forgot, _, _ = Forget(st, []string{"zzz"}, ""); forgot == nil {
		t.Fatal("forgotten must be an empty list, not nil (the JSON contract prints [])")
	}
}

// TestAdopt signs a record whose signature does not check, leaves one already signed alone,
// and names the ids the ledger does not have.
func TestAdopt(t *testing.T) {
	st := newStore(t)
	k, err := state.NewKeyring(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	foreign := record("foreign")
	foreign.Server = state.Server{Command: []string{"helper", "--x"}}
	mine := record("mine")
	mine.Server = state.Server{Command: []string{"helper"}}
	if err := k.Sign(&mine); err != nil {
		t.Fatal(err)
	}
	if err := st.PutMany([]state.Record{foreign, mine}); err != nil {
		t.Fatal(err)
	}
	done, missing, err := Adopt(st, k, []string{"foreign", "mine", "gone"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, []string{"gone"}) || len(done) != 2 || !done[0].Adopted || done[1].Adopted {
		t.Fatalf("Adopt = %+v, missing %v; want foreign adopted, mine already so, gone missing", done, missing)
	}
	if err := k.Check(*find(t, st, "foreign")); err != nil {
		t.Fatalf("the adopted record does not check: %v", err)
	}
	// A key naming another server adopts nothing there.
	if done, missing, _ = Adopt(st, k, []string{"foreign"}, key()); len(done) != 0 || len(missing) != 1 {
		t.Fatalf("Adopt on another server = %+v, %v; want the id missing", done, missing)
	}
}

// TestPick picks the record on the named server, the only one, or refuses to guess.
func TestPick(t *testing.T) {
	a, b := record("t"), record("t")
	b.Server = state.Server{URL: "http://127.0.0.1:2/mcp"}
	recs := []state.Record{a, b}
	if r, err := Pick("t", recs, b.Server.Key()); err != nil || r == nil || r.Server.Key() != b.Server.Key() {
		t.Fatalf("Pick on b's server = %+v, %v", r, err)
	}
	if r, err := Pick("t", recs, "nowhere"); r != nil || err != nil {
		t.Fatalf("Pick on a server with no record = %+v, %v; want none", r, err)
	}
	if r, err := Pick("t", recs[:1], ""); err != nil || r == nil || r.Server.Key() != a.Server.Key() {
		t.Fatalf("Pick of the only record = %+v, %v", r, err)
	}
	var amb *AmbiguousError
	if _, err := Pick("t", recs, ""); !errors.As(err, &amb) || !strings.Contains(err.Error(), "for 2 servers") || !strings.Contains(err.Error(), "127.0.0.1:2") {
		t.Fatalf("Pick of two records with no server named = %v, want an AmbiguousError listing both", err)
	}
}

// TestCompletions offers matching ids only, never one a shell could be tricked by.
func TestCompletions(t *testing.T) {
	bad := record("ab\x1b[31m")
	got := Completions([]state.Record{record("abc"), record("xyz"), bad}, "ab")
	if len(got) != 1 || !strings.HasPrefix(got[0], "abc\tslow on ") || !strings.HasSuffix(got[0], "(working)") {
		t.Fatalf("Completions = %q, want abc alone with its description", got)
	}
}

// TestFind: the ledger's record when it has one, none when a server can be asked instead, and
// a usage error when the command line must say more (two servers, or no record and no server).
func TestFind(t *testing.T) {
	st := state.Open(filepath.Join(t.TempDir(), "tasks.json"))
	a, b := record("t"), record("t")
	b.Server = state.Server{URL: "http://127.0.0.1:2/mcp"}
	for _, r := range []state.Record{a, b, record("one")} {
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	none := func() (string, error) { return "", nil }
	if r, err := Find(st, "one", none, false); err != nil || r == nil || r.TaskID != "one" {
		t.Fatalf("Find of the only record = %+v, %v", r, err)
	}
	if r, err := Find(st, "t", func() (string, error) { return b.Server.Key(), nil }, true); err != nil || r == nil || r.Server.Key() != b.Server.Key() {
		t.Fatalf("Find on b's server = %+v, %v", r, err)
	}
	var ue *exitcode.UsageError
	if _, err := Find(st, "t", none, false); !errors.As(err, &ue) {
		t.Fatalf("two servers, none named: %v, want a usage error", err)
	}
	if r, err := Find(st, "missing", none, true); r != nil || err != nil {
		t.Fatalf("no record, a server to ask: %+v, %v; want none", r, err)
	}
	if _, err := Find(st, "missing", none, false); !errors.As(err, &ue) || !strings.Contains(err.Error(), "no server was given") {
		t.Fatalf("no record and no server: %v, want a usage error saying so", err)
	}
}
