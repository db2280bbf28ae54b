// Package demo is mcptask's built-in reference MCP task server. It exists so that the README's
// first command (`mcptask demo`) has a real peer to talk to without any setup, and so that the
// end-to-end tests have a conformant server that speaks both protocol generations on one
// endpoint: MCP 2026-07-28 with the io.modelcontextprotocol/tasks extension ("modern") and
// MCP 2025-11-25 with its experimental core tasks ("legacy").
//
// It is deliberately an independent implementation of the wire protocol: it shares only the
// JSON-RPC framing types and constants with internal/rpc, never the client code, so that a
// client bug cannot be hidden by the same bug on the server side.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Version is the serverInfo version the demo reports.
const Version = "0.1.0"

// serverName is the serverInfo name the demo reports in both eras.
const serverName = "mcptask-demo"

// Defaults for Options. One second per step makes `seconds` real seconds; an hour of TTL is
// long enough to resume a task after a coffee break and short enough not to pile up.
const (
	defaultStepDelay    = time.Second
	defaultPollInterval = time.Second
	defaultTTL          = time.Hour
	// maxTTL caps a ttl a legacy client requests. C25-TASKS §TTL and Resource Management:
	// "Receivers MAY override the requested ttl duration."
	maxTTL = 24 * time.Hour
)

// Options configures a Server. The zero value is a usable in-memory server with real-time
// steps.
type Options struct {
	// Store is a file path. When set, tasks and legacy sessions are written there after every
	// change (temp file, fsync, rename) and reloaded by New, so a restarted server still knows
	// them and resumes unfinished work from its last step.
	Store string
	// StepDelay is the length of one step of the sleep-like tools (one "second" of sleep, one
	// tick of forever). Zero means one second; tests use a few milliseconds.
	StepDelay time.Duration
	// PollInterval is the poll interval suggested on every task. Zero means one second.
	PollInterval time.Duration
	// TTL is the default task lifetime. Zero means one hour; a negative value means unlimited
	// (reported as null).
	TTL time.Duration
	// Now is the clock used for timestamps and expiry. Nil means time.Now.
	Now func() time.Time
	// Logf receives diagnostic lines (never secrets). Nil discards them.
	Logf func(format string, args ...any)
	// Conformance adds the fixture tools of the official MCP conformance suite
	// (@modelcontextprotocol/conformance: greet, slow_compute, failing_job,
	// protocol_error_job, confirm_delete, multi_input, test_tool_with_task and the diagnostic
	// tools of its server-stateless scenario) and an empty prompt and resource catalogue, so
	// that every server scenario of the suite can be run against the demo.
	Conformance bool
	// Fault, when set, makes the demo break one rule on purpose (faults.go; tests only).
	Fault Fault
}

// Server is the demo MCP server. One Server can serve HTTP and stdio clients at the same time;
// its tasks are shared, subject to the per-era visibility rules.
type Server struct {
	opts Options

	mu       sync.Mutex
	tasks    map[string]*task
	sessions map[string]*session
	pending  map[string]chan *rpc.Message // server→client requests awaiting a response
	changed  chan struct{}                // closed and replaced on every task change
	closed   bool
	// lists counts the list changes the conformance fixtures announced (fixtures.go).
	lists listRevisions

	closing chan struct{}
	wg      sync.WaitGroup
}

// session is a legacy (2025-11-25) session: one initialize. Tasks created under it are visible
// only to it, like several real servers do (PROTOCOL.md §1.14).
type session struct {
	ID string `json:"id"`
	// Elicitation records whether the client declared the elicitation capability at
	// initialize. C25-TASKS §Input Required Status: the server may only send elicitation
	// requests to a client that declared it.
	Elicitation bool      `json:"elicitation"`
	CreatedAt   time.Time `json:"createdAt"`
}

