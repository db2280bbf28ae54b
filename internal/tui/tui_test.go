package tui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestDetailGolden drives one task through three polls on a fixed clock and compares the
// frame: badge, message, elapsed, last update, countdown with the interval and its source,
// TTL left and the history with the time spent in each status.
func TestDetailGolden(t *testing.T) {
	now := t0
	m := New(newFake(), nil, []string{"task-1"}, nil, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 80, Height: 30})
	base := Snapshot{TaskID: "task-1", Tool: "sleep", Server: "http://127.0.0.1:8080/mcp", Protocol: "2026-07-28", CreatedAt: t0, TTL: ttl(time.Hour), PollInterval: 2 * time.Second}
	step := func(d time.Duration, status, msg string) {
		now = now.Add(d)
		s := base
		s.Status, s.StatusMessage, s.LastUpdatedAt = status, msg, now.Add(-300*time.Millisecond)
		m = batch(m, Update{TaskID: "task-1", Snap: s, Via: "poll", NextPoll: now.Add(2 * time.Second), Interval: 2 * time.Second, Source: "server's"})
	}
	step(0, "working", "step 1/3")
	step(2*time.Second, "working", "step 2/3")
	step(2*time.Second, "working", "step 2/3") // no change: no history entry
	step(2*time.Second, "input_required", "waiting for a name")
	now = now.Add(1500 * time.Millisecond)
	golden(t, "detail", m.View().Content)
	if h := m.tasks["task-1"].history; len(h) != 3 {
		t.Errorf("history has %d entries, want 3 (one per change, none for a repeat)", len(h))
	}
}

