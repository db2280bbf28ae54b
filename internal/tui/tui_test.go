package tui

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// updating reports -update, the flag teatest's golden package already defines.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// scripted is the command layer's stand-in in these tests: it answers polls from a script
// and counts every call, so a test can assert exactly what the view asked for.
type scripted struct {
	mu      sync.Mutex
	script  map[string][]Snapshot // successive answers; the last one repeats
	fail    map[string]int        // fail this many polls first
	polls   map[string]int
	cancels map[string]int
	answers []string // "id/key:response"
	changed chan struct{}
}

func newScripted() *scripted {
	return &scripted{script: map[string][]Snapshot{}, fail: map[string]int{}, polls: map[string]int{}, cancels: map[string]int{}, changed: make(chan struct{}, 1000)}
}

func (s *scripted) Poll(_ context.Context, id string) (Snapshot, error) {
	s.mu.Lock()
	defer func() { s.mu.Unlock(); s.changed <- struct{}{} }()
	s.polls[id]++
	if s.fail[id] > 0 {
		s.fail[id]--
		return Snapshot{}, errors.New("connection refused")
	}
	list := s.script[id]
	if len(list) == 0 {
		return Snapshot{}, errors.New("no script")
	}
	snap := list[0]
	if len(list) > 1 {
		s.script[id] = list[1:]
	}
	return snap, nil
}

func (s *scripted) Cancel(_ context.Context, id string) (Snapshot, error) {
	s.mu.Lock()
	defer func() { s.mu.Unlock(); s.changed <- struct{}{} }()
	s.cancels[id]++
	s.script[id] = []Snapshot{{TaskID: id, Status: "cancelled", PollInterval: time.Millisecond}}
	return Snapshot{TaskID: id, Status: "cancelled"}, nil
}

func (s *scripted) Answer(_ context.Context, id, key string, resp json.RawMessage) error {
	s.mu.Lock()
	defer func() { s.mu.Unlock(); s.changed <- struct{}{} }()
	s.answers = append(s.answers, id+"/"+key+":"+string(resp))
	return nil
}

func (s *scripted) count(f func() int) int { s.mu.Lock(); defer s.mu.Unlock(); return f() }

// waitUntil waits for cond, re-checking whenever the poller was called, with a deadline.
func (s *scripted) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func ttl(d time.Duration) *time.Duration { return &d }

// TestDetailGolden drives one task through three polls on a fixed clock and compares the frame.
func TestDetailGolden(t *testing.T) {
	now := t0
	m := New(newScripted(), []string{"task-1"}, nil, Options{Now: func() time.Time { return now }, NoColor: true})
	m.width, m.height = 80, 30
	base := Snapshot{TaskID: "task-1", Tool: "sleep", Server: "http://127.0.0.1:8080/mcp", CreatedAt: t0, TTL: ttl(time.Hour), PollInterval: 2 * time.Second}
	step := func(d time.Duration, status, msg string) {
		now = now.Add(d)
		s := base
		s.Status, s.StatusMessage, s.LastUpdatedAt = status, msg, now
		mm, _ := m.Update(pollMsg{id: "task-1", snap: s})
		m = mm.(Model)
	}
	step(0, "working", "step 1/3")
	step(2*time.Second, "working", "step 2/3")
	step(2*time.Second, "input_required", "waiting for a name")
	now = now.Add(1500 * time.Millisecond)
	golden(t, "detail", m.render())
}

