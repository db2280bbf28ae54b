package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/hostile"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// screenBound is the most a run against the size modes may print on stderr, or on stdout when
// it prints no result: a few of mcptask's own lines, each server string cut to termsafe.Limit.
const screenBound = 64 << 10

// ledgerSize returns the size of the test's ledger file, 0 when there is none.
func ledgerSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(testLedger(t))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestHostileSizeHugeStrings plays a server whose status messages, error messages, result
// texts and descriptions are each 1 MiB longer than honest: the ledger stays a few KiB, the
// status and error lines are cut with a visible mark, and only the result itself, which is
// the data the user asked for, is printed whole.
func TestHostileSizeHugeStrings(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := hostile.Start(t, "size-huge-strings", demo.Options{})
			base := []string{"--server", s.URL, "--protocol", era}

			r := runMcptask(t, nil, append([]string{"call", "sleep", "--arg", "seconds=2", "--arg", "steps=2", "--keep"}, base...)...)
			mustCode(t, r, ExitOK, "call sleep")
			if len(r.Stderr) > screenBound || !strings.Contains(r.Stderr, "…[cut ") {
				t.Errorf("call sleep: %d bytes of status lines on stderr, want at most %d, cut visibly", len(r.Stderr), screenBound)
			}
			if len(r.Stdout) < hostile.HugeText {
				t.Errorf("call sleep: the result was cut (%d bytes); it is the data the user asked for", len(r.Stdout))
			}

			r = runMcptask(t, nil, append([]string{"call", "sleep", "--arg", "seconds=60", "--detach"}, base...)...)
			mustCode(t, r, ExitOK, "call --detach")
			id := strings.TrimSpace(r.Stdout)
			for _, args := range [][]string{{"get", id}, {"list", "--all"}} {
				r = runMcptask(t, nil, args...)
				mustCode(t, r, ExitOK, strings.Join(args, " "))
				if len(r.Stdout)+len(r.Stderr) > screenBound {
					t.Errorf("%s printed %d bytes", strings.Join(args, " "), len(r.Stdout)+len(r.Stderr))
				}
			}

			r = runMcptask(t, nil, append([]string{"call", "fail", "--arg", "message=nope", "--keep"}, base...)...)
			mustCode(t, r, ExitTaskFailed, "call fail")
			if len(r.Stderr) > screenBound || !strings.Contains(r.Stderr, "nope") {
				t.Errorf("call fail: %d bytes on stderr: %.200q", len(r.Stderr), r.Stderr)
			}

			// Three records, each with a 1 MiB status message or error on the wire.
			if n := ledgerSize(t); n == 0 || n > 3*(4*termsafe.Limit) {
				t.Errorf("the ledger is %d bytes for three tasks", n)
			}
		})
	}
}

func TestHostileSizeHugeToolName(t *testing.T) {
	s := hostile.Start(t, "size-huge-tool-name", demo.Options{})
	r := runMcptask(t, nil, "tools", "--server", s.URL)
	mustCode(t, r, ExitOK, "tools")
	if len(r.Stdout) > screenBound || !strings.Contains(r.Stdout, "…[cut ") {
		t.Errorf("tools printed %d bytes for tools with 1 MiB names", len(r.Stdout))
	}
}

// TestHostileBadTaskIDs: a CreateTaskResult whose task id holds control characters, a space,
// non-ASCII characters or 10 KiB is refused with exit 1 and an error that names the problem,
// shows the id escaped and says what becomes of the task; nothing is written to the ledger.
func TestHostileBadTaskIDs(t *testing.T) {
	for kind, bad := range hostile.BadTaskIDs {
		for _, era := range eras {
			t.Run(kind+"/"+era, func(t *testing.T) {
				s := hostile.Start(t, "size-bad-task-id-"+kind, demo.Options{})
				for _, extra := range [][]string{nil, {"--detach"}} {
					args := append([]string{"call", "sleep", "--arg", "seconds=1", "--server", s.URL, "--protocol", era}, extra...)
					r := runMcptask(t, nil, args...)
					mustCode(t, r, ExitFailure, strings.Join(args, " "))
					assertNoTerminalControls(t, "call", r)
					for _, want := range []string{"unusable task id", "visible ASCII", "not recorded in the ledger", "runs on the server until it ends"} {
						if !strings.Contains(r.Stderr, want) {
							t.Errorf("the error does not say %q:\n%s", want, r.Stderr)
						}
					}
					if len(r.Stderr) > 2*termsafe.Limit || r.Stdout != "" {
						t.Errorf("stdout %q, stderr %d bytes", r.Stdout, len(r.Stderr))
					}
				}
				if data, err := os.ReadFile(testLedger(t)); err == nil && (strings.Contains(string(data), `"taskId"`) || strings.Contains(string(data), bad)) {
					t.Errorf("the ledger holds a record: %.300s", data)
				}
			})
		}
	}
}

