package tui

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// updating reports -update, the flag teatest's golden package already defines.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// t0 is the fixed clock every golden starts from.
var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func ttl(d time.Duration) *time.Duration { return &d }

// golden compares a frame, with styling stripped, to testdata/name.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = ansi.Strip(got)
	path := filepath.Join("testdata", name+".golden")
	if updating() {
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

// fakeEngine stands in for the engine and the command layer: updates go to the view through a
// real Feed, and every command the view sends is recorded, so a test can assert exactly what
// the view asked for.
type fakeEngine struct {
	feed     *Feed
	mu       sync.Mutex
	cancels  map[string]int
	answers  []string // "id/key:response"
	onCancel func(id string)
	changed  chan struct{}
}

func newFake() *fakeEngine {
	return &fakeEngine{feed: NewFeed(), cancels: map[string]int{}, changed: make(chan struct{}, 1)}
}

// signal wakes waitUntil without ever blocking the caller.
func (f *fakeEngine) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// Cancel records the command; by default the task then ends cancelled, as a 2025-11-25
// server's answer would have it.
func (f *fakeEngine) Cancel(id string) {
	f.mu.Lock()
	f.cancels[id]++
	hook := f.onCancel
	f.mu.Unlock()
	if hook != nil {
		hook(id)
	} else {
		f.send(Snapshot{TaskID: id, Status: "cancelled"})
	}
	f.signal()
}

func (f *fakeEngine) Answer(id, key string, resp json.RawMessage) {
	f.mu.Lock()
	f.answers = append(f.answers, id+"/"+key+":"+string(resp))
	f.mu.Unlock()
	f.signal()
}

// send reports a task's new state, as a poll would; a terminal state ends its follow.
func (f *fakeEngine) send(s Snapshot) {
	f.feed.Send(Update{TaskID: s.TaskID, Snap: s, Via: "poll", Done: s.Over()})
}

// get reads the fake's state under its lock.
func get[T any](f *fakeEngine, fn func() T) T { f.mu.Lock(); defer f.mu.Unlock(); return fn() }

// waitUntil waits for cond, re-checking whenever the view sent a command, with a deadline.
func (f *fakeEngine) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-f.changed:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// scheduled is the update that says when task id is next polled.
func scheduled(id string, next time.Time, interval time.Duration, source string) Update {
	return Update{TaskID: id, NextPoll: next, Interval: interval, Source: source}
}

// batch applies updates to m as one batch from the feed.
func batch(m Model, updates ...Update) Model {
	m, _ = update(m, feedMsg{updates: updates, at: time.Now()})
	return m
}

// runFake runs a real program over m inside a synctest bubble (no terminal, no signal
// handler, fixed size). Its clock is the bubble's fake one, so seconds of updates pass at
// once and exactly. It returns the program and a channel with the final model.
func runFake(t *testing.T, m Model) (*tea.Program, <-chan Model) {
	t.Helper()
	prog := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler(),
		tea.WithWindowSize(100, 30))
	done := make(chan Model, 1)
	go func() {
		final, err := prog.Run()
		if err != nil {
			t.Errorf("program: %v", err)
		}
		fm, _ := final.(Model)
		done <- fm
	}()
	return prog, done
}

// update sends one message and returns the model and command, for unit tests.
func update(m Model, msg tea.Msg) (Model, tea.Cmd) {
	mm, cmd := m.Update(msg)
	return mm.(Model), cmd
}

// isQuit runs cmd (and any batch it holds) far enough to tell whether it quits.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if isQuit(c) {
				return true
			}
		}
	}
	return false
}