func TestTableGolden(t *testing.T) {
	now := t0.Add(90 * time.Second)
	ids := []string{"a1", "b2", "c3", "d4"}
	initial := map[string]Snapshot{
		"a1": {TaskID: "a1", Tool: "sleep", Server: "http://one/mcp", Status: "working", StatusMessage: "step 2/5", CreatedAt: t0, PollInterval: time.Second},
		"b2": {TaskID: "b2", Tool: "ask", Server: "http://one/mcp", Status: "input_required", StatusMessage: "what is your name?", CreatedAt: t0},
		"c3": {TaskID: "c3", Tool: "build", Server: "stdio: ./server", Status: "completed", CreatedAt: t0},
		"d4": {TaskID: "d4", Tool: "deploy", Server: "http://two/mcp", Status: "working", StatusMessage: "rolling out", CreatedAt: t0.Add(-59 * time.Minute), TTL: ttl(time.Hour)},
	}
	m := New(newScripted(), ids, initial, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m.width, m.height = 100, 24
	golden(t, "table", m.render())
	// Narrow terminals drop columns instead of wrapping.
	m.width = 50
	for _, line := range strings.Split(m.render(), "\n") {
		if w := len([]rune(line)); w > 50 {
			t.Errorf("line wider than the terminal (%d): %q", w, line)
		}
	}
	golden(t, "table-narrow", m.render())
}

// TestRunsToCompletion: the program polls at the server's interval and quits by itself when the
// task is done, having polled exactly as often as the script needed.
func TestRunsToCompletion(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{
		{TaskID: "t", Status: "working", StatusMessage: "one", PollInterval: time.Millisecond},
		{TaskID: "t", Status: "working", StatusMessage: "two", PollInterval: time.Millisecond},
		{TaskID: "t", Status: "completed", Result: "done!"},
	}
	m := New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true})
	tm := teatest.NewTestModel(t, m)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if got := p.count(func() int { return p.polls["t"] }); got != 3 {
		t.Errorf("polled %d times, want 3", got)
	}
	if final.Detached() || final.Outcomes()["t"].Status != "completed" {
		t.Errorf("outcome %+v detached %v", final.Outcomes()["t"], final.Detached())
	}
	if h := final.tasks["t"].history; len(h) != 3 {
		t.Errorf("history %v, want three changes", h)
	}
}

// TestStaleTickNeverDoublesPolling: a tick from an older generation, or one that arrives while
// a poll is in flight, starts nothing.
func TestStaleTickNeverDoublesPolling(t *testing.T) {
	m := New(newScripted(), []string{"t"}, map[string]Snapshot{"t": {TaskID: "t", Status: "working"}}, Options{DisableClock: true})
	m.Init() // arms generation 1
	tk := m.tasks["t"]
	if tk.gen != 1 {
		t.Fatalf("gen %d", tk.gen)
	}
	if _, cmd := m.Update(tickMsg{id: "t", gen: 0}); cmd != nil {
		t.Errorf("a stale tick started a poll")
	}
	_, cmd := m.Update(tickMsg{id: "t", gen: 1})
	if cmd == nil || !tk.inFlight {
		t.Fatalf("the current tick must start a poll")
	}
	if _, cmd := m.Update(tickMsg{id: "t", gen: 1}); cmd != nil {
		t.Errorf("a second tick while a poll is in flight started another")
	}
	// After the answer, only the newly armed generation counts.
	m.Update(pollMsg{id: "t", snap: Snapshot{TaskID: "t", Status: "working"}})
	if _, cmd := m.Update(tickMsg{id: "t", gen: 1}); cmd != nil {
		t.Errorf("the previous generation's tick started a poll")
	}
}

// TestErrorsBackOff: failing polls are shown, back off, and do not end the view.
func TestErrorsBackOff(t *testing.T) {
	p := newScripted()
	p.fail["t"] = 2
	m := New(p, []string{"t"}, map[string]Snapshot{"t": {TaskID: "t", Status: "working", PollInterval: 200 * time.Millisecond}}, Options{DisableClock: true, NoColor: true})
	tk := m.tasks["t"]
	m.Update(pollMsg{id: "t", err: errors.New("connection refused")})
	if tk.source != "backoff" || tk.interval < 800*time.Millisecond {
		t.Errorf("after a failure: interval %s from %s, want a backoff of about 1s", tk.interval, tk.source)
	}
	if !strings.Contains(m.render(), "poll failed 1 time(s): connection refused") {
		t.Errorf("the failure is not shown:\n%s", m.render())
	}
	m.Update(pollMsg{id: "t", err: errors.New("connection refused")})
	if tk.interval < 1600*time.Millisecond {
		t.Errorf("second failure: interval %s, want it doubled", tk.interval)
	}
	m.Update(pollMsg{id: "t", snap: Snapshot{TaskID: "t", Status: "working", PollInterval: 200 * time.Millisecond}})
	if tk.failures != 0 || tk.interval != 200*time.Millisecond || tk.source != "server" {
		t.Errorf("after recovery: failures %d interval %s source %s", tk.failures, tk.interval, tk.source)
	}
}

