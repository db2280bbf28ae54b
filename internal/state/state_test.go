package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as a ledger writer in a child process, for the
// multi-process and kill -9 tests.
func TestMain(m *testing.M) {
	switch os.Getenv("STATE_TEST_CHILD") {
	case "put":
		n, _ := strconv.Atoi(os.Getenv("STATE_TEST_N"))
		st := Open(os.Getenv("STATE_TEST_PATH"))
		update := os.Getenv("STATE_TEST_UPDATE") == "1"
		for i := range n {
			r := rec(fmt.Sprintf("%s-%d", os.Getenv("STATE_TEST_PREFIX"), i), "http://a/mcp")
			if err := st.Put(r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if update {
				if err := st.Patch(r.Server.Key(), r.TaskID, func(r *Record) { r.Status, r.StatusMessage = "completed", "updated by its writer" }); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
			fmt.Println(i) // progress, so the parent can kill at a known point
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func rec(id, url string) Record {
	ttl := Millis(60_000)
	return Record{TaskID: id, Server: Server{URL: url}, Era: "2026-07-28", Tool: "sleep", Status: "working",
		CreatedAt: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), TTL: &ttl, PollInterval: 1000}
}

func TestRoundTripAndIdentity(t *testing.T) {
	st := Open(filepath.Join(t.TempDir(), "d", "tasks.json"))
	if f, err := st.Load(); err != nil || len(f.Tasks) != 0 {
		t.Fatalf("a missing file is an empty ledger: %v %v", f, err)
	}
	a, b := rec("t1", "http://a/mcp"), rec("t1", "http://b/mcp")
	for _, r := range []Record{a, b} {
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	a.Status, a.StatusMessage = "input_required", "need a name"
	if err := st.Put(a); err != nil {
		t.Fatal(err)
	}
	got, err := st.Find("t1")
	if err != nil || len(got) != 2 {
		t.Fatalf("the same id on two servers is two records: %v %v", got, err)
	}
	for _, r := range got {
		if r.Server.URL == "http://a/mcp" && r.Status != "input_required" {
			t.Errorf("Put must replace the record of the same server: %+v", r)
		}
		if r.SavedAt.IsZero() {
			t.Errorf("SavedAt not set")
		}
	}
	if err := st.Patch(b.Server.Key(), "t1", func(r *Record) { r.Status = "completed" }); err != nil {
		t.Fatal(err)
	}
	removed, err := st.Prune(time.Date(2026, 11, 23, 0, 0, 30, 0, time.UTC))
	if err != nil || len(removed) != 1 || removed[0].Server.URL != "http://b/mcp" {
		t.Fatalf("prune removes only the terminal record: %v %v", removed, err)
	}
	ok, err := st.Delete(a.Server.Key(), "t1")
	if err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, _ := st.Delete(a.Server.Key(), "t1"); ok {
		t.Errorf("a second delete must report that nothing was there")
	}
	fi, err := os.Stat(st.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("ledger mode %v, want 0600 (%v)", fi.Mode().Perm(), err)
	}
	di, _ := os.Stat(filepath.Dir(st.Path()))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("ledger directory mode %v, want 0700", di.Mode().Perm())
	}
	var raw map[string]any
	data, _ := os.ReadFile(st.Path())
	if err := json.Unmarshal(data, &raw); err != nil || raw["version"] != float64(Version) {
		t.Errorf("the file must be JSON with a version field: %s", data)
	}
}

func TestExpiry(t *testing.T) {
	r := rec("x", "u")
	created := r.CreatedAt
	if r.ExpiredAt(created.Add(59*time.Second)) || !r.ExpiredAt(created.Add(61*time.Second)) {
		t.Errorf("ttl 60s counted from createdAt")
	}
	r.TTL = nil
	if r.ExpiredAt(created.Add(1000 * time.Hour)) {
		t.Errorf("a null ttl never expires")
	}
	r.Expired = true
	if !r.ExpiredAt(created) || r.Unfinished(created) {
		t.Errorf("the Expired flag wins")
	}
}

func TestResolvePath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/f/t.json", map[string]string{"MCPTASK_STATE": "/e/t.json"}, "/f/t.json"},
		{"", map[string]string{"MCPTASK_STATE": "/e/t.json", "XDG_STATE_HOME": "/x"}, "/e/t.json"},
		{"", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/mcptask/tasks.json"},
		{"", map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}, "/h/.local/state/mcptask/tasks.json"},
		{"", map[string]string{"HOME": "/h"}, "/h/.local/state/mcptask/tasks.json"},
	}
	for _, c := range cases {
		got, err := ResolvePath(c.flag, env(c.env))
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q, %v) = %q, %v; want %q", c.flag, c.env, got, err, c.want)
		}
	}
}

func TestCorruptFileIsKeptAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	garbage := []byte(`{"version":1,"tasks":[{"taskId":`)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	st := Open(path)
	_, err := st.Load()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Load of garbage: %v, want *CorruptError", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), ce.Aside) {
		t.Errorf("the error must name both paths: %v", err)
	}
	if b, _ := os.ReadFile(ce.Aside); string(b) != string(garbage) {
		t.Errorf("the corrupt file must be kept byte for byte, got %q", b)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nothing may be written over the corrupt file by Load")
	}
	// An Update meeting garbage records its task in a fresh ledger and still reports it.
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = st.Put(rec("new", "http://a/mcp"))
	if !errors.As(err, &ce) {
		t.Fatalf("Put over garbage: %v, want *CorruptError", err)
	}
	if got, _ := st.Find("new"); len(got) != 1 {
		t.Errorf("the task being recorded must not be lost: %v", got)
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 2 {
		t.Errorf("want both corrupt files kept aside, got %v", matches)
	}
}

// TestDamagedFiles: truncated and empty files are kept aside with a clear error, like garbage.
func TestDamagedFiles(t *testing.T) {
	good, _ := json.Marshal(File{Version: 1, Tasks: []Record{rec("a", "u")}})
	for name, data := range map[string][]byte{
		"truncated":  good[:len(good)/2],
		"empty":      {},
		"no version": []byte(`{"tasks": []}`),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tasks.json")
			os.WriteFile(path, data, 0o600)
			_, err := Open(path).Load()
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Load: %v, want *CorruptError", err)
			}
			if b, _ := os.ReadFile(ce.Aside); string(b) != string(data) {
				t.Errorf("kept-aside bytes differ")
			}
		})
	}
}

func TestNewerVersionIsLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	data := []byte(`{"version": 99, "tasks": []}`)
	_ = os.WriteFile(path, data, 0o600)
	err := Open(path).Put(rec("x", "u"))
	if err == nil || !strings.Contains(err.Error(), "99") {
		t.Fatalf("a newer format must be refused, naming its version: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(data) {
		t.Errorf("a newer file must not be rewritten")
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	st := Open(filepath.Join(t.TempDir(), "tasks.json"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := st.Put(rec(fmt.Sprintf("g%d-%d", g, i), "http://a/mcp")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	f, err := st.Load()
	if err != nil || len(f.Tasks) != 200 {
		t.Fatalf("want 200 records, got %d (%v)", len(f.Tasks), err)
	}
}

func child(path, prefix string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "STATE_TEST_CHILD=put", "STATE_TEST_PATH="+path, "STATE_TEST_PREFIX="+prefix, "STATE_TEST_N="+strconv.Itoa(n))
	return cmd
}

// TestConcurrentProcesses is parallel CI jobs sharing one ledger: 16 processes each add and
// update 100 records at once; no update may be lost or damaged.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("3,200 locked writes")
	}
	path := filepath.Join(t.TempDir(), "tasks.json")
	var cmds []*exec.Cmd
	for p := range 16 {
		c := child(path, fmt.Sprintf("p%d", p), 100)
		c.Env = append(c.Env, "STATE_TEST_UPDATE=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	f, err := Open(path).Load()
	if err != nil || len(f.Tasks) != 1600 {
		t.Fatalf("want 1,600 records from 16 processes, got %d (%v)", len(f.Tasks), err)
	}
	for _, r := range f.Tasks {
		if r.Status != "completed" || r.StatusMessage != "updated by its writer" {
			t.Fatalf("an update was lost: %+v", r)
		}
	}
}

// TestKill9NeverCorrupts kills a writer at arbitrary points; the file always parses and holds
// every record the writer had confirmed before it died.
func TestKill9NeverCorrupts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	for iter := range 20 {
		c := child(path, fmt.Sprintf("k%d", iter), 1000)
		out, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		confirmed := -1
		for sc.Scan() && confirmed < iter%7+1 {
			confirmed, _ = strconv.Atoi(sc.Text())
		}
		_ = c.Process.Signal(syscall.SIGKILL)
		_ = c.Wait()
		f, err := Open(path).Load()
		if err != nil {
			t.Fatalf("iteration %d: the ledger does not load after kill -9: %v", iter, err)
		}
		have := map[string]bool{}
		for _, r := range f.Tasks {
			have[r.TaskID] = true
		}
		for i := 0; i <= confirmed; i++ {
			if id := fmt.Sprintf("k%d-%d", iter, i); !have[id] {
				t.Fatalf("iteration %d: confirmed record %s lost", iter, id)
			}
		}
	}
	if left, _ := filepath.Glob(path + ".tmp-*"); len(left) > 20 {
		t.Errorf("temp files pile up: %d", len(left))
	}
}

func TestPatchMany(t *testing.T) {
	st := Open(filepath.Join(t.TempDir(), "tasks.json"))
	a, b, c := rec("t1", "http://a/mcp"), rec("t1", "http://b/mcp"), rec(`t"2`, "http://a/mcp")
	for _, r := range []Record{a, b, c} {
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := st.Find(`t"2`)
	err := st.PatchMany([]Change{
		{Key: a.Server.Key(), ID: "t1", Fn: func(r *Record) { r.StatusMessage = "first" }},
		{Key: a.Server.Key(), ID: "gone", Fn: func(r *Record) { t.Error("a missing record must not be patched") }},
		{Key: a.Server.Key(), ID: "t1", Fn: func(r *Record) { r.Status = "completed"; r.StatusMessage += ", then second" }},
		{Key: c.Server.Key(), ID: `t"2`, Fn: func(r *Record) { r.Status = "working" }}, // no change
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mustLoad(t, st).Tasks {
		switch {
		case r.TaskID == "t1" && r.Server.URL == "http://a/mcp":
			if r.Status != "completed" || r.StatusMessage != "first, then second" {
				t.Errorf("changes must apply in order to the record of their server: %+v", r)
			}
		case r.TaskID == "t1":
			if r.Status != "working" || r.StatusMessage != "" {
				t.Errorf("the same id on another server must be left alone: %+v", r)
			}
		default:
			if !r.SavedAt.Equal(before[0].SavedAt) {
				t.Errorf("an unchanged record must keep its SavedAt: %v then %v", before[0].SavedAt, r.SavedAt)
			}
		}
	}
	// Nothing to change: the file is not rewritten (an atomic rewrite is a new inode).
	fi1, _ := os.Stat(st.Path())
	if err := st.PatchMany([]Change{{Key: c.Server.Key(), ID: `t"2`, Fn: func(r *Record) {}}}); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(st.Path())
	if !os.SameFile(fi1, fi2) {
		t.Errorf("a batch that changes nothing must not rewrite the ledger")
	}
}

// TestPatchManyDeletes: a batch can drop records among its changes, in order: a change after
// the drop finds the record gone, and the same id on another server stays.
func TestPatchManyDeletes(t *testing.T) {
	st := Open(filepath.Join(t.TempDir(), "tasks.json"))
	a, b, c := rec("t1", "http://a/mcp"), rec("t1", "http://b/mcp"), rec("t2", "http://a/mcp")
	for _, r := range []Record{a, b, c} {
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	err := st.PatchMany([]Change{
		{Key: a.Server.Key(), ID: "t1", Fn: func(r *Record) { r.Status = "completed" }},
		{Key: a.Server.Key(), ID: "t1", Delete: true},
		{Key: a.Server.Key(), ID: "t1", Fn: func(r *Record) { t.Error("a dropped record must not be patched") }},
		{Key: c.Server.Key(), ID: "t2", Fn: func(r *Record) { r.StatusMessage = "still here" }},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Record{}
	for _, r := range mustLoad(t, st).Tasks {
		got[r.Server.URL+" "+r.TaskID] = r
	}
	if _, ok := got["http://a/mcp t1"]; ok || len(got) != 2 {
		t.Fatalf("want t1 on a dropped and the others kept: %v", got)
	}
	if got["http://b/mcp t1"].Status != "working" || got["http://a/mcp t2"].StatusMessage != "still here" {
		t.Errorf("the other records: %+v", got)
	}
}

func mustLoad(t *testing.T, st *Store) *File {
	t.Helper()
	f, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	return f
}