// TestStatusGoldens renders the detail view of every status, a stuck task, a task whose TTL
// is nearly spent and the input form at 80 and 120 columns.
func TestStatusGoldens(t *testing.T) {
	for _, width := range []int{80, 120} {
		var all strings.Builder
		frame := func(name string, m Model) {
			m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 30})
			content := m.View().Content
			for i, line := range strings.Split(ansi.Strip(content), "\n") {
				if w := ansi.StringWidth(line); w > width {
					t.Errorf("%s at %d columns: line %d is %d wide: %q", name, width, i, w, line)
				}
			}
			fmt.Fprintf(&all, "==== %s\n%s", name, content)
		}
		now := t0.Add(10 * time.Minute)
		clock := func() time.Time { return now }
		for _, status := range []string{"working", "input_required", "completed", "failed", "cancelled", "expired"} {
			s := Snapshot{TaskID: "task-" + status, Tool: "build", Server: "http://127.0.0.1:8080/mcp", Status: status,
				StatusMessage: "message for " + status, CreatedAt: t0, LastUpdatedAt: now.Add(-12 * time.Second), TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
			switch status {
			case "completed":
				s.Result = "built 42 artefacts"
			case "failed":
				s.Result = "exit status 2: missing dependency"
			case "input_required":
				s.Inputs = []InputRequest{
					{Key: "confirm", Kind: "elicitation/create", Mode: "form", Message: "Deploy to production?"},
					{Key: "login", Kind: "elicitation/create", Mode: "url", Message: "Sign in to continue"},
				}
			}
			m := New(newFake(), nil, []string{s.TaskID}, map[string]Snapshot{s.TaskID: s}, Options{Now: clock, NoColor: true, DisableClock: true})
			if !s.Over() { // the engine's schedule, so the countdown shows
				m = batch(m, scheduled(s.TaskID, now.Add(5*time.Second), 5*time.Second, "server's"))
			}
			frame(status, m)
		}

		// Stuck: nothing changed for 12 intervals of 5 s.
		stuck := Snapshot{TaskID: "stuck", Tool: "build", Status: "working", StatusMessage: "compiling", CreatedAt: t0, LastUpdatedAt: t0.Add(9 * time.Minute), PollInterval: 5 * time.Second}
		m := New(newFake(), nil, []string{"stuck"}, map[string]Snapshot{"stuck": stuck}, Options{Now: clock, NoColor: true, DisableClock: true})
		m = batch(m, scheduled("stuck", now.Add(5*time.Second), 5*time.Second, "server's"))
		frame("stuck", m)

		// TTL nearly spent: 30 s of an hour left.
		late := Snapshot{TaskID: "late", Tool: "build", Status: "working", StatusMessage: "almost", CreatedAt: now.Add(-time.Hour + 30*time.Second), LastUpdatedAt: now, TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
		m = New(newFake(), nil, []string{"late"}, map[string]Snapshot{"late": late}, Options{Now: clock, NoColor: true, DisableClock: true, Server: "stdio: ./server"})
		m = batch(m, scheduled("late", now.Add(5*time.Second), 5*time.Second, "server's"))
		frame("ttl", m)

		// Backing off after failed polls: the engine reports each failure and the backoff.
		m = New(newFake(), nil, []string{"late"}, map[string]Snapshot{"late": late}, Options{Now: clock, NoColor: true, DisableClock: true})
		fail := func(n int, d time.Duration) Update {
			return Update{TaskID: "late", Err: "dial tcp 127.0.0.1:8080: connection refused", Failures: n, NextPoll: now.Add(d), Interval: 4 * time.Second, Source: fmt.Sprintf("backed off after %d failed polls", n)}
		}
		m = batch(m, fail(1, 2*time.Second))
		m = batch(m, fail(2, 3*time.Second))
		frame("backoff", m)

		// The form, in the schema's property order, after enter with the required name empty.
		f, _ := newInputForm("task-1", []InputRequest{{Key: "who", Kind: "elicitation/create", Mode: "form", Message: "Who is deploying?",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"your full name"},"team":{"type":"string","enum":["red","blue"],"default":"red"},"dryRun":{"type":"boolean","default":true},"replicas":{"type":"integer","minimum":1},"regions":{"type":"array","items":{"type":"string","enum":["eu","us"]}}},"required":["name","replicas"]}`)}},
			"/work", newStyles(true), width, 40)
		f, _, _ = f.key(tea.KeyPressMsg{Code: tea.KeyEnter}) // nothing typed
		fmt.Fprintf(&all, "==== form\n%s", f.view(width))
		golden(t, fmt.Sprintf("statuses-%d", width), all.String())

		for _, want := range []string{"possibly stuck", "TTL nearly spent", "backed off after 2 failed polls", `field "name" is required`, "next poll   in 5s (every 5s, server's)"} {
			if !strings.Contains(all.String(), want) {
				t.Errorf("%d columns: the frames do not say %q", width, want)
			}
		}
	}
}

func tableModel(opts Options) Model {
	ids := []string{"a1", "b2", "c3", "d4", "e5"}
	initial := map[string]Snapshot{
		"a1": {TaskID: "a1", Tool: "sleep", Server: "http://one/mcp", Status: "working", StatusMessage: "step 2/5", CreatedAt: t0, LastUpdatedAt: t0.Add(80 * time.Second), PollInterval: time.Second},
		"b2": {TaskID: "b2", Tool: "ask", Server: "http://one/mcp", Status: "input_required", StatusMessage: "what is your name?", CreatedAt: t0, LastUpdatedAt: t0.Add(80 * time.Second)},
		"c3": {TaskID: "c3", Tool: "build", Server: "stdio: ./server", Status: "completed", CreatedAt: t0},
		"d4": {TaskID: "d4", Tool: "deploy", Server: "http://two/mcp", Status: "working", StatusMessage: "rolling out", CreatedAt: t0.Add(-59 * time.Minute), TTL: ttl(time.Hour)},
		"e5": {TaskID: "e5", Tool: "index", Server: "http://two/mcp", Status: "failed", StatusMessage: "disk full", CreatedAt: t0},
	}
	now := t0.Add(90 * time.Second)
	opts.Now = func() time.Time { return now }
	opts.NoColor, opts.DisableClock = true, true
	m := New(newFake(), nil, ids, initial, opts)
	return batch(m, // the engine's schedule: the server's interval, or the default
		scheduled("a1", now.Add(time.Second), time.Second, "server's"),
		scheduled("b2", now.Add(2*time.Second), 2*time.Second, "default"),
		scheduled("d4", now.Add(2*time.Second), 2*time.Second, "default"))
}

// TestTableGolden: the many-task table at 80 and 120 columns, and narrow terminals that drop
// columns instead of wrapping.
func TestTableGolden(t *testing.T) {
	m := tableModel(Options{})
	for _, width := range []int{120, 80, 50, 30} {
		m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 24})
		content := m.View().Content
		for _, line := range strings.Split(ansi.Strip(content), "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Errorf("%d columns: a line is %d wide: %q", width, w, line)
			}
		}
		golden(t, fmt.Sprintf("table-%d", width), content)
		if width >= 80 && !strings.Contains(content, "2 ● working  1 ? input_required  1 ✓ completed  1 ✗ failed") {
			t.Errorf("%d columns: summary line missing:\n%s", width, content)
		}
	}
	// One shared server is named once, above the table.
	m = tableModel(Options{Server: "http://one/mcp"})
	m, _ = update(m, tea.WindowSizeMsg{Width: 120, Height: 24})
	golden(t, "table-server", m.View().Content)
}

// TestTableNavigation: arrows move, enter opens the task under the cursor, esc goes back.
func TestTableNavigation(t *testing.T) {
	m := tableModel(Options{})
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyUp})
	if m.cursor != 1 {
		t.Fatalf("cursor %d after down, down, up; want 1", m.cursor)
	}
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if c := m.View().Content; !m.detail || !strings.Contains(c, "ask · task b2") {
		t.Errorf("enter must open b2's detail:\n%s", c)
	}
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEscape})
	if c := m.View().Content; m.detail || !strings.Contains(c, "STATUS") {
		t.Errorf("esc must go back to the table:\n%s", c)
	}
	for range 10 {
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if m.cursor != 4 {
		t.Errorf("cursor %d ran past the last row", m.cursor)
	}
}

// TestTableWindow: a thousand tasks draw only the rows that fit, following the cursor.
func TestTableWindow(t *testing.T) {
	ids := make([]string, 1000)
	initial := map[string]Snapshot{}
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%04d", i)
		initial[ids[i]] = Snapshot{TaskID: ids[i], Status: "working"}
	}
	m := New(newFake(), nil, ids, initial, Options{NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 80, Height: 20})
	for range 500 {
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	c := m.View().Content
	if n := strings.Count(c, "\n"); n > 20 {
		t.Errorf("%d lines for a 20-line terminal", n)
	}
	if !strings.Contains(c, "> task-0500") || !strings.Contains(c, "more") {
		t.Errorf("the window does not follow the cursor:\n%s", c)
	}
}

// TestRowCache: a frame of the table rebuilds only the rows whose task changed, all of them
// when the columns change, and the new ones when the window moves; what it draws is what a
// fresh render draws.
func TestRowCache(t *testing.T) {
	ids := make([]string, 1000)
	initial := map[string]Snapshot{}
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%04d", i)
		initial[ids[i]] = Snapshot{TaskID: ids[i], Status: "working", StatusMessage: "step 1", CreatedAt: t0}
	}
	now := t0.Add(time.Minute)
	m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	builds := func() int { n := m.rows.builds; m.rows.builds = 0; return n }
	first := m.View().Content
	if n := builds(); n == 0 || n > 30 {
		t.Fatalf("the first frame built %d rows; want the visible ones only", n)
	}
	if again := m.View().Content; again != first || builds() != 0 {
		t.Errorf("an unchanged frame rebuilt rows or drew something else")
	}
	m = batch(m, Update{TaskID: "task-0003", Snap: Snapshot{TaskID: "task-0003", Status: "working", StatusMessage: "step 2", CreatedAt: t0}})
	m = batch(m, Update{TaskID: "task-0900", Snap: Snapshot{TaskID: "task-0900", Status: "completed", CreatedAt: t0}}) // off screen
	c := m.View().Content
	if n := builds(); n != 1 || !strings.Contains(c, "step 2") || !strings.Contains(c, "1 ✓ completed") {
		t.Errorf("one visible task changed: %d rows rebuilt\n%s", n, c)
	}
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	if m.View(); builds() != 2 {
		t.Errorf("moving the cursor must rebuild the two rows it moved between")
	}
	for range 40 {
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	cached := m.View().Content
	builds()
	m.rows.reset("") // forget everything: a fresh render
	if fresh := m.View().Content; fresh != cached {
		t.Errorf("the cached frame differs from a fresh one:\n%s\n---\n%s", cached, fresh)
	}
	m, _ = update(m, tea.WindowSizeMsg{Width: 90, Height: 30})
	if m.View(); builds() < 20 {
		t.Errorf("new columns must rebuild every visible row")
	}
}

// TestUpdateMessages covers every message type the model handles beyond polls and ticks.
func TestUpdateMessages(t *testing.T) {
	working := Snapshot{TaskID: "t", Status: "working", PollInterval: time.Hour}
	newModel := func() Model {
		return New(newFake(), NewFeed(), []string{"t"}, map[string]Snapshot{"t": working}, Options{Now: func() time.Time { return t0 }, NoColor: true})
	}

	t.Run("window size", func(t *testing.T) {
		m, cmd := update(newModel(), tea.WindowSizeMsg{Width: 33, Height: 9})
		if cmd != nil || m.width != 33 || m.height != 9 {
			t.Errorf("size %dx%d cmd %v", m.width, m.height, cmd != nil)
		}
	})
	t.Run("a batch re-arms the wait until done", func(t *testing.T) {
		m := newModel()
		if _, cmd := update(m, feedMsg{}); cmd == nil {
			t.Errorf("the view stopped listening while it runs")
		}
		m.done = true
		if _, cmd := update(m, feedMsg{}); cmd != nil {
			t.Errorf("the view kept listening after the end")
		}
	})
	t.Run("poll error keeps the view", func(t *testing.T) {
		m, cmd := update(newModel(), feedMsg{updates: []Update{{TaskID: "t", Err: "boom", Failures: 1}}})
		if cmd == nil || m.done || m.tasks["t"].failures != 1 {
			t.Errorf("a failed poll must never end the view (failures %d)", m.tasks["t"].failures)
		}
		if !strings.Contains(m.View().Content, "poll failed 1 time(s): boom") {
			t.Errorf("the failure is not shown:\n%s", m.View().Content)
		}
		if m = batch(m, Update{TaskID: "t", Snap: working}); m.tasks["t"].failures != 0 || strings.Contains(m.View().Content, "poll failed") {
			t.Errorf("a good answer clears the failure")
		}
	})
	t.Run("cancel failure is shown", func(t *testing.T) {
		m := batch(newModel(), Update{TaskID: "t", Note: "cancel failed: tasks/cancel: -32602 task is terminal"})
		if !strings.Contains(m.View().Content, "cancel failed: tasks/cancel: -32602") {
			t.Errorf("not shown:\n%s", m.View().Content)
		}
	})
	t.Run("cancelled ends the view", func(t *testing.T) {
		m, cmd := update(newModel(), feedMsg{updates: []Update{{TaskID: "t", Snap: Snapshot{TaskID: "t", Status: "cancelled"}, Done: true}}})
		if !m.done || !isQuit(cmd) {
			t.Errorf("a cancelled last task must quit")
		}
	})
	t.Run("a follow that stopped ends the view and says why", func(t *testing.T) {
		m, cmd := update(newModel(), feedMsg{updates: []Update{{TaskID: "t", Done: true, Ended: "following stopped: malformed response from server"}}})
		if !m.done || !isQuit(cmd) || !strings.Contains(m.View().Content, "following stopped: malformed") || !strings.Contains(m.View().Content, "polling     stopped") {
			t.Errorf("done %v:\n%s", m.done, m.View().Content)
		}
	})
	t.Run("failed answer can be retried", func(t *testing.T) {
		m := newModel()
		m.tasks["t"].snap.Inputs = []InputRequest{{Key: "k", Kind: "roots/list"}}
		m.tasks["t"].answer("k")
		m = batch(m, Update{TaskID: "t", Retry: "k", Note: "answer to k failed: timeout"})
		if _, ok := m.pending(m.tasks["t"]); !ok || !strings.Contains(m.View().Content, "answer to k failed: timeout") {
			t.Errorf("a failed answer must be offered again and explained:\n%s", m.View().Content)
		}
	})
	t.Run("keys the engine answered are not offered", func(t *testing.T) {
		m := newModel()
		m.tasks["t"].snap.Inputs = []InputRequest{{Key: "k", Kind: "roots/list"}}
		m = batch(m, Update{TaskID: "t", Answered: []string{"k"}, Note: "answered k"})
		if _, ok := m.pending(m.tasks["t"]); ok || !strings.Contains(m.View().Content, "answered k") {
			t.Errorf("an answered key must not be offered:\n%s", m.View().Content)
		}
	})
	t.Run("help", func(t *testing.T) {
		// One task: ? lists what works on its screen (cancel, keys, detach), not the table's
		// keys, which would do nothing here.
		m, _ := update(newModel(), tea.KeyPressMsg{Code: '?', Text: "?"})
		c := m.View().Content
		if !m.showHelp || !strings.Contains(c, "c cancel task") || !strings.Contains(c, "q detach") {
			t.Errorf("? must show the keys that work:\n%s", c)
		}
		for _, dead := range []string{"enter", "esc", "filter", "answer input"} {
			if strings.Contains(c, dead) {
				t.Errorf("? lists %q, which does nothing for one task without a question:\n%s", dead, c)
			}
		}
	})
	t.Run("no cancel of a finished task", func(t *testing.T) {
		m := newModel()
		m.tasks["t"].snap.Status = "failed"
		if m, _ = update(m, tea.KeyPressMsg{Code: 'c', Text: "c"}); m.confirm {
			t.Errorf("c offered to cancel a terminal task")
		}
	})
	t.Run("already answered keys are not offered", func(t *testing.T) {
		in := working
		in.Inputs = []InputRequest{{Key: "old", Kind: "roots/list"}, {Key: "new", Kind: "roots/list"}}
		m := New(newFake(), nil, []string{"t"}, map[string]Snapshot{"t": in}, Options{Answered: map[string][]string{"t": {"old"}}})
		if got, _ := m.pending(m.tasks["t"]); got.Key != "new" {
			t.Errorf("offered %q; the ledger says old was answered", got.Key)
		}
	})
	t.Run("all terminal at start", func(t *testing.T) {
		m := New(newFake(), nil, []string{"t"}, map[string]Snapshot{"t": {TaskID: "t", Status: "completed"}}, Options{})
		if !isQuit(m.Init()) {
			t.Errorf("Init must quit when there is nothing to watch")
		}
	})
}

// ask runs the questionnaire of inputs in a real program, presses keys and returns the
// responses (nil when it ended without).
func ask(t *testing.T, inputs []InputRequest, workDir string, keys ...tea.KeyPressMsg) map[string]json.RawMessage {
	t.Helper()
	tm := teatest.NewTestModel(t, NewAsk("tool", inputs, Options{NoColor: true, WorkDir: workDir}), teatest.WithInitialTermSize(100, 30))
	for _, k := range keys {
		tm.Send(k)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(AskModel).Responses()
}

// TestNonFormRequests: URL consent, roots only with the user's choice, sampling declined; each
// only after a key.
func TestNonFormRequests(t *testing.T) {
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	url := InputRequest{Key: "k", Kind: "elicitation/create", Mode: "url", URL: "https://example.com/\x1b[2Jauth_x", Message: "sign in"}
	f, _ := newInputForm("t", []InputRequest{url}, "/work", newStyles(true), 80, 30)
	if v := f.view(80); strings.Contains(v, "\x1b") || !strings.Contains(v, "https://example.com/auth_x") || !strings.Contains(v, "never opens it") {
		t.Errorf("url view: %q", v)
	}
	roots := InputRequest{Key: "r", Kind: "roots/list"}
	sampling := InputRequest{Key: "s", Kind: "sampling/createMessage"}
	f, _ = newInputForm("t", []InputRequest{sampling}, "/work", newStyles(true), 80, 30)
	if v := f.view(80); !strings.Contains(v, "declares no sampling") {
		t.Errorf("sampling is not explained: %q", v)
	}
	for _, c := range []struct {
		name    string
		in      InputRequest
		workDir string
		keys    []tea.KeyPressMsg
		want    string
	}{
		{"url declined", url, "/work", []tea.KeyPressMsg{enter}, `{"action":"decline"}`},
		{"url accepted", url, "/work", []tea.KeyPressMsg{down, enter}, `{"action":"accept"}`},
		{"roots refused", roots, "/work/proj", []tea.KeyPressMsg{enter}, `{"roots":[]}`},
		{"roots shared", roots, "/work/proj", []tea.KeyPressMsg{down, enter}, `{"roots":[{"name":"proj","uri":"file:///work/proj"}]}`},
		{"no working directory", roots, "", []tea.KeyPressMsg{down, enter}, `{"roots":[]}`},
		{"sampling", sampling, "/work", []tea.KeyPressMsg{enter}, `{"action":"decline"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ask(t, []InputRequest{c.in}, c.workDir, c.keys...)
			if got := string(r[c.in.Key]); got != c.want {
				t.Errorf("%s: %s, want %s", c.name, got, c.want)
			}
		})
	}
}