func TestUserIntervalOnlySlows(t *testing.T) {
	m := New(newScripted(), []string{"t"}, nil, Options{MinInterval: 5 * time.Second})
	tk := m.tasks["t"]
	tk.snap.PollInterval = time.Second
	if d := m.intervalFor(tk); d != 5*time.Second {
		t.Errorf("--interval 5s with a 1s suggestion: %s", d)
	}
	tk.snap.PollInterval = 10 * time.Second
	if d := m.intervalFor(tk); d != 10*time.Second {
		t.Errorf("--interval 5s with a 10s suggestion: %s (it may only slow polling)", d)
	}
}

func TestCancelNeedsConfirmation(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", PollInterval: 50 * time.Millisecond}}
	m := New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true})
	tm := teatest.NewTestModel(t, m)
	p.waitUntil(t, "the first poll", func() bool { return p.count(func() int { return p.polls["t"] }) >= 1 })
	tm.Type("cn")
	tm.Type("cy")
	p.waitUntil(t, "the cancel", func() bool { return p.count(func() int { return p.cancels["t"] }) >= 1 })
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if n := p.count(func() int { return p.cancels["t"] }); n != 1 {
		t.Errorf("cancel called %d times; 'n' must not cancel and 'y' once must cancel once", n)
	}
	if final.Outcomes()["t"].Status != "cancelled" {
		t.Errorf("status %q", final.Outcomes()["t"].Status)
	}
}

func TestDetach(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", PollInterval: time.Hour}}
	m := New(p, []string{"t"}, nil, Options{DisableClock: true})
	tm := teatest.NewTestModel(t, m)
	p.waitUntil(t, "the first poll", func() bool { return p.count(func() int { return p.polls["t"] }) >= 1 })
	tm.Type("q")
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model); !final.Detached() {
		t.Errorf("q must detach while the task runs")
	}
}

// TestAnswerForm: a required field is checked before anything is sent, the answer goes once,
// and a key that later polls still list is never offered again.
func TestAnswerForm(t *testing.T) {
	p := newScripted()
	ask := Snapshot{TaskID: "t", Status: "input_required", PollInterval: 20 * time.Millisecond, Inputs: []InputRequest{{
		Key: "name", Kind: "elicitation/create", Mode: "form", Message: "Who are you?",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer"}},"required":["name"]}`),
	}}}
	p.script["t"] = []Snapshot{ask}
	m := New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true})
	tm := teatest.NewTestModel(t, m)
	p.waitUntil(t, "the first poll", func() bool { return p.count(func() int { return p.polls["t"] }) >= 1 })
	tm.Type("i")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // name -> age
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // submit with name empty
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "Name is required") },
		teatest.WithDuration(5*time.Second))
	if n := p.count(func() int { return len(p.answers) }); n != 0 {
		t.Fatalf("an invalid form was sent")
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab}) // back to name
	tm.Type("Ada")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Type("x")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "must be a whole number") },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	tm.Type("36")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	p.waitUntil(t, "the answer", func() bool { return p.count(func() int { return len(p.answers) }) == 1 })
	// Later polls still list the key: 'i' must not offer it again.
	polls := p.count(func() int { return p.polls["t"] })
	p.waitUntil(t, "more polls", func() bool { return p.count(func() int { return p.polls["t"] }) >= polls+2 })
	tm.Type("i")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.answers) != 1 || p.answers[0] != `t/name:{"action":"accept","content":{"age":36,"name":"Ada"}}` {
		t.Errorf("answers %q", p.answers)
	}
}

