package cmd

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/state"
)

// ledgerRecords reads the ledger file at path.
func ledgerRecords(t *testing.T, path string) []state.Record {
	t.Helper()
	f, err := state.Open(path).Load()
	if err != nil {
		t.Fatalf("load ledger: %v", err)
	}
	return f.Tasks
}

// TestLedgerFollowsTheTask: a detached task is in the ledger, get/result find its server
// without --server, and a shown result leaves the ledger (or stays with --keep).
func TestLedgerFollowsTheTask(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			path := testLedger(t)
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--detach", "--server", url, "--protocol", era, "--bearer-env", "TOKEN")
			if r.Code != ExitUsage {
				t.Fatalf("--bearer-env with an unset variable must be a usage error, got %d", r.Code)
			}
			env := map[string]string{"TOKEN": "s3cret-token-value"}
			r = runCLI(t, t.Context(), env, "call", "sleep", "--arg", "seconds=2", "--detach", "--server", url, "--protocol", era, "--bearer-env", "TOKEN")
			id := strings.TrimSpace(r.Stdout)
			if r.Code != ExitOK || id == "" {
				t.Fatalf("call --detach: code %d stderr %s", r.Code, r.Stderr)
			}
			recs := ledgerRecords(t, path)
			if len(recs) != 1 || recs[0].TaskID != id || recs[0].Era != era || recs[0].Server.URL != url || recs[0].Tool != "sleep" {
				t.Fatalf("ledger after call: %+v", recs)
			}
			if era == "2025-11-25" && recs[0].SessionID == "" {
				t.Errorf("a 2025-11-25 record must keep its session id")
			}
			raw, _ := os.ReadFile(path)
			if strings.Contains(string(raw), "s3cret-token-value") {
				t.Fatalf("the ledger stores a secret:\n%s", raw)
			}
			if !strings.Contains(string(raw), `"TOKEN"`) {
				t.Errorf("the ledger should name the --bearer-env variable:\n%s", raw)
			}

			// No --server: the ledger knows where the task lives.
			g := runCLI(t, t.Context(), env, "get", id, "--json")
			if g.Code != ExitOK || decodeJSON(t, g.Stdout)["taskId"] != id {
				t.Fatalf("get from the ledger: code %d stdout %s stderr %s", g.Code, g.Stdout, g.Stderr)
			}
			// The token is read again from the environment, never from the ledger.
			g = runCLI(t, t.Context(), nil, "get", id)
			if g.Code != ExitUsage || !strings.Contains(g.Stderr, "TOKEN") {
				t.Errorf("get without the token variable: code %d stderr %s", g.Code, g.Stderr)
			}
			res := runCLI(t, t.Context(), env, "result", id, "--keep")
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept") {
				t.Fatalf("result from the ledger: code %d stdout %q stderr %s", res.Code, res.Stdout, res.Stderr)
			}
			recs = ledgerRecords(t, path)
			if len(recs) != 1 || !recs[0].ResultShown || recs[0].Status != "completed" {
				t.Fatalf("--keep must keep the finished record, marked shown: %+v", recs)
			}
			l := runCLI(t, t.Context(), nil, "list")
			if strings.Contains(l.Stdout, id) {
				t.Errorf("list without --all shows a finished task:\n%s", l.Stdout)
			}
			l = runCLI(t, t.Context(), nil, "list", "--all")
			if !strings.Contains(l.Stdout, id) || !strings.Contains(l.Stdout, "completed") {
				t.Errorf("list --all lacks the finished task:\n%s%s", l.Stdout, l.Stderr)
			}
			p := runCLI(t, t.Context(), nil, "prune")
			if p.Code != ExitOK || len(ledgerRecords(t, path)) != 0 {
				t.Fatalf("prune left %v (stderr %s)", ledgerRecords(t, path), p.Stderr)
			}
		})
	}
}