// TestEscapesNeverReachTheFrame: server strings with terminal escapes are drawn inert in
// every screen, in colour and without.
func TestEscapesNeverReachTheFrame(t *testing.T) {
	const evil = "\x1b[2J\x1b]0;pwned\x07red\x1b[31m\x9b31m"
	for _, noColor := range []bool{true, false} {
		m := New(newFake(), nil, []string{"t", "u\x1b[5m"}, map[string]Snapshot{
			"t":        {TaskID: "t", Tool: evil, Server: evil, Status: "input_required", StatusMessage: evil, CreatedAt: t0, Inputs: []InputRequest{{Key: evil, Kind: evil, Message: evil}}},
			"u\x1b[5m": {TaskID: "u", Status: "failed", Result: evil, StatusMessage: evil},
		}, Options{Now: func() time.Time { return t0 }, NoColor: noColor, Server: evil})
		m = batch(m, Update{TaskID: "t", Err: evil, Failures: 1, Note: evil}, Update{TaskID: "u\x1b[5m", Done: true, Ended: evil})
		frames := []string{m.View().Content}
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEnter})
		frames = append(frames, m.View().Content)
		m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
		frames = append(frames, m.View().Content)
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEscape})
		m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
		frames = append(frames, m.View().Content)
		for i, frame := range frames {
			// Styling adds SGR sequences of its own; the server's never survive.
			for _, bad := range []string{"\x1b[2J", "\x1b]", "\x07", "\x1b[31m", "\x9b", "\x1b[5m", "pwned"} {
				if strings.Contains(frame, bad) {
					t.Errorf("noColor=%v frame %d: %q reached the screen: %q", noColor, i, bad, frame)
				}
			}
		}
	}
}