func TestURLAndRoots(t *testing.T) {
	st := newStyles(true)
	f, _ := newInputForm("t", InputRequest{Key: "k", Kind: "elicitation/create", Mode: "url", URL: "https://example.com/\x1b[2Jauth"}, "/work", st)
	if v := f.view(80); strings.Contains(v, "\x1b") || !strings.Contains(v, "https://example.com/") {
		t.Errorf("url view: %q", v)
	}
	_, _, a := f.key(tea.KeyPressMsg{Code: 'd', Text: "d"})
	if a == nil || string(a.response) != `{"action":"decline"}` {
		t.Errorf("decline: %+v", a)
	}
	f, _ = newInputForm("t", InputRequest{Key: "r", Kind: "roots/list"}, "/work/proj", st)
	_, _, a = f.key(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if a == nil || string(a.response) != `{"roots":[]}` {
		t.Errorf("roots refused: %+v", a)
	}
	_, _, a = f.key(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if a == nil || !strings.Contains(string(a.response), `"uri":"file:///work/proj"`) {
		t.Errorf("roots allowed: %+v", a)
	}
}

// TestEscapesNeverReachTheScreen: server strings with terminal escapes are drawn inert.
func TestEscapesNeverReachTheScreen(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07red\x1b[31m"
	m := New(newScripted(), []string{"t", "u"}, map[string]Snapshot{
		"t": {TaskID: "t", Tool: evil, Server: evil, Status: "working", StatusMessage: evil, CreatedAt: t0},
		"u": {TaskID: "u\x1b[5m", Status: "failed", Result: evil},
	}, Options{Now: func() time.Time { return t0 }, NoColor: true})
	for _, frame := range []string{m.render(), func() string { m.detail = true; return m.render() }(), func() string { m.cursor = 1; return m.render() }()} {
		if strings.ContainsAny(frame, "\x1b\x07") {
			t.Errorf("an escape sequence reached the frame: %q", frame)
		}
	}
}

func BenchmarkView1000(b *testing.B) {
	ids := make([]string, 1000)
	initial := map[string]Snapshot{}
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%04d", i)
		initial[ids[i]] = Snapshot{TaskID: ids[i], Tool: "sleep", Server: "http://127.0.0.1:8080/mcp", Status: "working", StatusMessage: "step 3/10", CreatedAt: t0, PollInterval: time.Second}
	}
	m := New(newScripted(), ids, initial, Options{Now: func() time.Time { return t0.Add(time.Minute) }})
	m.width, m.height = 120, 40
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

func BenchmarkPollUpdate(b *testing.B) {
	m := New(newScripted(), []string{"t"}, nil, Options{})
	s := Snapshot{TaskID: "t", Status: "working", StatusMessage: "step", PollInterval: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		m.tasks["t"].inFlight = true
		m.Update(pollMsg{id: "t", snap: s})
	}
}

// TestStatusGoldens renders the detail view of every status, a stuck task and the input form
// at 80 and 120 columns.
func TestStatusGoldens(t *testing.T) {
	for _, width := range []int{80, 120} {
		var all strings.Builder
		for _, status := range []string{"working", "input_required", "completed", "failed", "cancelled", "expired"} {
			now := t0.Add(10 * time.Minute)
			s := Snapshot{TaskID: "task-" + status, Tool: "build", Server: "http://127.0.0.1:8080/mcp", Status: status,
				StatusMessage: "message for " + status, CreatedAt: t0, LastUpdatedAt: t0.Add(9 * time.Minute), TTL: ttl(time.Hour), PollInterval: 5 * time.Second}
			if status == "completed" {
				s.Result = "built 42 artefacts"
			}
			if status == "input_required" {
				s.Inputs = []InputRequest{{Key: "confirm", Kind: "elicitation/create", Mode: "form", Message: "Deploy to production?"}}
			}
			m := New(newScripted(), []string{s.TaskID}, map[string]Snapshot{s.TaskID: s}, Options{Now: func() time.Time { return now }, NoColor: true})
			m.width, m.height = width, 30
			fmt.Fprintf(&all, "==== %s\n%s", status, m.render())
		}
		// Stuck: nothing changed for 12 intervals.
		now := t0.Add(time.Minute)
		s := Snapshot{TaskID: "stuck", Tool: "build", Status: "working", StatusMessage: "compiling", CreatedAt: t0, PollInterval: 5 * time.Second}
		m := New(newScripted(), []string{"stuck"}, map[string]Snapshot{"stuck": s}, Options{Now: func() time.Time { return t0 }, NoColor: true})
		m.opts.Now = func() time.Time { return now }
		m.tasks["stuck"].interval = 5 * time.Second
		m.width, m.height = width, 30
		fmt.Fprintf(&all, "==== stuck\n%s", m.render())
		// The form.
		f, _ := newInputForm("task-1", InputRequest{Key: "who", Kind: "elicitation/create", Mode: "form", Message: "Who is deploying?",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"your full name"},"team":{"type":"string","enum":["red","blue"],"default":"red"},"dryRun":{"type":"boolean","default":true},"replicas":{"type":"integer"}},"required":["name","replicas"]}`)},
			"/work", newStyles(true))
		fmt.Fprintf(&all, "==== form\n%s", f.view(width))
		golden(t, fmt.Sprintf("statuses-%d", width), all.String())
		if !strings.Contains(all.String(), "possibly stuck") {
			t.Errorf("the stuck task is not marked")
		}
	}
}

// TestPollCadence: 100 polls at a 100 ms interval; no poll comes earlier than the interval
// asks, and the mean gap is within 10% of it.
func TestPollCadence(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10 s")
	}
	p := &timedPoller{at: make([]time.Time, 0, 101), done: make(chan struct{})}
	m := New(p, []string{"t"}, nil, Options{DisableClock: true})
	tm := teatest.NewTestModel(t, m)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("too slow")
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	for i := 1; i < len(p.at); i++ {
		gap := p.at[i].Sub(p.at[i-1])
		if gap < 100*time.Millisecond {
			t.Errorf("poll %d came %s after the previous one, before the 100ms interval", i, gap)
		}
		total += gap
	}
	mean := total / time.Duration(len(p.at)-1)
	if mean > 110*time.Millisecond {
		t.Errorf("mean gap %s, want within 10%% of 100ms", mean)
	}
	t.Logf("%d polls, mean gap %s", len(p.at), mean)
}

// timedPoller records when each poll arrives; the task completes at the 101st.
type timedPoller struct {
	mu   sync.Mutex
	at   []time.Time
	done chan struct{}
}

func (p *timedPoller) Poll(context.Context, string) (Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = append(p.at, time.Now())
	if len(p.at) == 101 {
		close(p.done)
		return Snapshot{TaskID: "t", Status: "completed"}, nil
	}
	return Snapshot{TaskID: "t", Status: "working", PollInterval: 100 * time.Millisecond}, nil
}
func (p *timedPoller) Cancel(context.Context, string) (Snapshot, error) { return Snapshot{}, nil }
func (p *timedPoller) Answer(context.Context, string, string, json.RawMessage) error {
	return nil
}

// BenchmarkIdleWatch measures the CPU the view costs while it watches one task whose server
// asks for a 5 s interval: the program runs for the benchmark's time and the metric is the
// process's CPU time as a share of one core (issue 4: under 1%).
func BenchmarkIdleWatch(b *testing.B) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", StatusMessage: "waiting", PollInterval: 5 * time.Second}}
	m := New(p, []string{"t"}, nil, Options{})
	prog := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30), tea.WithoutSignals(), tea.WithFPS(FPS))
	go prog.Run()
	defer prog.Kill()
	time.Sleep(200 * time.Millisecond) // let it start; this benchmark measures time passing
	b.ResetTimer()
	startCPU, start := cpuTime(), time.Now()
	for b.Loop() {
		time.Sleep(250 * time.Millisecond)
	}
	wall := time.Since(start)
	b.ReportMetric(100*float64(cpuTime()-startCPU)/float64(wall), "%cpu")
}