// TestHostileBadTaskIDOnGet: a tasks/get answer that names the task with an unusable id is
// refused like a malformed answer; the record stays as it was.
func TestHostileBadTaskIDOnGet(t *testing.T) {
	s := hostile.Start(t, "size-bad-task-id-on-get", demo.Options{})
	r := runMcptask(t, nil, "call", "sleep", "--arg", "seconds=60", "--detach", "--server", s.URL)
	mustCode(t, r, ExitOK, "call --detach")
	id := strings.TrimSpace(r.Stdout)
	r = runMcptask(t, nil, "get", id)
	mustCode(t, r, ExitFailure, "get")
	assertNoTerminalControls(t, "get", r)
	if !strings.Contains(r.Stderr, "unusable task id") || !strings.Contains(r.Stderr, "control character") {
		t.Errorf("get: %q", r.Stderr)
	}
	recs, err := state.Open(testLedger(t)).Find(id)
	if err != nil || len(recs) != 1 {
		t.Errorf("the record of %s: %v, %v", id, recs, err)
	}
}

// TestCompletionSkipsUnusableTaskIDs: a ledger from elsewhere (or from an older mcptask) may
// hold ids that are not plain visible ASCII; the shell is never offered one, and the
// descriptions it shows are cleaned.
func TestCompletionSkipsUnusableTaskIDs(t *testing.T) {
	st := state.Open(testLedger(t))
	now := time.Now()
	for _, r := range []state.Record{
		{TaskID: "good-1", Server: state.Server{URL: "http://127.0.0.1:1/mcp"}, Tool: "sleep\x1b]0;x\x07\u202e", Status: "working", CreatedAt: now},
		{TaskID: "good-2 $(reboot)", Server: state.Server{URL: "http://127.0.0.1:1/mcp"}, Tool: "sleep", Status: "working", CreatedAt: now},
		{TaskID: "good-3\x1b[2J", Server: state.Server{URL: "http://127.0.0.1:1/mcp"}, Tool: "sleep", Status: "working", CreatedAt: now},
		{TaskID: "good-4\u202e", Server: state.Server{URL: "http://127.0.0.1:1/mcp"}, Tool: "sleep", Status: "working", CreatedAt: now},
	} {
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	c := runCLI(t, t.Context(), nil, "__complete", "get", "good")
	mustCode(t, c, ExitOK, "__complete")
	lines := strings.Split(strings.TrimSpace(c.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "good-1\t") || !strings.HasPrefix(lines[1], ":") {
		t.Fatalf("completions: %q", c.Stdout)
	}
	if r := hostile.TerminalForbidden(c.Stdout); r >= 0 {
		t.Errorf("a completion holds %U: %q", r, c.Stdout)
	}
}

// TestHookEnvironmentGetsNoUnusableTaskID: a ledger record from elsewhere whose id holds
// control characters ends (the server does not know it) and --on-complete runs: the hook's
// environment gets no MCPTASK_TASK_ID rather than the raw id, its other values are cleaned,
// and stderr says why.
func TestHookEnvironmentGetsNoUnusableTaskID(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	bad := "bad\x1b]0;pwned\x07 id"
	st := state.Open(testLedger(t))
	if err := st.Put(state.Record{TaskID: bad, Server: state.Server{URL: url}, Era: "2026-07-28", Protocol: "2026-07-28",
		Tool: "sleep\x1b[2J", Status: "working", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), "hook.env")
	r := runMcptask(t, nil, "resume", "--on-complete", `sh -c "env | grep ^MCPTASK_ > `+envFile+`"`)
	assertNoTerminalControls(t, "resume", r)
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the hook did not run (exit %d): %v\n%s", r.Code, err, r.Stderr)
	}
	if strings.Contains(string(env), "MCPTASK_TASK_ID") || strings.Contains(string(env), "\x1b") || !strings.Contains(string(env), "MCPTASK_TOOL=sleep") {
		t.Errorf("hook environment:\n%q", env)
	}
	if !strings.Contains(r.Stderr, "MCPTASK_TASK_ID is not set") {
		t.Errorf("stderr does not say why: %s", r.Stderr)
	}
}

// TestListRemoteIsBounded plays 2025-11-25 servers whose tasks/list never ends: a cursor
// that loops a → b → a (tasks-list-loop) and a new cursor on every page (tasks-list-endless),
// each page 2,000 tasks. list --remote stops at the first repeated cursor, keeps at most
// follow.MaxListTasks tasks, says on stderr why the list was cut, shows what it fetched, and
// --timeout bounds the whole conversation (exit 124).
func TestListRemoteIsBounded(t *testing.T) {
	loop := hostile.Start(t, "tasks-list-loop", demo.Options{})
	r := runCLI(t, t.Context(), nil, "list", "--remote", "--server", loop.URL, "--protocol", "2025-11-25", "--json", "--timeout", "60s")
	mustCode(t, r, ExitOK, "list --remote of a looping cursor")
	var doc struct {
		Remote []json.RawMessage `json:"remote"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("list --json: %v\n%.500s", err, r.Stdout)
	}
	if len(doc.Remote) != 3*hostile.ListPageTasks || !strings.Contains(r.Stderr, "nextCursor repeats") {
		t.Fatalf("%d remote tasks, want the 3 pages until the cursor repeats; stderr: %s", len(doc.Remote), r.Stderr)
	}
	pages := 0
	for _, q := range loop.Requests() {
		if bytes.Contains(q.Body, []byte(`"tasks/list"`)) {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("%d tasks/list requests, want 3", pages)
	}

	endless := hostile.Start(t, "tasks-list-endless", demo.Options{})
	r = runCLI(t, t.Context(), nil, "list", "--remote", "--server", endless.URL, "--protocol", "2025-11-25", "--json", "--timeout", "60s")
	mustCode(t, r, ExitOK, "list --remote of an endless cursor")
	doc.Remote = nil
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Remote) != follow.MaxListTasks || !strings.Contains(r.Stderr, "was cut after") {
		t.Fatalf("%d remote tasks, want the cap %d; stderr: %s", len(doc.Remote), follow.MaxListTasks, r.Stderr)
	}

	r = runCLI(t, t.Context(), nil, "list", "--remote", "--server", endless.URL, "--protocol", "2025-11-25", "--timeout", "1ms")
	mustCode(t, r, ExitTimeout, "list --remote --timeout 1ms")
}

// TestListRemoteTextStreams: the text of list --remote against tasks-list-endless shows the
// ledger's heading once, the rows of every page up to the cap (the first page's and the
// last's), then says on stderr why the list was cut, exit 0.
func TestListRemoteTextStreams(t *testing.T) {
	endless := hostile.Start(t, "tasks-list-endless", demo.Options{})
	r := runCLI(t, t.Context(), nil, "list", "--remote", "--server", endless.URL, "--protocol", "2025-11-25", "--timeout", "60s")
	mustCode(t, r, ExitOK, "list --remote (text) of an endless cursor")
	last := fmt.Sprintf("list-c%d-%d", follow.MaxListTasks/hostile.ListPageTasks, hostile.ListPageTasks-1)
	if strings.Count(r.Stdout, "ON THE SERVER") != 1 || !strings.Contains(r.Stdout, "list-c1-0 ") || !strings.Contains(r.Stdout, last+" ") {
		t.Fatalf("want one heading, the first page's rows and %s; stdout starts:\n%.500s", last, r.Stdout)
	}
	if rows := strings.Count(r.Stdout, "\nlist-c"); rows != follow.MaxListTasks {
		t.Errorf("%d rows, want the cap %d", rows, follow.MaxListTasks)
	}
	if !strings.Contains(r.Stderr, "was cut after") {
		t.Errorf("no warning of the cut: %s", r.Stderr)
	}
}