// TestAskModel answers two questions in one form and returns both responses; ctrl+c and esc
// return none.
func TestAskModel(t *testing.T) {
	inputs := []InputRequest{
		{Key: "a", Kind: "elicitation/create", Mode: "form", Message: "first", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)},
		{Key: "b", Kind: "elicitation/create", Mode: "url", URL: "https://example.com/x", Message: "second"},
	}
	m := NewAsk("tool", inputs, Options{NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "example.com") }, teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp}) // ok starts on no, the safe choice: up to yes
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	// huh moves to the next field by a message of its own: wait until enter accepts.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "accept  ctrl+d") }, teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown}) // I will go there
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(AskModel)
	r := final.Responses()
	if string(r["a"]) != `{"action":"accept","content":{"ok":true}}` || string(r["b"]) != `{"action":"accept"}` {
		t.Errorf("responses %v", r)
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'c', Mod: tea.ModCtrl}, {Code: tea.KeyEscape}} {
		if got := ask(t, inputs, "", k); got != nil {
			t.Errorf("%s must answer nothing: %v", k.String(), got)
		}
	}
}

// TestPushedUpdate: an update that came by push is shown as pushed, with the relaxed
// schedule the engine chose, and a pushed terminal status ends the view.
func TestPushedUpdate(t *testing.T) {
	now := t0
	m := New(newFake(), NewFeed(), []string{"t"}, map[string]Snapshot{"t": {TaskID: "t", Status: "working", PollInterval: time.Second, CreatedAt: t0}},
		Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m = batch(m, Update{TaskID: "t", Via: "push", Snap: Snapshot{TaskID: "t", Status: "working", StatusMessage: "pushed step", PollInterval: time.Second, CreatedAt: t0, LastUpdatedAt: t0},
		NextPoll: now.Add(10 * time.Second), Interval: 10 * time.Second, Source: "relaxed while updates come by push"})
	tk := m.tasks["t"]
	if tk.interval != 10*time.Second || tk.via != "push" || tk.snap.StatusMessage != "pushed step" {
		t.Fatalf("after a push: interval %s via %q message %q", tk.interval, tk.via, tk.snap.StatusMessage)
	}
	if r := m.render(); !strings.Contains(r, "(by push)") || !strings.Contains(r, "in 10s (every 10s, relaxed while updates come by push)") {
		t.Errorf("the view does not say the update was pushed:\n%s", r)
	}
	_, cmd := m.Update(feedMsg{updates: []Update{{TaskID: "t", Via: "push", Snap: Snapshot{TaskID: "t", Status: "completed", CreatedAt: t0, LastUpdatedAt: t0}, Done: true}}})
	if !isQuit(cmd) {
		t.Errorf("a pushed terminal status must end the view")
	}
}

// TestHistoryIsBounded: a task that changes its message for hours keeps a bounded history,
// and the detail view still counts every change it no longer shows.
func TestHistoryIsBounded(t *testing.T) {
	now := t0
	m := New(newFake(), nil, []string{"task-1"}, nil, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 80, Height: 30})
	const changes = 1000
	for i := range changes {
		now = now.Add(time.Second)
		s := Snapshot{TaskID: "task-1", Tool: "forever", Status: "working", StatusMessage: fmt.Sprintf("tick %d", i), LastUpdatedAt: now}
		m = batch(m, Update{TaskID: "task-1", Snap: s, Via: "poll"})
	}
	tk := m.tasks["task-1"]
	if len(tk.history) > maxHistory || len(tk.history)+tk.dropped != changes {
		t.Fatalf("history keeps %d entries and counts %d dropped; want at most %d, %d in all", len(tk.history), tk.dropped, maxHistory, changes)
	}
	if last := tk.history[len(tk.history)-1].Message; last != fmt.Sprintf("tick %d", changes-1) {
		t.Errorf("the latest change must be kept, got %q", last)
	}
	view := m.View().Content
	shown := len(regexp.MustCompile(`(?m)^  \d\d:\d\d:\d\d `).FindAllString(view, -1))
	if want := fmt.Sprintf("… %d earlier", changes-shown); !strings.Contains(view, want) {
		t.Errorf("the view shows %d changes and must say %q:\n%s", shown, want, view)
	}
}

// A poll error too long for its line keeps its end, where a Go error chain says the cause: a
// person sees "connection refused" in the view, not only the URL the chain starts with.
func TestPollErrorShowsCause(t *testing.T) {
	long := `tasks/get: transport error: Post "http://127.0.0.1:8080/a/very/long/path/to/the/mcp/endpoint/of/this/server": dial tcp 127.0.0.1:8080: connect: connection refused`
	working := Snapshot{TaskID: "t", Status: "working", PollInterval: time.Hour}
	m := New(newFake(), NewFeed(), []string{"t"}, map[string]Snapshot{"t": working}, Options{Now: func() time.Time { return t0 }, NoColor: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 140, Height: 30})
	m, _ = update(m, feedMsg{updates: []Update{{TaskID: "t", Err: long, Failures: 2}}})
	if v := m.View().Content; !strings.Contains(v, "poll failed 2 time(s): …") || !strings.Contains(v, "connect: connection refused") {
		t.Errorf("the cause of the poll failure is not shown:\n%s", v)
	}
	if got := clipCause(long, 100); ansi.StringWidth(got) != 100 {
		t.Errorf("clipCause = %q: %d cells, want 100", got, ansi.StringWidth(got))
	}
}
