package output

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/check"
)

// A report as JUnit XML: one suite per era in the order the eras first appear, a failure with
// the spec's words for a failed rule, a skipped element for a skip, a warning as a passing case
// with its note, the tools and the budget's cuts in system-out.
func TestWriteJUnit(t *testing.T) {
	rep := &check.Report{
		Budget: 2 * time.Second,
		Cut:    []string{"2025-11-25 A13 tasks/list shows every task"},
		Results: []check.Result{
			{ID: "B17", Era: "2026-07-28", Title: "discover", Section: "C26-DISC", Status: check.Fail, Seen: "no versions", Quote: "MUST list"},
			{ID: "B17c", Era: "2026-07-28", Title: "serverInfo", Section: "C26-DISC", Status: check.Warn, Seen: "none"},
			{ID: "A13", Era: "2025-11-25", Title: "list", Section: "C25-TASKS", Status: check.Skip, Seen: "cut by the time budget"},
			{ID: "A4", Era: "2025-11-25", Title: "working", Section: "C25-TASKS", Status: check.Pass},
		},
		Tools: []check.ToolReport{
			{Era: "2025-11-25", Name: "slow", Called: true, Args: []byte(`{"n":1}`), Seen: "task: working -> completed", Answers: []string{`{"ok":true}`}},
			{Era: "2026-07-28", Name: "rm", Why: "destructiveHint"},
		},
	}
	out, err := JUnit("http://x/mcp", rep)
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.NewBuffer(out)
	if !strings.HasPrefix(b.String(), xml.Header) || !strings.HasSuffix(b.String(), "</testsuites>\n") {
		t.Fatalf("not an XML document ending in a newline:\n%s", b.String())
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, want one per era: %+v", len(doc.Suites), doc.Suites)
	}
	modern, legacy := doc.Suites[0], doc.Suites[1]
	if modern.Name != "mcptask check http://x/mcp (MCP 2026-07-28)" || modern.Tests != 2 || modern.Failures != 1 || modern.Skipped != 0 {
		t.Errorf("2026-07-28 suite %+v", modern)
	}
	if legacy.Tests != 2 || legacy.Failures != 0 || legacy.Skipped != 1 {
		t.Errorf("2025-11-25 suite %+v", legacy)
	}
	f := modern.Cases[0].Failure
	if f == nil || f.Message != "B17 (C26-DISC): no versions" || f.Text != "discover\nB17 (C26-DISC): no versions\nthe spec says: MUST list" {
		t.Errorf("failure %+v", f)
	}
	if w := modern.Cases[1]; w.Failure != nil || w.Skipped != nil || w.SystemOut != "warning: B17c (C26-DISC): none" {
		t.Errorf("warning %+v", w)
	}
	if s := legacy.Cases[0].Skipped; s == nil || s.Message != "cut by the time budget" {
		t.Errorf("skip %+v", legacy.Cases[0])
	}
	if c := legacy.Cases[1]; c.Name != "A4 working" || c.Classname != "C25-TASKS" || c.Failure != nil || c.Skipped != nil {
		t.Errorf("pass %+v", c)
	}
	if want := "rm: not called: destructiveHint\nthe 2s budget cut: 2025-11-25 A13 tasks/list shows every task\n"; modern.SystemOut != want {
		t.Errorf("2026-07-28 system-out %q, want %q", modern.SystemOut, want)
	}
	if want := "slow: called with {\"n\":1}: task: working -> completed; input answered with {\"ok\":true}\n"; legacy.SystemOut != want {
		t.Errorf("2025-11-25 system-out %q, want %q", legacy.SystemOut, want)
	}
}
