package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// The flows below run the real bubbletea program, fed by a fake engine through a real Feed.
// Those about time run inside a synctest bubble, where the program's timers use a fake clock;
// those about keys and the screen use teatest. How tasks are polled (cadence, backoff, one poll
// at a time) is the engine's, and tested in internal/follow.

// TestRunsToCompletion: the program shows what the engine reports and quits by itself when
// the task is done.
func TestRunsToCompletion(t *testing.T) {
	f := newFake()
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	f.send(Snapshot{TaskID: "t", Status: "working", StatusMessage: "one"})
	f.send(Snapshot{TaskID: "t", Status: "working", StatusMessage: "two"})
	f.send(Snapshot{TaskID: "t", Status: "completed", Result: "done!"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.Detached() || final.Outcomes()["t"].Status != "completed" || final.Outcomes()["t"].Result != "done!" {
		t.Errorf("outcome %+v detached %v", final.Outcomes()["t"], final.Detached())
	}
	if h := final.tasks["t"].history; len(h) != 3 {
		t.Errorf("history of %d entries, want one per change: %+v", len(h), h)
	}
}

// TestQuitsWhenAllTerminal: with several tasks the view ends only when the engine has
// finished the last one, whichever way each ends.
func TestQuitsWhenAllTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		defer f.feed.Close()
		_, done := runFake(t, New(f, f.feed, []string{"a", "b", "c"}, nil, Options{DisableClock: true}))
		for _, id := range []string{"a", "b", "c"} {
			f.send(Snapshot{TaskID: id, Status: "working"})
		}
		time.Sleep(time.Second) // a second of fake time: the view has taken the batch
		f.send(Snapshot{TaskID: "a", Status: "completed"})
		f.send(Snapshot{TaskID: "c", Status: "failed"})
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the view ended while b was still followed")
		default:
		}
		f.feed.Send(Update{TaskID: "b", Snap: Snapshot{TaskID: "b", Status: "expired"}, Done: true, Ended: "the server no longer knows this task"})
		final := <-done
		for id, want := range map[string]string{"a": "completed", "b": "expired", "c": "failed"} {
			if got := final.Outcomes()[id].Status; got != want {
				t.Errorf("%s ended %q, want %q", id, got, want)
			}
		}
		if final.Detached() {
			t.Errorf("a view that ended by itself is not detached")
		}
	})
}

// TestOneViewPerFrame: however many updates the engine sends, the view takes them in at most
// one batch per frame, so it draws at most one View per frame, and loses none of them.
func TestOneViewPerFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const tasks, seconds, perSecond = 1000, 3, 1000
		ids := make([]string, tasks)
		for i := range ids {
			ids[i] = fmt.Sprintf("task-%04d", i)
		}
		f := newFake()
		defer f.feed.Close()
		msgs := map[string]int{}
		prog := tea.NewProgram(counting{New(f, f.feed, ids, nil, Options{}), msgs}, tea.WithInput(nil), tea.WithOutput(io.Discard),
			tea.WithoutSignalHandler(), tea.WithWindowSize(100, 30))
		done := make(chan Model, 1)
		go func() {
			final, err := prog.Run()
			if err != nil {
				t.Errorf("program: %v", err)
			}
			done <- final.(counting).Model
		}()
		start := time.Now()
		for n := range seconds * perSecond {
			id := ids[n%tasks]
			f.send(Snapshot{TaskID: id, Status: "working", StatusMessage: fmt.Sprintf("update %d", n)})
			time.Sleep(time.Second / perSecond) // the load: a thousand answers a second
		}
		for _, id := range ids {
			f.send(Snapshot{TaskID: id, Status: "completed", StatusMessage: "last"})
		}
		final := <-done
		elapsed := time.Since(start)
		frames := int(elapsed/frame) + 1
		if b := msgs["tui.feedMsg"]; b > frames {
			t.Errorf("%d batches in %s: more than one per frame (%d frames)", b, elapsed, frames)
		}
		// bubbletea draws once as it starts, after every message (the batches, and the few
		// messages every program gets at its start: window size, colour profile, …), and once
		// as it quits.
		total := 2
		for _, n := range msgs {
			total += n
		}
		if v := final.Views(); v != int64(total) || total > frames+6 {
			t.Errorf("%d views for %d messages (%v) in %d frames", v, total, msgs, frames)
		}
		for _, id := range ids {
			tk := final.tasks[id]
			if tk.snap.StatusMessage != "last" || len(tk.history) != seconds+1 {
				t.Fatalf("%s: %q after %d changes, want every update applied", id, tk.snap.StatusMessage, len(tk.history))
			}
		}
	})
}

// counting wraps the view and counts the messages it gets, by type.
type counting struct {
	Model
	msgs map[string]int
}

func (c counting) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	c.msgs[fmt.Sprintf("%T", msg)]++
	m, cmd := c.Model.Update(msg)
	c.Model = m.(Model)
	return c, cmd
}

