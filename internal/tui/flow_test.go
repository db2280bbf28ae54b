package tui

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// The flows below run the real bubbletea program. Those about time run inside a synctest
// bubble, where the program's timers use a fake clock: a minute of polling passes at once and
// every gap is exact. Those about keys and the screen use teatest.

// TestRunsToCompletion: the program polls at the server's interval and quits by itself when the
// task is done, having polled exactly as often as the script needed.
func TestRunsToCompletion(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{
		{TaskID: "t", Status: "working", StatusMessage: "one", PollInterval: time.Millisecond},
		{TaskID: "t", Status: "working", StatusMessage: "two", PollInterval: time.Millisecond},
		{TaskID: "t", Status: "completed", Result: "done!"},
	}
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if got := get(p, func() int { return p.polls["t"] }); got != 3 {
		t.Errorf("polled %d times, want 3", got)
	}
	if final.Detached() || final.Outcomes()["t"].Status != "completed" || final.Outcomes()["t"].Result != "done!" {
		t.Errorf("outcome %+v detached %v", final.Outcomes()["t"], final.Detached())
	}
}

// TestQuitsWhenAllTerminal: with several tasks the view ends only when the last one does,
// whichever terminal status each reaches, and stops polling each task at its end.
func TestQuitsWhenAllTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted()
		w := func(id string) Snapshot { return Snapshot{TaskID: id, Status: "working", PollInterval: time.Second} }
		p.script["a"] = []Snapshot{w("a"), {TaskID: "a", Status: "completed"}}
		p.script["b"] = []Snapshot{w("b"), w("b"), w("b"), w("b"), {TaskID: "b", Status: "expired"}}
		p.script["c"] = []Snapshot{w("c"), w("c"), {TaskID: "c", Status: "failed"}}
		_, done := runFake(t, New(p, []string{"a", "b", "c"}, nil, Options{DisableClock: true}))
		final := <-done
		want := map[string]struct {
			status string
			polls  int
		}{"a": {"completed", 2}, "b": {"expired", 5}, "c": {"failed", 3}}
		for id, w := range want {
			if got := final.Outcomes()[id].Status; got != w.status {
				t.Errorf("%s ended %q, want %q", id, got, w.status)
			}
			if n := get(p, func() int { return p.polls[id] }); n != w.polls {
				t.Errorf("%s polled %d times, want exactly its script's %d", id, n, w.polls)
			}
		}
		if final.Detached() {
			t.Errorf("a view that ended by itself is not detached")
		}
	})
}

// TestStaleTicksNeverDoublePolls floods the program with stale ticks and duplicates of the
// current one while each poll is in flight. There is still only one poll at a time, exactly
// one per scripted answer, and never one earlier than the interval.
func TestStaleTicksNeverDoublePolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 500 * time.Millisecond
		p := newScripted()
		w := Snapshot{TaskID: "t", Status: "working", PollInterval: interval}
		p.script["t"] = []Snapshot{w, w, w, w, {TaskID: "t", Status: "completed"}}
		var (
			mu   sync.Mutex
			prog *tea.Program
		)
		p.onPoll = func(id string, n int) {
			mu.Lock()
			pr := prog
			mu.Unlock()
			// Poll n was started by the tick of generation n (Init armed generation 1).
			for _, gen := range []int{n, n - 1, 0, n} {
				pr.Send(tickMsg{id: id, gen: gen})
			}
		}
		m := New(p, []string{"t"}, map[string]Snapshot{"t": w}, Options{DisableClock: true})
		pr, done := runFake(t, m)
		mu.Lock()
		prog = pr
		mu.Unlock()
		<-done
		synctest.Wait() // any poll a stale tick had started would have run by now
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.polls["t"] != 5 || p.maxInFl["t"] != 1 {
			t.Errorf("%d polls, at most %d at once; want 5 and 1", p.polls["t"], p.maxInFl["t"])
		}
		for i := 1; i < len(p.pollAt["t"]); i++ {
			if gap := p.pollAt["t"][i].Sub(p.pollAt["t"][i-1]); gap < interval {
				t.Errorf("poll %d came %s after the one before, under the %s interval", i, gap, interval)
			}
		}
	})
}

// TestBackoffFlow: failing polls back off exponentially and never end the program; the first
// good answer ends it.
func TestBackoffFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted()
		p.fail["t"] = 3
		p.script["t"] = []Snapshot{{TaskID: "t", Status: "completed"}}
		m := New(p, []string{"t"}, map[string]Snapshot{"t": {TaskID: "t", Status: "working", PollInterval: 100 * time.Millisecond}}, Options{DisableClock: true})
		_, done := runFake(t, m)
		final := <-done
		if final.Outcomes()["t"].Status != "completed" {
			t.Fatalf("status %q", final.Outcomes()["t"].Status)
		}
		at := get(p, func() []time.Time { return p.pollAt["t"] })
		if len(at) != 4 {
			t.Fatalf("%d polls, want 4", len(at))
		}
		for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
			if gap := at[i+1].Sub(at[i]); gap < want*4/5 || gap > want {
				t.Errorf("after failure %d the next poll came %s later, want about %s", i+1, gap, want)
			}
		}
	})
}