// New returns a Server. With Options.Store set it loads the store file (a missing file is an
// empty store) and restarts the work of every task that was not finished.
func New(opts Options) (*Server, error) {
	if opts.StepDelay <= 0 {
		opts.StepDelay = defaultStepDelay
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	if opts.TTL == 0 {
		opts.TTL = defaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	s := &Server{
		opts:     opts,
		tasks:    map[string]*task{},
		sessions: map[string]*session{},
		pending:  map[string]chan *rpc.Message{},
		changed:  make(chan struct{}),
		closing:  make(chan struct{}),
	}
	if opts.Store != "" {
		if err := s.load(); err != nil {
			return nil, fmt.Errorf("demo: load store %s: %w", opts.Store, err)
		}
	}
	s.mu.Lock()
	for _, t := range s.tasks {
		if !t.Status.Terminal() {
			s.startLocked(t)
		}
	}
	s.mu.Unlock()
	return s, nil
}

// Close stops the background work of all tasks without changing their status, so that a
// server started later on the same store resumes them, and writes the store one last time.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

// notifyLocked wakes everyone waiting for a task change (tasks/result, tests).
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// storeFile is the on-disk shape of Options.Store.
type storeFile struct {
	Version  int        `json:"version"`
	Sessions []*session `json:"sessions"`
	Tasks    []*task    `json:"tasks"`
}

func (s *Server) load() error {
	data, err := os.ReadFile(s.opts.Store)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var f storeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	// Stores written before tasks could ask several questions kept one, flat.
	var old struct {
		Tasks []struct {
			InputKey     string          `json:"inputKey"`
			InputRequest json.RawMessage `json:"inputRequest"`
			Answer       json.RawMessage `json:"answer"`
		} `json:"tasks"`
	}
	if json.Unmarshal(data, &old) == nil && len(old.Tasks) == len(f.Tasks) {
		for i, o := range old.Tasks {
			if o.InputKey != "" && len(f.Tasks[i].Inputs) == 0 {
				f.Tasks[i].Inputs = []taskInput{{Key: o.InputKey, Request: o.InputRequest, Answer: o.Answer}}
			}
		}
	}
	for _, se := range f.Sessions {
		s.sessions[se.ID] = se
	}
	for _, t := range f.Tasks {
		t.wake = make(chan struct{}, 1)
		// A tasks/result stream that was carrying the elicitation died with the old process.
		t.inFlight = false
		s.tasks[t.ID] = t
	}
	return nil
}

// saveLocked writes the store crash-safely: a temp file in the same directory, fsync, rename,
// fsync of the directory. A reader never sees a half-written file.
func (s *Server) saveLocked() error {
	if s.opts.Store == "" {
		return nil
	}
	f := storeFile{Version: 1}
	for _, se := range s.sessions {
		f.Sessions = append(f.Sessions, se)
	}
	for _, t := range s.tasks {
		f.Tasks = append(f.Tasks, t)
	}
	data, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return fmt.Errorf("demo: encode store: %w", err)
	}
	dir := filepath.Dir(s.opts.Store)
	tmp, err := os.CreateTemp(dir, ".demo-store-*")
	if err != nil {
		return fmt.Errorf("demo: save store: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("demo: save store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("demo: save store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("demo: save store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.opts.Store); err != nil {
		return fmt.Errorf("demo: save store: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// persistLocked saves the store and logs a failure instead of failing the request: the demo
// keeps serving from memory when the disk misbehaves.
func (s *Server) persistLocked() {
	if err := s.saveLocked(); err != nil {
		s.opts.Logf("%v", err)
	}
}

// waitChange returns a channel closed at the next task change.
func (s *Server) waitChange() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// request sends a server→client JSON-RPC request through send and waits for the client's
// response, which arrives through deliver (an HTTP POST or a stdin line).
func (s *Server) request(ctx context.Context, send func(*rpc.Message) error, id, method string, params any) (*rpc.Message, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	msg := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprintf("%q", id)), Method: method, Params: p}
	key := msg.IDKey()
	ch := make(chan *rpc.Message, 1)
	s.mu.Lock()
	s.pending[key] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, key)
		s.mu.Unlock()
	}()
	if err := send(msg); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closing:
		return nil, errors.New("server closing")
	}
}

// deliver hands a client's JSON-RPC response to the request waiting for it. It reports
// whether anyone was waiting.
func (s *Server) deliver(m *rpc.Message) bool {
	s.mu.Lock()
	ch, ok := s.pending[m.IDKey()]
	s.mu.Unlock()
	if ok {
		select {
		case ch <- m:
		default:
		}
	}
	return ok
}
