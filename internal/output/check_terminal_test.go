package output

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcptask/mcptask/internal/check"
)

var updateCheck = flag.Bool("update-check", false, "rewrite testdata/check from the current terminal report")

// terminalReport is a report as a real run against a faulty server gives it: two failures, a
// warning, passes, a rule not judged, tools, and a cut.
func terminalReport() *check.Report {
	return &check.Report{
		Budget: time.Minute, Used: 4200 * time.Millisecond,
		Cut: []string{"2026-07-28 crawl: its task was still working after 10s, all the budget left to wait (so it was taken for a long-running one and cancelled)"},
		Results: []check.Result{
			{ID: "B17b", Era: "2026-07-28", Title: "tasks extension declared in capabilities.extensions with {}", Section: "EXT §Capability Negotiation; SEP-2663 §Backward Compatibility", Status: check.Fail,
				Seen: "server/discover does not declare the io.modelcontextprotocol/tasks extension, yet summarize answered with a task when called with it declared: hosts that follow the spec use a server's tasks only when it declares the extension, so they never see these", Tools: []string{"summarize"}},
			{ID: "B24", Era: "2026-07-28", Title: "CreateTaskResult is flat, with taskId, status, timestamps and ttlMs, and no legacy keys", Section: "EXT §Task Creation; EXT-SCHEMA CreateTaskResult", Status: check.Pass, Tools: []string{"crawl", "summarize"}},
			{ID: "B28e", Era: "2026-07-28", Title: "a task cancelled while working ends cancelled (it may still end completed or failed)", Section: "EXT §Task Cancellation", Status: check.Warn,
				Seen: "crawl: the task, cancelled while it was working, ended completed; the spec allows it, but the conformance suite's sep-2663-tasks-get-status-cancelled fails it"},
			{ID: "A6b", Era: "2025-11-25", Title: "every notifications/tasks/status is a full Task of this session", Section: "C25-TASKS §Task Status Notification", Status: check.Skip, Seen: "the server sent no notifications/tasks/status (they are optional)"},
			{ID: "A9b", Era: "2025-11-25", Title: "tasks/result sent while a task is working or input_required answers only once the task is terminal", Section: "C25-TASKS §Result Retrieval", Status: check.Fail,
				Seen:  "summarize: tasks/result sent while the task was working answered at once (error -32602 \"task is not finished yet\"), and tasks/get right after still said working",
				Quote: "When a receiver receives a tasks/result request for a task in any other non-terminal status (working or input_required), it MUST block the response until the task reaches a terminal status."},
			{ID: "A4", Era: "2025-11-25", Title: "the first status of a task is working", Section: "C25-TASKS §Task Status Lifecycle", Status: check.Pass},
		},
		Tools: []check.ToolReport{
			{Era: "2026-07-28", Name: "summarize", Called: true, Args: []byte(`{}`), Seen: "task: working -> completed"},
			{Era: "2026-07-28", Name: "wipe", Why: "its annotations say destructiveHint; name it with --tool to call it"},
		},
	}
}

// The terminal report at 60, 80, 100 and 140 columns, without colour (NO_COLOR), and with
// --all. What a person should see: the header on one line at 100 and 140 (wrapped under itself
// at 60 and 80), then FAILED with both failures, each with its rule, era and title, then
// indented the section (spec), what was seen and, for 2025-11-25, the spec's sentence (says),
// then WARNINGS, then one count line ("✗ 2 failed · ! 1 warnings · ✓ 2 passed · – 1 not
// judged"), then the budget's cut. No line is wider than the terminal. --all adds NOT JUDGED
// (with why), PASSED (one line each) and TOOLS.
func TestCheckTerminalGolden(t *testing.T) {
	for _, all := range []bool{false, true} {
		for _, width := range []int{60, 80, 100, 140} {
			name := fmt.Sprintf("terminal-%d.golden", width)
			if all {
				name = fmt.Sprintf("terminal-all-%d.golden", width)
			}
			var out bytes.Buffer
			CheckTerminal(&out, "http://127.0.0.1:8080/mcp", terminalReport(), CheckView{Width: width, All: all})
			got := out.String()
			for i, l := range strings.Split(got, "\n") {
				if n := utf8.RuneCountInString(l); n > width {
					t.Errorf("%s line %d is %d columns wide: %q", name, i+1, n, l)
				}
			}
			path := filepath.Join("testdata", "check", name)
			if *updateCheck {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/output -run TestCheckTerminalGolden -update-check)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs:\n%s\nwant:\n%s", name, got, want)
			}
		}
	}
}

// Failures come before warnings, and warnings before the count line, whatever order the rules
// are in; with colour the status words are painted (and still there), and the layout is the
// one without colour; --strict is said.
func TestCheckTerminalOrderAndColour(t *testing.T) {
	paint := func(st check.Status, s string) string { return "\x1b[31m" + s + "\x1b[0m" }
	var plain, coloured bytes.Buffer
	CheckTerminal(&plain, "srv", terminalReport(), CheckView{Width: 80, Strict: true})
	CheckTerminal(&coloured, "srv", terminalReport(), CheckView{Width: 80, Strict: true, Paint: paint})
	s := plain.String()
	iFail, iA9b, iWarn, iCount := strings.Index(s, "FAILED (2)"), strings.Index(s, "A9b"), strings.Index(s, "WARNINGS (1)"), strings.Index(s, "2 passed")
	if iFail < 0 || iA9b < iFail || iWarn < iA9b || iCount < iWarn {
		t.Errorf("not failures, then warnings, then the count:\n%s", s)
	}
	if strings.Contains(s, "A4 ") || !strings.Contains(s, "--strict") {
		t.Errorf("a pass is listed without --all, or --strict is not said:\n%s", s)
	}
	if !strings.Contains(coloured.String(), "\x1b[31m✗ FAIL\x1b[0m") {
		t.Errorf("the failure is not painted:\n%q", coloured.String())
	}
	if visible(coloured.String()) != s {
		t.Errorf("colour changed the layout:\n%s\nwant:\n%s", visible(coloured.String()), s)
	}
}

// Server text reaches neither the terminal report nor the JUnit file with escape sequences, C1
// controls or bidi controls: the attacker's status message would otherwise rewrite the screen or
// reorder what a reviewer reads in a CI page.
func TestCheckReportsKeepNoControls(t *testing.T) {
	evil := "done\x1b]0;pwned\x07 \u009b31m \u202egnp.exe\u202c \u2066x\u2069"
	rep := &check.Report{Budget: time.Second,
		Results: []check.Result{{ID: "B26", Era: "2026-07-28", Title: "t", Section: "EXT", Status: check.Fail, Seen: "crawl: " + evil}},
		Tools:   []check.ToolReport{{Era: "2026-07-28", Name: "crawl\u202e", Called: true, Args: []byte(`{}`), Seen: evil, Answers: []string{evil}}},
		Cut:     []string{evil},
	}
	var term bytes.Buffer
	CheckTerminal(&term, "srv", rep, CheckView{Width: 80, All: true})
	x, err := JUnit("srv", rep)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"terminal": term.String(), "junit": string(x)} {
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\u202c", "\u2066", "\u2069"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s keeps %q:\n%q", name, bad, out)
			}
		}
	}
	var doc junitSuites
	if err := xml.Unmarshal(x, &doc); err != nil || !strings.Contains(doc.Suites[0].Cases[0].Failure.Message, "gnp.exe") {
		t.Errorf("the JUnit file lost the text itself: %v %+v", err, doc)
	}
}
