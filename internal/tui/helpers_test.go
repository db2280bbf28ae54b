package tui

import (
	"context"
	"encoding/json"
	"errors"
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

// scripted stands in for the command layer: it answers polls from a script and records every
// call, so a test can assert exactly what the view asked for and when.
type scripted struct {
	mu       sync.Mutex
	script   map[string][]Snapshot // successive answers; the last one repeats
	fail     map[string]int        // fail this many polls first
	polls    map[string]int
	pollAt   map[string][]time.Time
	inFlight map[string]int
	maxInFl  map[string]int
	cancels  map[string]int
	answers  []string // "id/key:response"
	onPoll   func(id string, n int)
	changed  chan struct{}
}

func newScripted() *scripted {
	return &scripted{
		script: map[string][]Snapshot{}, fail: map[string]int{}, polls: map[string]int{},
		pollAt: map[string][]time.Time{}, inFlight: map[string]int{}, maxInFl: map[string]int{},
		cancels: map[string]int{}, changed: make(chan struct{}, 1),
	}
}

// signal wakes waitUntil without ever blocking the caller.
func (s *scripted) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *scripted) Poll(_ context.Context, id string) (Snapshot, error) {
	s.mu.Lock()
	s.polls[id]++
	n := s.polls[id]
	s.pollAt[id] = append(s.pollAt[id], time.Now())
	s.inFlight[id]++
	s.maxInFl[id] = max(s.maxInFl[id], s.inFlight[id])
	hook := s.onPoll
	s.mu.Unlock()
	if hook != nil {
		hook(id, n)
	}
	s.mu.Lock()
	defer func() { s.inFlight[id]--; s.mu.Unlock(); s.signal() }()
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
	defer func() { s.mu.Unlock(); s.signal() }()
	s.cancels[id]++
	s.script[id] = []Snapshot{{TaskID: id, Status: "cancelled"}}
	return Snapshot{TaskID: id, Status: "cancelled"}, nil
}

func (s *scripted) Answer(_ context.Context, id, key string, resp json.RawMessage) error {
	s.mu.Lock()
	defer func() { s.mu.Unlock(); s.signal() }()
	s.answers = append(s.answers, id+"/"+key+":"+string(resp))
	return nil
}

// get reads the poller's state under its lock.
func get[T any](s *scripted, f func() T) T { s.mu.Lock(); defer s.mu.Unlock(); return f() }

// waitUntil waits for cond, re-checking whenever the poller was called, with a deadline.
func (s *scripted) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-s.changed:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// runFake runs a real program over m inside a synctest bubble (no terminal, no signal
// handler, fixed size). Its clock is the bubble's fake one, so intervals of seconds pass
// at once and exactly. It returns the program and a channel with the final model.
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