func TestLedgerAmbiguityAndForget(t *testing.T) {
	path := testLedger(t)
	st := state.Open(path)
	for _, u := range []string{"http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"} {
		if err := st.Put(state.Record{TaskID: "same-id", Server: state.Server{URL: u}, Era: "2026-07-28", Tool: "x", Status: "working", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, t.Context(), nil, "get", "same-id")
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "127.0.0.1:1") || !strings.Contains(r.Stderr, "127.0.0.1:2") {
		t.Fatalf("an id on two servers must be a usage error naming both: code %d\n%s", r.Code, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "get", "unknown-id")
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "not in the ledger") {
		t.Fatalf("unknown id without a server: code %d\n%s", r.Code, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "forget", "same-id", "--server", "http://127.0.0.1:1/mcp")
	if r.Code != ExitOK || len(ledgerRecords(t, path)) != 1 {
		t.Fatalf("forget --server must drop only that server's record: code %d, %v", r.Code, ledgerRecords(t, path))
	}
	r = runCLI(t, t.Context(), nil, "forget", "nope")
	if r.Code != ExitExpired {
		t.Errorf("forget of an unknown id: code %d", r.Code)
	}
}

func TestCorruptLedgerIsKeptAside(t *testing.T) {
	path := testLedger(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := []byte("{not json at all")
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "list")
	if r.Code != ExitFailure || !strings.Contains(r.Stderr, "corrupt") {
		t.Fatalf("list on a corrupt ledger: code %d stderr %s", r.Code, r.Stderr)
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 1 {
		t.Fatalf("want the garbage kept aside once, got %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); string(b) != string(garbage) {
		t.Errorf("the kept-aside file changed: %q", b)
	}
	// A new task still gets recorded after the garbage was moved away.
	r = runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", url)
	if r.Code != ExitOK || len(ledgerRecords(t, path)) != 1 {
		t.Fatalf("call after the corrupt file was moved: code %d stderr %s", r.Code, r.Stderr)
	}
}

// TestKill9ThenResume is the reason mcptask exists: kill -9 the process the moment it has
// printed anything about a task, and the task id is already in the ledger; `mcptask resume`
// then follows every task to its end, in both eras (2025-11-25 through its original session).
func TestKill9ThenResume(t *testing.T) {
	url, _ := demoServer(t, demo.Options{StepDelay: 30 * time.Millisecond})
	path := testLedger(t)
	var ids []string
	for _, era := range eras {
		for range 2 {
			cmd := exec.Command(os.Args[0], "call", "sleep", "--arg", "seconds=30", "--server", url, "--protocol", era, "--json")
			cmd.Env = append(os.Environ(), "MCPTASK_TEST_MAIN=1", "MCPTASK_STATE="+path, "XDG_STATE_HOME="+testStateHome(t))
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first byte mcptask prints about the task is the signal to kill it.
			br := bufio.NewReader(stderr)
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("no output from call: %v", err)
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			go io.Copy(io.Discard, br)
			_ = cmd.Wait()
			fields := strings.Fields(line)
			if len(fields) < 2 {
				t.Fatalf("unexpected first line %q", line)
			}
			id := fields[1]
			found := false
			for _, r := range ledgerRecords(t, path) {
				found = found || r.TaskID == id
			}
			if !found {
				t.Fatalf("task %s was printed before it was in the ledger (era %s)", id, era)
			}
			ids = append(ids, id)
		}
	}
	r := runCLI(t, t.Context(), nil, "resume", "--json", "--timeout", "60s")
	if r.Code != ExitOK {
		t.Fatalf("resume: code %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	var doc struct {
		Type  string `json:"type"`
		Tasks []struct {
			TaskID string          `json:"taskId"`
			Status string          `json:"status"`
			Code   int             `json:"code"`
			Result json.RawMessage `json:"result"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("resume --json: %v\n%s", err, r.Stdout)
	}
	if doc.Type != "resume" || len(doc.Tasks) != len(ids) {
		t.Fatalf("resume followed %d tasks, want %d: %s", len(doc.Tasks), len(ids), r.Stdout)
	}
	for _, tk := range doc.Tasks {
		if tk.Status != "completed" || tk.Code != 0 || !strings.Contains(string(tk.Result), "slept") {
			t.Errorf("task %s: status %s code %d result %s", tk.TaskID, tk.Status, tk.Code, tk.Result)
		}
	}
	if left := unshown(ledgerRecords(t, path)); len(left) != 0 {
		t.Errorf("finished tasks must be marked shown and finished: %+v", left)
	}
}

func TestResumeReportsExpired(t *testing.T) {
	path := testLedger(t)
	url, _ := demoServer(t, demo.Options{})
	st := state.Open(path)
	if err := st.Put(state.Record{TaskID: "gone-task", Server: state.Server{URL: url}, Era: "2026-07-28", Protocol: "2026-07-28", Tool: "sleep", Status: "working", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.Context(), nil, "resume")
	if r.Code != ExitExpired || !strings.Contains(r.Stderr, "no longer known") {
		t.Fatalf("resume of a task the server forgot: code %d stderr %s", r.Code, r.Stderr)
	}
	recs := ledgerRecords(t, path)
	if len(recs) != 1 || !recs[0].Expired {
		t.Fatalf("the record must stay, marked expired: %+v", recs)
	}
	r = runCLI(t, t.Context(), nil, "resume")
	if r.Code != ExitOK || !strings.Contains(r.Stderr, "nothing to resume") {
		t.Errorf("an expired task is not resumed again: code %d stderr %s", r.Code, r.Stderr)
	}
}

func TestTimeoutZeroChecksOnce(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			r := runCLI(t, t.Context(), nil, "call", "forever", "--server", url, "--protocol", era, "--timeout", "0")
			if r.Code != ExitStillRunning || !strings.Contains(r.Stderr, "still") {
				t.Fatalf("call --timeout 0 on a running task: code %d, want %d\n%s", r.Code, ExitStillRunning, r.Stderr)
			}
			if n := countMethod(rec, "tasks/get"); n != 0 {
				t.Errorf("--timeout 0 must not poll after creation; saw %d tasks/get", n)
			}
			id := strings.Fields(strings.SplitN(r.Stderr, "\n", 2)[0])[1]
			g := runCLI(t, t.Context(), nil, "result", id, "--timeout", "0")
			if g.Code != ExitStillRunning {
				t.Fatalf("result --timeout 0: code %d\n%s", g.Code, g.Stderr)
			}
			// 2026-07-28 cancellation is cooperative: wait until it has taken effect.
			runCLI(t, t.Context(), nil, "cancel", id, "--wait", "--timeout", "10s", "--keep")
			g = runCLI(t, t.Context(), nil, "result", id, "--timeout", "0")
			if g.Code != ExitCancelled {
				t.Fatalf("result --timeout 0 of a cancelled task: code %d\n%s", g.Code, g.Stderr)
			}
		})
	}
}

// TestWatchManyMostSevere: watch several tasks; exit 0 only if all ended well, else the most
// severe code, and --json lists every task's outcome.
func TestWatchManyMostSevere(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			detach := func(args ...string) string {
				r := runCLI(t, t.Context(), nil, append([]string{"call", "--detach", "--server", url, "--protocol", era}, args...)...)
				if r.Code != ExitOK {
					t.Fatalf("call %v: %d %s", args, r.Code, r.Stderr)
				}
				return strings.TrimSpace(r.Stdout)
			}
			a, b := detach("sleep", "--arg", "seconds=2"), detach("sleep", "--arg", "seconds=3")
			r := runCLI(t, t.Context(), nil, "watch", a, b)
			if r.Code != ExitOK || strings.Count(r.Stdout, "slept") != 2 {
				t.Fatalf("watch of two good tasks: code %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
			}
			c, d := detach("sleep", "--arg", "seconds=2"), detach("forever")
			runCLI(t, t.Context(), nil, "cancel", d)
			r = runCLI(t, t.Context(), nil, "watch", c, d, "--json", "--timeout", "30s")
			if r.Code != ExitCancelled {
				t.Fatalf("watch of a good and a cancelled task: code %d, want %d\n%s", r.Code, ExitCancelled, r.Stderr)
			}
			doc := decodeJSON(t, r.Stdout)
			tasks, _ := doc["tasks"].([]any)
			if doc["type"] != "watch" || len(tasks) != 2 {
				t.Fatalf("watch --json: %s", r.Stdout)
			}
			codes := map[string]float64{}
			for _, x := range tasks {
				m := x.(map[string]any)
				codes[m["taskId"].(string)] = m["code"].(float64)
			}
			if codes[c] != ExitOK || codes[d] != ExitCancelled {
				t.Errorf("per-task codes %v", codes)
			}
		})
	}
}

func TestCancelWaitAndMany(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			detach := func(args ...string) string {
				r := runCLI(t, t.Context(), nil, append([]string{"call", "--detach", "--server", url, "--protocol", era}, args...)...)
				if r.Code != ExitOK {
					t.Fatalf("call %v: %d %s", args, r.Code, r.Stderr)
				}
				return strings.TrimSpace(r.Stdout)
			}
			a := detach("forever")
			r := runCLI(t, t.Context(), nil, "cancel", a, "--wait", "--timeout", "30s")
			if r.Code != ExitOK || !strings.Contains(r.Stdout, "task "+a+" cancelled") {
				t.Fatalf("cancel --wait: code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			// A task seen to its cancelled end stays, finished and shown, for a later look.
			if recs := ledgerRecords(t, testLedger(t)); len(recs) != 1 || recs[0].Status != "cancelled" || !recs[0].ResultShown || recs[0].Unfinished(time.Now()) {
				t.Errorf("a task seen to its cancelled end: %+v, want one cancelled record marked shown", recs)
			}
			b, c := detach("forever"), detach("forever")
			r = runCLI(t, t.Context(), nil, "cancel", b, c, "nonexistent", "--json", "--server", url)
			doc := decodeJSON(t, r.Stdout)
			tasks, _ := doc["tasks"].([]any)
			if r.Code != ExitExpired || doc["type"] != "cancel" || len(tasks) != 3 {
				t.Fatalf("cancel of two tasks and an unknown id: code %d (want %d) stdout %s", r.Code, ExitExpired, r.Stdout)
			}
			r = runCLI(t, t.Context(), nil, "cancel", b, "--timeout", "1s")
			if r.Code != ExitUsage {
				t.Errorf("--timeout without --wait must be a usage error, got %d", r.Code)
			}
		})
	}
}

// TestCrashAtManyMomentsThenRestartAndResume kills `mcptask call` (a real child process) at
// different moments: before anything came back, right after the task was created, and
// mid-poll; then restarts the demo server from its --store file and runs `mcptask resume`.
// Every task in the ledger is driven to its end, in both eras; the ledger always parses; the
// 2025-11-25 tasks are polled in the session that created them, with no new handshake.
func TestCrashAtManyMomentsThenRestartAndResume(t *testing.T) {
	store := filepath.Join(t.TempDir(), "demo-store.json")
	path := testLedger(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	url := "http://" + addr + "/mcp"
	start := func(ln net.Listener, h func(http.Handler) http.Handler) (*demo.Server, *http.Server) {
		srv, err := demo.New(demo.Options{Store: store, StepDelay: 30 * time.Millisecond, PollInterval: 60 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: h(specChecked(t, srv.Handler(), false))}
		go hs.Serve(ln)
		return srv, hs
	}
	srvA, hsA := start(ln, func(h http.Handler) http.Handler { return h })

	killed := 0
	for _, era := range eras {
		for moment := range 4 { // 0: at once; 1: after "task created"; 2, 3: mid-poll
			cmd := exec.Command(os.Args[0], "call", "sleep", "--arg", "seconds=40", "--server", url, "--protocol", era)
			cmd.Env = append(os.Environ(), "MCPTASK_TEST_MAIN=1", "MCPTASK_STATE="+path, "XDG_STATE_HOME="+testStateHome(t))
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(stderr)
			for range moment {
				if _, err := br.ReadString('\n'); err != nil {
					break
				}
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			go io.Copy(io.Discard, br)
			_ = cmd.Wait()
			killed++
			if _, err := state.Open(path).Load(); err != nil {
				t.Fatalf("the ledger does not load after kill -9 (%s, moment %d): %v", era, moment, err)
			}
		}
	}
	recs := ledgerRecords(t, path)
	if len(recs) < 6 {
		t.Fatalf("only %d of %d killed calls left a task in the ledger; every kill after creation must", len(recs), killed)
	}
	sessions := map[string]bool{}
	for _, r := range recs {
		if r.Era == "2025-11-25" {
			if r.SessionID == "" {
				t.Fatalf("2025-11-25 record without a session id: %+v", r)
			}
			sessions[r.SessionID] = true
		}
	}

	// Restart the server from its store, on the same address.
	hsA.Close()
	srvA.Close()
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("re-listen on %s: %v", addr, err)
	}
	var mu sync.Mutex
	var seenSessions []string
	var legacyInits int
	srvB, hsB := start(ln2, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			mu.Lock()
			if strings.Contains(string(body), `"method":"initialize"`) {
				legacyInits++
			}
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				seenSessions = append(seenSessions, sid)
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	defer func() { hsB.Close(); srvB.Close() }()

	r := runCLI(t, t.Context(), nil, "resume", "--json", "--timeout", "60s")
	if r.Code != ExitOK {
		t.Fatalf("resume after restart: code %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	doc := decodeJSON(t, r.Stdout)
	if tasks, _ := doc["tasks"].([]any); len(tasks) != len(recs) {
		t.Fatalf("resume followed %d tasks, the ledger had %d", len(tasks), len(recs))
	}
	if left := unshown(ledgerRecords(t, path)); len(left) != 0 {
		t.Errorf("tasks left unfinished or unshown in the ledger: %+v", left)
	}
	mu.Lock()
	defer mu.Unlock()
	if legacyInits != 0 {
		t.Errorf("resume re-initialized %d times; it must reuse the saved sessions", legacyInits)
	}
	for _, sid := range seenSessions {
		if !sessions[sid] {
			t.Errorf("a request carried session %q, not one the ledger saved", sid)
		}
	}
	if len(sessions) > 0 && len(seenSessions) == 0 {
		t.Errorf("no request carried a saved session id")
	}
}

func TestHeaderValuesNeverStored(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", url, "--header", "X-Secret: hdr-secret-value", "--trace")
	if r.Code != ExitOK {
		t.Fatalf("%d %s", r.Code, r.Stderr)
	}
	raw, _ := os.ReadFile(testLedger(t))
	if strings.Contains(string(raw), "hdr-secret-value") || !strings.Contains(string(raw), "X-Secret") {
		t.Errorf("the ledger must name the header and never store its value:\n%s", raw)
	}
	if strings.Contains(r.Stderr, "hdr-secret-value") {
		t.Errorf("--trace printed a header value")
	}
	id := strings.TrimSpace(r.Stdout)
	g := runCLI(t, t.Context(), nil, "get", id)
	if g.Code != ExitUsage || !strings.Contains(g.Stderr, "X-Secret") {
		t.Errorf("without the header again: %d %s", g.Code, g.Stderr)
	}
	g = runCLI(t, t.Context(), nil, "get", id, "--header", "X-Secret: hdr-secret-value")
	if g.Code != ExitOK {
		t.Errorf("with the header given again: %d %s", g.Code, g.Stderr)
	}
}

func TestListRemote(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url, "--protocol", "2025-11-25")
	id := strings.TrimSpace(r.Stdout)
	l := runCLI(t, t.Context(), nil, "list", "--remote", "--server", url, "--protocol", "2025-11-25")
	if l.Code != ExitOK || !strings.Contains(l.Stdout, "ON THE SERVER") {
		t.Fatalf("list --remote: %d\n%s%s", l.Code, l.Stdout, l.Stderr)
	}
	// The demo binds tasks to sessions: the ledger's session is reused, so the server's own
	// list shows the task, marked as in the ledger.
	remote := l.Stdout[strings.Index(l.Stdout, "ON THE SERVER"):]
	if !strings.Contains(remote, id) || !strings.Contains(remote, "yes") {
		t.Errorf("the server's list lacks the task:\n%s", l.Stdout)
	}
	m := runCLI(t, t.Context(), nil, "list", "--remote", "--server", url, "--protocol", "2026-07-28")
	if m.Code == ExitOK || !strings.Contains(m.Stderr, "no tasks/list") {
		t.Errorf("2026-07-28 has no tasks/list: %d %s", m.Code, m.Stderr)
	}
	runCLI(t, t.Context(), nil, "cancel", id)
}

// TestKill9ManyAcrossTwoServers: a dozen concurrent `mcptask call` processes on two servers,
// all killed with SIGKILL once they have started their tasks, share one ledger; resume finds
// every task and drives each to its end.
func TestKill9ManyAcrossTwoServers(t *testing.T) {
	urls := []string{}
	for range 2 {
		u, _ := demoServer(t, demo.Options{StepDelay: 30 * time.Millisecond})
		urls = append(urls, u)
	}
	path := testLedger(t)
	const n = 12
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			era := eras[i%2]
			cmd := exec.Command(os.Args[0], "call", "sleep", "--arg", "seconds=30", "--server", urls[i%2], "--protocol", era)
			cmd.Env = append(os.Environ(), "MCPTASK_TEST_MAIN=1", "MCPTASK_STATE="+path, "XDG_STATE_HOME="+testStateHome(t))
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			line, err := bufio.NewReader(stderr).ReadString('\n')
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			if f := strings.Fields(line); err == nil && len(f) > 1 {
				ids <- f[1]
			}
		}()
	}
	wg.Wait()
	close(ids)
	recs := ledgerRecords(t, path)
	inLedger := map[string]bool{}
	for _, r := range recs {
		inLedger[r.TaskID] = true
	}
	count := 0
	for id := range ids {
		count++
		if !inLedger[id] {
			t.Errorf("task %s was printed but is not in the ledger", id)
		}
	}
	if count != n || len(recs) != n {
		t.Fatalf("%d tasks printed, %d in the ledger, want %d", count, len(recs), n)
	}
	r := runCLI(t, t.Context(), nil, "resume", "--json", "--timeout", "60s")
	if r.Code != ExitOK {
		t.Fatalf("resume: %d\n%s", r.Code, r.Stderr)
	}
	if tasks := decodeJSON(t, r.Stdout)["tasks"].([]any); len(tasks) != n {
		t.Errorf("resume followed %d tasks, want %d", len(tasks), n)
	}
	if left := unshown(ledgerRecords(t, path)); len(left) != 0 {
		t.Errorf("%d tasks left unfinished or unshown in the ledger", len(left))
	}
}

// unshown are the records of recs that a follow has not seen to their end: unfinished, or
// finished without their outcome shown. A finished, shown record stays in the ledger (so that
// 'mcptask result' can be asked again) until prune.
func unshown(recs []state.Record) []state.Record {
	var out []state.Record
	for _, r := range recs {
		if r.Unfinished(time.Now()) || !r.ResultShown {
			out = append(out, r)
		}
	}
	return out
}
