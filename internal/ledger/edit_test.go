package ledger

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	if !slices.Equal(forgot, []string{"a", "b"}) || !slices.Equal(missing, []string{"b"}) {
		t.Fatalf("Forget with a repeated id = %v, %v; want [a b], [b]", forgot, missing)
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
	abc := record("abc")
	now := abc.SeenAt
	got := Completions([]state.Record{abc, record("xyz"), bad}, "ab", now.Add(2*time.Minute))
	if len(got) != 1 || !strings.HasPrefix(got[0], "abc\tworking, seen 2m00s ago · slow on ") {
		t.Fatalf("Completions = %q, want abc alone with its state, when it was seen, tool and server", got)
	}
	// The record's real state: a task whose TTL ran out is expired, whatever it last said; and
	// no parentheses, which shells wrap descriptions in.
	ttl := state.Millis(1000)
	old := record("abcd-old")
	old.TTL = &ttl
	got = Completions([]state.Record{old}, "", now.Add(time.Hour))
	if len(got) != 1 || !strings.HasPrefix(got[0], "abcd-old\texpired · slow on ") || strings.ContainsAny(got[0], "()") {
		t.Fatalf("Completions of an expired task = %q, want it described as expired, without parentheses", got)
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

// TestMatchPrefix: the exact id always wins; else a prefix of at least MinPrefix characters
// names the one task id it starts (on the named server, when one is named); a prefix of two
// task ids is a usage error that lists both and says to type more; a short or unknown prefix
// matches nothing, as an id the ledger does not have.
func TestMatchPrefix(t *testing.T) {
	other := state.Server{URL: "http://127.0.0.1:2/mcp"}
	exact, one, two := record("abcd"), record("abcd1111"), record("abcd2222\x1b[2J")
	two.Server = other
	recs := []state.Record{exact, one, two}
	if got, err := Match(recs, "abcd", ""); err != nil || len(got) != 1 || got[0].TaskID != "abcd" {
		t.Fatalf("the exact id abcd (also a prefix of two others) = %+v, %v; want abcd alone", got, err)
	}
	if got, err := Match(recs, "abcd1", ""); err != nil || len(got) != 1 || got[0].TaskID != "abcd1111" {
		t.Fatalf("unique prefix abcd1 = %+v, %v; want abcd1111", got, err)
	}
	for _, id := range []string{"abc", "a", "zzzz", ""} {
		if got, err := Match(recs, id, ""); err != nil || len(got) != 0 {
			t.Fatalf("Match(%q) = %+v, %v; want nothing (too short, or no such id)", id, got, err)
		}
	}
	var ue *exitcode.UsageError
	var pe *PrefixError
	_, err := Match(recs[1:], "abcd", "")
	if !errors.As(err, &ue) || !errors.As(err, &pe) || len(pe.Matches) != 2 {
		t.Fatalf("abcd of abcd1111 and abcd2222: %v, want a usage error listing both", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "matches 2 tasks") || !strings.Contains(msg, "type more characters") ||
		!strings.Contains(msg, "abcd1111") || !strings.Contains(msg, "127.0.0.1:2") || !strings.Contains(msg, "slow") ||
		!strings.Contains(msg, "working") {
		t.Errorf("the error must list each match (id, server, tool, status) and say what to do:\n%s", msg)
	}
	if strings.Contains(msg, "\x1b") {
		t.Errorf("a task id from the ledger reached the error unescaped: %q", msg)
	}
	// The named server settles it.
	if got, err := Match(recs[1:], "abcd", other.Key()); err != nil || len(got) != 1 || got[0].Server.Key() != other.Key() {
		t.Fatalf("abcd on the other server = %+v, %v; want abcd2222", got, err)
	}
	// One task id on two servers is one match: Pick (and --server) chooses the server.
	twin := one
	twin.Server = other
	if got, err := Match([]state.Record{one, twin}, "abcd", ""); err != nil || len(got) != 2 {
		t.Fatalf("one id on two servers = %+v, %v; want both records", got, err)
	}
}

// TestFindPrefix: Find resolves a unique prefix to the whole record, refuses an ambiguous one
// before anything else, and leaves an id the ledger has no match for to the named server.
func TestFindPrefix(t *testing.T) {
	st := newStore(t)
	if err := st.PutMany([]state.Record{record("5d65aa00"), record("5d65bb11"), record("77e1cc22")}); err != nil {
		t.Fatal(err)
	}
	none := func() (string, error) { return "", nil }
	if r, err := Find(st, "77e1", none, false); err != nil || r == nil || r.TaskID != "77e1cc22" {
		t.Fatalf("Find(77e1) = %+v, %v; want 77e1cc22", r, err)
	}
	var ue *exitcode.UsageError
	if _, err := Find(st, "5d65", none, true); !errors.As(err, &ue) || !strings.Contains(err.Error(), "5d65aa00") {
		t.Fatalf("Find(5d65) = %v; want a usage error listing the matches, even with a server to ask", err)
	}
	if r, err := Find(st, "5d65b", none, false); err != nil || r == nil || r.TaskID != "5d65bb11" {
		t.Fatalf("Find(5d65b) = %+v, %v", r, err)
	}
	// Not in the ledger at all: the server is asked with the id as given (watch of a task
	// someone else created).
	if r, err := Find(st, "9999-elsewhere", none, true); r != nil || err != nil {
		t.Fatalf("an unknown id with a server = %+v, %v; want none, no error", r, err)
	}
	if _, err := Find(st, "5d6", none, false); !errors.As(err, &ue) || !strings.Contains(err.Error(), "at least 4 characters") {
		t.Fatalf("a 3-character prefix: %v; want not in the ledger, saying a prefix needs 4 characters", err)
	}
	// forget takes prefixes too, and an ambiguous one removes nothing.
	if _, _, err := Forget(st, []string{"77e1cc22", "5d65"}, ""); !errors.As(err, &ue) {
		t.Fatalf("Forget(5d65) = %v; want a usage error", err)
	}
	if file, _ := st.Load(); len(file.Tasks) != 3 {
		t.Fatalf("an ambiguous forget removed records: %+v", file.Tasks)
	}
	if forgot, missing, err := Forget(st, []string{"5d65a"}, ""); err != nil || !slices.Equal(forgot, []string{"5d65aa00"}) || len(missing) != 0 {
		t.Fatalf("Forget(5d65a) = %v, %v, %v; want the whole id forgotten", forgot, missing, err)
	}
}
