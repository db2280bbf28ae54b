package check

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

// A budget cut is known by its type, not read from words: an exchange the budget cut makes the
// rule a skip that the cuts list (all of it, or the part the problem describes), while a
// server whose error message happens to say "cut by the time budget" is judged like any other.
func TestRecordBudgetCut(t *testing.T) {
	serverSays := &rpc.Error{Code: -32603, Message: errBudget.Error()}
	for _, tt := range []struct {
		name   string
		f      finding
		status Status
		seen   string
		cut    bool
	}{
		{"the exchange was cut", failed(errBudget, "slow"), Skip, "cut by the time budget", true},
		{"a wrapped cut", failed(fmt.Errorf("tasks/get: %w", errBudget)), Skip, "tasks/get: cut by the time budget", true},
		{"one exchange of several was cut", found("tasks/list got cut by the time budget").from(errors.Join(nil, errBudget)), Skip,
			"cut by the time budget (tasks/list got cut by the time budget)", true},
		{"a pass is a pass whatever was cut", found("").from(errBudget), Pass, "", false},
		{"the server's words", found("got error -32603 " + serverSays.Message).from(serverSays), Fail, "got error -32603 cut by the time budget", false},
		{"a failed exchange", failed(errors.New("connection reset")), Fail, "connection reset", false},
		{"a problem", found("no ttlMs"), Fail, "no ttlMs", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(Options{}, rpc.VersionModern, 0)
			r.record("B17d", tt.f)
			if len(r.results) != 1 {
				t.Fatalf("%d results", len(r.results))
			}
			res := r.results[0]
			if res.Status != tt.status || res.Seen != tt.seen || res.Title != ruleTitle("B17d") {
				t.Errorf("%s %q %q, want %s %q under the rule's title", res.Status, res.Seen, res.Title, tt.status, tt.seen)
			}
			if cut := len(r.cut) == 1 && r.cut[0] == rpc.VersionModern+" B17d "+ruleTitle("B17d"); cut != tt.cut {
				t.Errorf("listed in the cuts %v (%q), want %v", cut, r.cut, tt.cut)
			}
		})
	}
}

// A finding is recorded under the rule's title, or its Alt for a part of it, at the rule's
// level unless it overrides it; an omitted finding records nothing.
func TestRecordTitleAndLevel(t *testing.T) {
	r := newRunner(Options{}, rpc.VersionModern, 0)
	r.record("B21", finding{status: Skip, seen: "stdio has no headers", alt: true})
	r.record("B28b", found("got a result"))                                        // a SHOULD: a warning
	r.record("B28b", finding{problem: "made a task", level: Must, override: true}) // a MUST part of it
	r.record("B31a", finding{omit: true})
	want := []struct {
		title  string
		status Status
	}{{ruleAlt("B21"), Skip}, {ruleTitle("B28b"), Warn}, {ruleTitle("B28b"), Fail}}
	if len(r.results) != len(want) {
		t.Fatalf("%+v", r.results)
	}
	for i, w := range want {
		if got := r.results[i]; got.Title != w.title || got.Status != w.status {
			t.Errorf("result %d: %s %q, want %s %q", i, got.Status, got.Title, w.status, w.title)
		}
	}
	if ruleAlt("B21") == ruleTitle("B21") {
		t.Error("B21 has no Alt title to test with")
	}
}
