package check

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/check/checktest"
	"github.com/mcptask/mcptask/internal/rpc"
)

// A36: a task id given twice fails whatever the authorization; a guessable id fails without
// an authorization context (C25-TASKS §Security Considerations: then the receiver MUST
// generate cryptographically secure ids) and is only a warning with one (the server may bind
// its tasks to it).
func TestTaskIDRule(t *testing.T) {
	strong := "9f0c2a7e4b1d48c6a3e5f7b9d1c3e5a7"
	for _, tt := range []struct {
		name       string
		ids        []string
		authorized bool
		want       Status
	}{
		{"unique and strong", []string{strong, strong[1:] + "x"}, false, Pass},
		{"the same id twice", []string{strong, strong}, false, Fail},
		{"the same id twice, authorized", []string{strong, strong}, true, Fail},
		{"a counter, no authorization", []string{"t1"}, false, Fail},
		{"a counter, authorized", []string{"t1"}, true, Warn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(Options{Authorized: tt.authorized}, rpc.VersionLegacy, 0)
			var calls []*call
			for i, id := range tt.ids {
				calls = append(calls, &call{tool: &toolInfo{name: string(rune('a' + i))}, task: &taskObs{id: id}})
			}
			r.record("A36", judgeIDs(t.Context(), r, evidence{tasks: calls, none: "none"}))
			if len(r.results) != 1 || r.results[0].Status != tt.want {
				t.Fatalf("%+v, want %s", r.results, tt.want)
			}
			if tt.want != Pass && r.results[0].Quote == "" {
				t.Error("a failure without the spec sentence")
			}
		})
	}
}

// A malformed tasks capability is judged by A1 with what was seen, and what is present still
// counts as declared, so the other rules run.
func TestCapsRuleTypes(t *testing.T) {
	for _, tt := range []struct {
		caps, want string
		list, call bool
	}{
		{`{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`, "", true, true},
		{`{"tasks":{"list":true,"cancel":{},"requests":{"tools":{"call":{}}}}}`, "capabilities.tasks.list is true, want an object", true, true},
		{`{"tasks":{"requests":{"tools":["call"]}}}`, "capabilities.tasks.requests.tools is [\"call\"], want an object", false, false},
		{`{"tasks":"yes"}`, `capabilities.tasks is "yes", want an object`, false, false},
	} {
		r := newRunner(Options{}, rpc.VersionLegacy, 0)
		r.caps = json.RawMessage(tt.caps)
		r.judgeAll(t.Context(), onDeclared)
		res := r.results[0]
		if tt.want == "" && res.Status != Pass || tt.want != "" && (res.Status != Fail || !strings.Contains(res.Seen, tt.want)) {
			t.Errorf("%s: %s %q, want %q", tt.caps, res.Status, res.Seen, tt.want)
		}
		caps, _ := readCaps(r.caps)
		if caps.list != tt.list || caps.call != tt.call {
			t.Errorf("%s: list %v call %v, want %v %v", tt.caps, caps.list, caps.call, tt.list, tt.call)
		}
	}
}

// A server that floods the GET stream with status notifications gets the first maxNotes
// judged; the run keeps to its budget and judges A6b.
func TestNotifyFloodBounded(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Fault: checktest.LegacyNotifyFlood})
	budget := 20 * time.Second
	rep := Run(t.Context(), Options{HTTP: true, Connect: connector(s.URL), Eras: []string{rpc.VersionLegacy}, Budget: budget})
	if rep.Used > budget {
		t.Errorf("took %s, over the %s budget", rep.Used, budget)
	}
	for _, r := range rep.Results {
		if r.ID == "A6b" && r.Status != Pass {
			t.Errorf("A6b %s: %s", r.Status, r.Seen)
		}
		if r.Status == Fail {
			t.Errorf("%s failed: %s", r.ID, r.Seen)
		}
	}
}
