package state

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func stdioRec(id string) Record {
	r := rec(id, "")
	r.Server = Server{Command: []string{"sh", "-c", "touch marker"}, Dir: "/tmp", EnvNames: []string{"API_KEY"}}
	return r
}

// TestSignedRecordsSurviveTheLedger: a record signed on creation still checks after the
// ledger saved it, and after status updates (which never need the key).
func TestSignedRecordsSurviveTheLedger(t *testing.T) {
	dir := t.TempDir()
	k, err := NewKeyring(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(k.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the key is made on first use, not before: %v", err)
	}
	r := stdioRec("t1")
	if err := k.Check(r); !errors.Is(err, ErrNotSigned) {
		t.Fatalf("an unsigned record: %v", err)
	}
	if err := k.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(k.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	st := Open(filepath.Join(t.TempDir(), "tasks.json"))
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	if err := st.Patch(r.Server.Key(), "t1", func(r *Record) { r.Status = "input_required"; r.StatusMessage = "x" }); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Find("t1")
	// A new keyring on the same directory: another mcptask process of the same user.
	k2, _ := NewKeyring(dir, "")
	if err := k2.Check(got[0]); err != nil {
		t.Fatalf("the user's own record after a status update: %v", err)
	}
	// Any change to what resuming would run or send breaks the MAC.
	for name, edit := range map[string]func(*Record){
		"command":    func(r *Record) { r.Server.Command = []string{"sh", "-c", "curl evil"} },
		"dir":        func(r *Record) { r.Server.Dir = "/" },
		"env":        func(r *Record) { r.Server.EnvNames = append(r.Server.EnvNames, "AWS_SECRET_ACCESS_KEY") },
		"bearer-env": func(r *Record) { r.Server.BearerEnv = "GITHUB_TOKEN" },
		"task id":    func(r *Record) { r.TaskID = "other" },
	} {
		e := got[0]
		e.Server.EnvNames = append([]string(nil), e.Server.EnvNames...)
		edit(&e)
		if err := k2.Check(e); !errors.Is(err, ErrForeignKey) {
			t.Errorf("edited %s: %v", name, err)
		}
	}
}

// TestForeignAndExplicitKeys: a record signed by someone else's key is refused; an explicit
// key ($MCPTASK_LEDGER_KEY) carries records between machines, and is checked beside the file.
func TestForeignAndExplicitKeys(t *testing.T) {
	mine, _ := NewKeyring(t.TempDir(), "")
	theirs, _ := NewKeyring(t.TempDir(), "")
	r := stdioRec("t1")
	if err := theirs.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if err := mine.Check(r); !errors.Is(err, ErrForeignKey) {
		t.Fatalf("a record signed by another key: %v", err)
	}
	if _, err := NewKeyring(t.TempDir(), "short"); err == nil {
		t.Errorf("a short explicit key must be refused")
	}
	const shared = "0123456789abcdef0123456789abcdef"
	jobA, _ := NewKeyring(t.TempDir(), shared)
	jobB, _ := NewKeyring(t.TempDir(), shared)
	if err := jobA.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jobA.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("signing with the explicit key needs no key file")
	}
	if err := jobB.Check(r); err != nil {
		t.Errorf("the shared key: %v", err)
	}
	if err := mine.Check(r); !errors.Is(err, ErrForeignKey) {
		t.Errorf("without the shared key: %v", err)
	}
	// With the explicit key set, the user's own key file still vouches for its records.
	dir := t.TempDir()
	own, _ := NewKeyring(dir, "")
	r2 := stdioRec("t2")
	_ = own.Sign(&r2)
	withEnv, _ := NewKeyring(dir, shared)
	if err := withEnv.Check(r2); err != nil {
		t.Errorf("the key file's record with $%s set: %v", KeyEnv, err)
	}
}

// TestKeyCreatedOnce: processes that start at once agree on one key.
func TestKeyCreatedOnce(t *testing.T) {
	dir := t.TempDir()
	r := stdioRec("t1")
	var wg sync.WaitGroup
	macs := make([]string, 8)
	for i := range macs {
		wg.Go(func() {
			k, _ := NewKeyring(dir, "")
			rr := r
			if err := k.Sign(&rr); err != nil {
				t.Error(err)
			}
			macs[i] = rr.MAC
		})
	}
	wg.Wait()
	for _, m := range macs {
		if m != macs[0] {
			t.Fatalf("two keys were made: %v", macs)
		}
	}
}

// TestVersion1LedgerStillReads: a ledger from before records were signed loads, its records
// unsigned; the next write upgrades the file's version.
func TestVersion1LedgerStillReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	old := `{"version":1,"tasks":[
{"taskId":"t1","server":{"url":"http://a/mcp"},"era":"2026-07-28","tool":"sleep","createdAt":"2026-11-23T00:00:00Z","ttlMs":null,"status":"working","savedAt":"2026-11-23T00:00:00Z"}
]}
`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	st := Open(path)
	f, err := st.Load()
	if err != nil || len(f.Tasks) != 1 || f.Tasks[0].MAC != "" {
		t.Fatalf("load v1: %v %+v", err, f)
	}
	if err := st.Put(rec("t2", "http://a/mcp")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := `{"version":2,"tasks":[`; string(b[:len(want)]) != want {
		t.Errorf("rewritten as %q", b[:len(want)])
	}
}

func TestGrants(t *testing.T) {
	if g := (Server{URL: "https://x/mcp"}).Grants(); len(g) != 0 {
		t.Errorf("a bare URL grants nothing: %v", g)
	}
	g := Server{URL: "https://x/mcp", BearerEnv: "TOKEN", HeaderNames: []string{"X-Api-Key"}, OAuth: &OAuth{Issuer: "https://as"}}.Grants()
	if len(g) != 3 {
		t.Errorf("bearer, header, oauth: %v", g)
	}
	g = stdioRec("x").Server.Grants()
	if len(g) != 2 || g[0] != "start the command sh -c 'touch marker' in /tmp" {
		t.Errorf("stdio: %q", g)
	}
}

// TestKeyOthersCanReadIsRefused: a key file other users can read lets them sign records.
func TestKeyOthersCanReadIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := t.TempDir()
	k, _ := NewKeyring(dir, "")
	r := stdioRec("t1")
	if err := k.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(k.Path(), 0o644); err != nil {
		t.Fatal(err)
	}
	k2, _ := NewKeyring(dir, "")
	if err := k2.Check(r); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key: %v", err)
	}
}