// TestPollCadence: 100 polls at a 100 ms interval, then the server slows to 300 ms; no poll
// comes earlier than the latest response asked, and the mean gap is within 10% of it. With
// --interval 250ms the fast phase slows down to it.
func TestPollCadence(t *testing.T) {
	for _, user := range []time.Duration{0, 250 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			p := newScripted()
			var script []Snapshot
			for i := range 150 {
				iv := 100 * time.Millisecond
				if i >= 100 {
					iv = 300 * time.Millisecond
				}
				script = append(script, Snapshot{TaskID: "t", Status: "working", PollInterval: iv})
			}
			p.script["t"] = append(script, Snapshot{TaskID: "t", Status: "completed"})
			_, done := runFake(t, New(p, []string{"t"}, nil, Options{DisableClock: true, MinInterval: user}))
			<-done
			at := get(p, func() []time.Time { return p.pollAt["t"] })
			if len(at) != 151 {
				t.Fatalf("%d polls, want 151", len(at))
			}
			var total [2]time.Duration
			for i := 1; i < len(at); i++ {
				asked := max(script[i-1].PollInterval, user)
				gap := at[i].Sub(at[i-1])
				if gap < asked {
					t.Errorf("poll %d came %s after the previous one; the server asked for %s", i, gap, asked)
				}
				total[min((i-1)/100, 1)] += gap
			}
			for phase, n := range []int{100, 50} {
				asked := max(script[phase*100].PollInterval, user)
				if mean := total[phase] / time.Duration(n); mean > asked*11/10 {
					t.Errorf("phase %d: mean gap %s, want within 10%% of %s", phase, mean, asked)
				}
			}
		})
	}
}

// TestCancelNeedsConfirmation: c then n cancels nothing; c then y cancels exactly once.
func TestCancelNeedsConfirmation(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", PollInterval: time.Hour}}
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	p.waitUntil(t, "the first poll", func() bool { return get(p, func() int { return p.polls["t"] }) >= 1 })
	tm.Type("c")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Cancel task t? (y/n)")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("n")
	tm.Type("cy")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if n := get(p, func() int { return p.cancels["t"] }); n != 1 {
		t.Errorf("cancel called %d times; 'n' must not cancel and 'y' once must cancel once", n)
	}
	if final.Outcomes()["t"].Status != "cancelled" || final.Detached() {
		t.Errorf("status %q detached %v", final.Outcomes()["t"].Status, final.Detached())
	}
}

// TestDetach: q leaves while the task runs, and says so.
func TestDetach(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "working", PollInterval: time.Hour}}
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{DisableClock: true}))
	p.waitUntil(t, "the first poll", func() bool { return get(p, func() int { return p.polls["t"] }) >= 1 })
	tm.Type("q")
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(Model); !final.Detached() {
		t.Errorf("q must detach while the task runs")
	}
}

// TestCtrlCInForm: in a form q is a letter, but ctrl+c still detaches.
func TestCtrlCInForm(t *testing.T) {
	p := newScripted()
	p.script["t"] = []Snapshot{{TaskID: "t", Status: "input_required", PollInterval: time.Hour, Inputs: []InputRequest{{
		Key: "k", Kind: "elicitation/create", Mode: "form", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
	}}}}
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	p.waitUntil(t, "the first poll", func() bool { return get(p, func() int { return p.polls["t"] }) >= 1 })
	// The poller has answered, but the model may not have the answer yet: wait for the view.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("press i to answer")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("iq")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("name: q")) },
		teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(Model); !final.Detached() {
		t.Errorf("ctrl+c in a form must detach")
	}
	if n := get(p, func() int { return len(p.answers) }); n != 0 {
		t.Errorf("detaching sent %d answers", n)
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
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	p.waitUntil(t, "the first poll", func() bool { return get(p, func() int { return p.polls["t"] }) >= 1 })
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("press i to answer")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("i")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // name -> age
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // submit with name empty
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Name is required")) },
		teatest.WithDuration(20*time.Second))
	if n := get(p, func() int { return len(p.answers) }); n != 0 {
		t.Fatalf("an invalid form was sent")
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab}) // back to name
	tm.Type("Ada")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Type("x")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("must be a whole number")) },
		teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	tm.Type("36")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	p.waitUntil(t, "the answer", func() bool { return get(p, func() int { return len(p.answers) }) == 1 })
	// Later polls still list the key: i must not offer it again, and nothing is re-sent.
	polls := get(p, func() int { return p.polls["t"] })
	p.waitUntil(t, "more polls", func() bool { return get(p, func() int { return p.polls["t"] }) >= polls+3 })
	tm.Type("i")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	answers := get(p, func() []string { return p.answers })
	if len(answers) != 1 || answers[0] != `t/name:{"action":"accept","content":{"age":36,"name":"Ada"}}` {
		t.Errorf("answers %q, want the one accepted form", answers)
	}
}

// TestEscapesNeverReachTheTerminal: the bytes the program writes to the terminal, in colour,
// carry none of the escape sequences a server put in its status message.
func TestEscapesNeverReachTheTerminal(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[5mblink\x1b[?1049hdone\x9b2J"
	p := newScripted()
	p.script["t"] = []Snapshot{
		{TaskID: "t", Status: "working", StatusMessage: evil, PollInterval: 10 * time.Millisecond},
		{TaskID: "t", Status: "completed", StatusMessage: evil, Result: evil},
	}
	tm := teatest.NewTestModel(t, New(p, []string{"t"}, nil, Options{DisableClock: true}), teatest.WithInitialTermSize(100, 30))
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("blinkdone")) {
		t.Fatalf("the message text itself is missing from the output: %q", out)
	}
	for _, bad := range []string{"\x1b]0;", "pwned", "\x07", "\x1b[5m", "\x1b[?1049h", "\x9b"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("%q from the server reached the terminal", bad)
		}
	}
}