// TestCancelNeedsConfirmation: c then n cancels nothing; c then y cancels exactly once.
func TestCancelNeedsConfirmation(t *testing.T) {
	f := newFake()
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	f.send(Snapshot{TaskID: "t", Status: "working"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("● working")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("c")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Cancel task t? (y/n)")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("n")
	tm.Type("cy")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if n := get(f, func() int { return f.cancels["t"] }); n != 1 {
		t.Errorf("cancel sent %d times; 'n' must not cancel and 'y' once must cancel once", n)
	}
	if final.Outcomes()["t"].Status != "cancelled" || final.Detached() {
		t.Errorf("status %q detached %v", final.Outcomes()["t"].Status, final.Detached())
	}
}

// TestDetach: q leaves while the task runs, and says so.
func TestDetach(t *testing.T) {
	f := newFake()
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{DisableClock: true}))
	f.send(Snapshot{TaskID: "t", Status: "working"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("working")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("q")
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(Model); !final.Detached() {
		t.Errorf("q must detach while the task runs")
	}
}

// TestCtrlCInForm: in a form q is a letter, but ctrl+c still detaches.
func TestCtrlCInForm(t *testing.T) {
	f := newFake()
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	f.send(Snapshot{TaskID: "t", Status: "input_required", Inputs: []InputRequest{{
		Key: "k", Kind: "elicitation/create", Mode: "form", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
	}}})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("press i to answer")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("iq")
	// The renderer redraws the whole line ("> q") or only the cells that changed (a cursor
	// move, then "q"), depending on how the keys fell into frames: either way a q is written
	// after the field's label, and nothing else the form shows after it has one.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		i := bytes.LastIndex(b, []byte("name"))
		return i >= 0 && bytes.IndexByte(b[i+len("name"):], 'q') >= 0
	}, teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(Model); !final.Detached() {
		t.Errorf("ctrl+c in a form must detach")
	}
	if n := get(f, func() int { return len(f.answers) }); n != 0 {
		t.Errorf("detaching sent %d answers", n)
	}
}

// TestAnswerForm: a required field is checked before anything is sent, the answer goes once,
// and a key that later updates still list is never offered again.
func TestAnswerForm(t *testing.T) {
	f := newFake()
	ask := Snapshot{TaskID: "t", Status: "input_required", Inputs: []InputRequest{{
		Key: "name", Kind: "elicitation/create", Mode: "form", Message: "Who are you?",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer"}},"required":["name"]}`),
	}}}
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{NoColor: true, DisableClock: true}))
	f.send(ask)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("press i to answer")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("i")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // name is empty: enter stays on it
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(`field "name" is required`)) },
		teatest.WithDuration(20*time.Second))
	if n := get(f, func() int { return len(f.answers) }); n != 0 {
		t.Fatalf("an invalid form was sent")
	}
	tm.Type("Ada")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // to age, the last field
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("accept  ctrl+d")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("x")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("must be a whole number")) },
		teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	tm.Type("36")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	f.waitUntil(t, "the answer", func() bool { return get(f, func() int { return len(f.answers) }) == 1 })
	// Later updates still list the key (the server has not taken the answer yet): i must not
	// offer it again, and nothing is re-sent.
	for n := range 3 {
		s := ask
		s.StatusMessage = fmt.Sprintf("still asking %d", n)
		f.send(s)
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("still asking 2")) },
		teatest.WithDuration(20*time.Second))
	tm.Type("iq") // i offers nothing: q detaches
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	answers := get(f, func() []string { return f.answers })
	if len(answers) != 1 || answers[0] != `t/name:{"action":"accept","content":{"age":36,"name":"Ada"}}` {
		t.Errorf("answers %q, want the one accepted form", answers)
	}
}

// TestEscapesNeverReachTheTerminal: the bytes the program writes to the terminal, in colour,
// carry none of the escape sequences a server put in its status message.
func TestEscapesNeverReachTheTerminal(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[5mblink\x1b[?1049hdone\x9b2J"
	f := newFake()
	tm := teatest.NewTestModel(t, New(f, f.feed, []string{"t"}, nil, Options{DisableClock: true}), teatest.WithInitialTermSize(100, 30))
	f.send(Snapshot{TaskID: "t", Status: "working", StatusMessage: evil})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("blinkdone")) },
		teatest.WithDuration(20*time.Second))
	f.send(Snapshot{TaskID: "t", Status: "completed", StatusMessage: evil, Result: evil})
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "blinkdone") {
		t.Fatalf("the message text itself is missing from the output: %q", out)
	}
	for _, bad := range []string{"\x1b]0;", "pwned", "\x07", "\x1b[5m", "\x1b[?1049h", "\x9b"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("%q from the server reached the terminal", bad)
		}
	}
}
