package follow

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
	"github.com/mcptask/mcptask/internal/state"
)

// These tests run the engine against the demo server on loopback, in both eras, without cobra
// or a terminal: what a command or the live view gets from it.

// TestFollowsToTheResult: a created task is followed to its result; its events start with
// KindCreated and end with KindResult, statuses between; its record leaves the ledger.
func TestFollowsToTheResult(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			path := ledgerPath(t)
			events := &recorder{}
			e := New(Options{Ledger: state.Open(path), NoPush: true}, events) // polling; push has its own test
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "sleep", map[string]any{"seconds": 3}, path)
			s.Follow(c, Target{ID: tk.TaskID, Tool: "sleep", Task: tk, Created: true})
			o := e.Run(t.Context())[0]
			if o.End != EndResult || text(o) != "slept 3 seconds" || o.Era != rpc.Era(era) || o.Tool != "sleep" {
				t.Fatalf("outcome %+v (%s)", o, text(o))
			}
			kinds := events.kinds(tk.TaskID)
			if kinds[0] != KindCreated || kinds[1] != KindStatus || kinds[len(kinds)-1] != KindResult {
				t.Errorf("events %v: want created, status, …, result", kinds)
			}
			if n := countOf(rec.Methods(), "tasks/get"); n == 0 {
				t.Errorf("never polled: %v", rec.Methods())
			}
			if era == rpc.VersionLegacy && countOf(rec.Methods(), "tasks/result") != 1 {
				t.Errorf("2025-11-25: want exactly one tasks/result: %v", rec.Methods())
			}
			if left := records(t, path); len(left) != 0 {
				t.Errorf("a shown result leaves the ledger: %+v", left)
			}
		})
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestAnswersGivenUpFront: --answer answers a task's question in both eras (2026-07-28
// tasks/update, once; 2025-11-25 elicitation/create on a tasks/result kept open), and the
// answered key is remembered in the ledger until the record goes.
func TestAnswersGivenUpFront(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			key := "name"
			if era == rpc.VersionLegacy {
				key = "elicitation"
			}
			events := &recorder{}
			e := New(Options{Answerer: Answers{key: json.RawMessage(`{"name":"Ada"}`)}}, events)
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "ask", nil, "")
			s.Follow(c, Target{ID: tk.TaskID, Task: tk})
			o := e.Run(t.Context())[0]
			if o.End != EndResult || text(o) != "Hello, Ada!" {
				t.Fatalf("outcome %+v (%s)", o, text(o))
			}
			if era == rpc.VersionModern && countOf(rec.Methods(), "tasks/update") != 1 {
				t.Errorf("want exactly one tasks/update: %v", rec.Methods())
			}
			if events.count(KindAnswered) != 1 {
				t.Errorf("%d answered events, want 1", events.count(KindAnswered))
			}
		})
	}
}

// TestBadAnswerSendsNothing: an answer that does not fit the question's requestedSchema ends
// the follow with an *AnswerError naming the field, and nothing is sent.
func TestBadAnswerSendsNothing(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	e := New(Options{Answerer: Answers{"name": json.RawMessage(`{"name":7}`)}})
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "ask", nil, "")
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	o := e.Run(t.Context())[0]
	var ae *AnswerError
	if o.End != EndError || !errors.As(o.Err, &ae) || !strings.Contains(o.Err.Error(), `"name"`) {
		t.Fatalf("outcome %+v", o)
	}
	if countOf(rec.Methods(), "tasks/update") != 0 {
		t.Errorf("a bad answer was sent: %v", rec.Methods())
	}
}

// TestUnansweredQuestionEndsTheFollow: without an answer or a listener, a question ends the
// follow as EndInputRequired with its requests; the task keeps waiting.
func TestUnansweredQuestionEndsTheFollow(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	e := New(Options{Answerer: Answers{"other": json.RawMessage(`{}`)}})
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "ask", nil, "")
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	o := e.Run(t.Context())[0]
	if o.End != EndInputRequired || len(o.Requests) != 1 || o.Requests[0].Key != "name" || o.Requests[0].Method != "elicitation/create" {
		t.Fatalf("outcome %+v", o)
	}
}

// TestLaterLeavesTheQuestionOpen: with Options.Later and nothing to answer, elicitation is
// declared, so the task asks rather than fails; the follow ends as EndInputRequired with the
// question (on 2025-11-25 the elicitation/create taken from tasks/result, keyed "elicitation",
// neither answered nor cancelled), and the task still waits: a later follow with an answer
// finishes it.
func TestLaterLeavesTheQuestionOpen(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			e := New(Options{Later: true, NoPush: true})
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "ask", nil, "")
			s.Follow(c, Target{ID: tk.TaskID, Task: tk})
			o := e.Run(t.Context())[0]
			key := "name"
			if era == rpc.VersionLegacy {
				key = "elicitation"
			}
			if o.End != EndInputRequired || len(o.Requests) != 1 || o.Requests[0].Key != key || o.Requests[0].Method != "elicitation/create" ||
				!strings.Contains(string(o.Requests[0].Params), "What is your name?") {
				t.Fatalf("outcome %+v", o)
			}
			if got, err := c.GetTask(t.Context(), tk.TaskID); err != nil || got.Status != rpc.StatusInputRequired {
				t.Fatalf("after the follow the task is %+v (%v), want still input_required", got, err)
			}
			if era == rpc.VersionModern {
				// Another follow answers it later, as 'mcptask update' or 'result --answer' do.
				e2 := New(Options{Answerer: Answers{key: json.RawMessage(`{"name":"Lin"}`)}, NoPush: true})
				s2 := e2.Server(url, url)
				c2 := connect(t, url, era, s2)
				s2.Follow(c2, Target{ID: tk.TaskID})
				if o := e2.Run(t.Context())[0]; o.End != EndResult || text(o) != "Hello, Lin!" {
					t.Fatalf("answered later: %+v (%s)", o, text(o))
				}
			}
		})
	}
}

// TestListenerAnswers: with Options.Listen the question goes out as events and waits; the
// listener's Answer takes it (2026-07-28 tasks/update, once; 2025-11-25 the response to the
// waiting elicitation/create), and the task finishes.
func TestListenerAnswers(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			var e *Engine
			var once sync.Map
			events := &recorder{on: func(ev Event) {
				for _, r := range ev.Requests {
					if _, dup := once.LoadOrStore(r.Key, true); !dup {
						if r.Legacy != (era == rpc.VersionLegacy) || r.Method != "elicitation/create" {
							t.Errorf("request %+v", r)
						}
						go e.Answer(r.TaskID, r.Key, json.RawMessage(`{"action":"accept","content":{"name":"Grace"}}`))
					}
				}
			}}
			e = New(Options{Listen: true, NoPush: true}, events)
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "ask", nil, "")
			s.Follow(c, Target{ID: tk.TaskID, Task: tk})
			o := e.Run(t.Context())[0]
			if o.End != EndResult || text(o) != "Hello, Grace!" {
				t.Fatalf("outcome %+v (%s)", o, text(o))
			}
			if era == rpc.VersionModern && countOf(rec.Methods(), "tasks/update") != 1 {
				t.Errorf("want exactly one tasks/update: %v", rec.Methods())
			}
			if events.count(KindAnswered) != 1 {
				t.Errorf("%d answered events, want 1", events.count(KindAnswered))
			}
		})
	}
}

// TestCancelCommand: Cancel sends tasks/cancel once and the follow goes on to the task's real
// end, cancelled, in both eras; the record goes.
func TestCancelCommand(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			path := ledgerPath(t)
			var e *Engine
			var once sync.Once
			events := &recorder{on: func(ev Event) {
				if ev.Kind == KindStatus {
					once.Do(func() { e.Cancel(ev.TaskID) })
				}
			}}
			e = New(Options{Ledger: state.Open(path), NoPush: true}, events)
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "forever", nil, path)
			s.Follow(c, Target{ID: tk.TaskID, Task: tk})
			o := e.Run(t.Context())[0]
			if o.End != EndCancelled || o.Task.Status != rpc.StatusCancelled {
				t.Fatalf("outcome %+v", o)
			}
			if n := countOf(rec.Methods(), "tasks/cancel"); n != 1 || events.count(KindCancelRequested) != 1 {
				t.Errorf("%d tasks/cancel, %d acknowledgements; want one of each", n, events.count(KindCancelRequested))
			}
			if left := records(t, path); len(left) != 0 {
				t.Errorf("a cancelled task leaves the ledger: %+v", left)
			}
		})
	}
}

// TestStopDetaches: Stop ends the follow of a running task as EndDetached; it keeps running
// and stays in the ledger, with its status.
func TestStopDetaches(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	path := ledgerPath(t)
	var e *Engine
	var once sync.Once
	// Stop once the follow is under way: the first look is the one event every run has (a
	// later poll may not come for a long time, with push updates relaxing polling).
	e = New(Options{Ledger: state.Open(path)}, SinkFunc(func(ev Event) {
		if ev.Kind == KindStatus {
			once.Do(e.Stop)
		}
	}))
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "forever", nil, path)
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	if o := e.Run(t.Context())[0]; o.End != EndDetached {
		t.Fatalf("outcome %+v", o)
	}
	if left := records(t, path); len(left) != 1 || left[0].Status != "working" {
		t.Errorf("a detached task stays in the ledger, working: %+v", left)
	}
}

// TestPushUpdatesBothEras: a 2026-07-28 listen stream, and 2025-11-25 status notifications (the
// demo over stdio sends them; here, over HTTP, only the listen stream), bring the task's end
// long before its 30 s poll interval would.
func TestPushUpdates(t *testing.T) {
	url, rec := demoServer(t, demo.Options{PollInterval: 30 * time.Second, StepDelay: 50 * time.Millisecond})
	events := &recorder{}
	e := New(Options{}, events)
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "sleep", map[string]any{"seconds": 5}, "")
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	start := time.Now()
	o := e.Run(t.Context())[0]
	if o.End != EndResult || text(o) != "slept 5 seconds" || time.Since(start) > 10*time.Second {
		t.Fatalf("outcome %+v after %s", o, time.Since(start))
	}
	if events.count(KindPushUp) == 0 || countOf(rec.Methods(), "subscriptions/listen") == 0 {
		t.Errorf("no listen stream came up: %v", rec.Methods())
	}
	viaPush := false
	for _, ev := range events.events {
		viaPush = viaPush || (ev.Kind == KindStatus && ev.Via == ViaPush)
	}
	if !viaPush || countOf(rec.Methods(), "tasks/get") > 3 {
		t.Errorf("updates must come by push, polls relaxed: push %v, %d tasks/get", viaPush, countOf(rec.Methods(), "tasks/get"))
	}
}

// TestExpiryMarksAreBatched: a server that has forgotten two hundred tasks (a restart without
// its store) expires them all; the marks reach the ledger in a few writes, not two hundred.
// The first looks are spread over one interval (2 s by default), so the marks come over it
// too: one write per batch of ledger.BatchEvery, and one at the end.
func TestExpiryMarksAreBatched(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	path := ledgerPath(t)
	var recs []state.Record
	var targets []Target
	for i := range 200 {
		r := state.Record{TaskID: "gone-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Server: state.Server{URL: url}, Era: rpc.VersionModern, Tool: "sleep", Status: "working", CreatedAt: time.Now()}
		recs = append(recs, r)
	}
	if err := state.Open(path).Update(func(f *state.File) error { f.Tasks = recs; return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		targets = append(targets, Target{ID: recs[i].TaskID, Record: &recs[i]})
	}
	e := New(Options{Ledger: state.Open(path), NoPush: true})
	s := e.Server(url, url)
	s.Follow(connect(t, url, rpc.VersionModern, s), targets...)
	for _, o := range e.Run(t.Context()) {
		if o.End != EndExpired {
			t.Fatalf("%s: end %d, want expired", o.TaskID, o.End)
		}
	}
	for _, r := range records(t, path) {
		if !r.Expired {
			t.Fatalf("not marked expired: %+v", r)
		}
	}
	if w := e.ledger.Writes(); w > int64(DefaultInterval/ledger.BatchEvery)+2 {
		t.Errorf("200 expiry marks took %d ledger writes", w)
	}
}

// TestErrorMarksAndRetryAfter puts a faulty proxy in front of the demo server: the first
// tasks/get gets 503 with Retry-After: 1, which is waited out; later a malformed answer ends
// the follow with an error that names the problem, marked on the record, which stays.
func TestErrorMarksAndRetryAfter(t *testing.T) {
	srv, err := demo.New(demo.Options{StepDelay: time.Hour, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The faults are the proxy's; what passes between the client and the demo is checked.
	checked := &spectest.Recorder{V: spectest.Load(t), Next: srv.Handler()}
	defer checked.Check(t)
	var mu sync.Mutex
	var gets []time.Time
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tasks/get" {
			mu.Lock()
			gets = append(gets, time.Now())
			n := len(gets)
			mu.Unlock()
			switch n {
			case 1:
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			case 3:
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"taskId":`)
				return
			}
		}
		checked.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	url := proxy.URL + "/mcp"
	path := ledgerPath(t)
	events := &recorder{}
	e := New(Options{Ledger: state.Open(path), NoPush: true}, events)
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "forever", nil, path)
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	o := e.Run(t.Context())[0]
	if o.End != EndError || !errors.Is(o.Err, rpc.ErrMalformed) {
		t.Fatalf("outcome %+v", o)
	}
	mu.Lock()
	gap := gets[1].Sub(gets[0])
	mu.Unlock()
	if gap < time.Second {
		t.Errorf("the poll after a 503 with Retry-After: 1 came %s later", gap)
	}
	if n := events.count(KindError); n != 1 {
		t.Errorf("%d transient error events, want 1", n)
	}
	left := records(t, path)
	if len(left) != 1 || !strings.Contains(left[0].LastError, "malformed") {
		t.Errorf("the record must stay, marked with the error: %+v", left)
	}
}

// TestUnreachableEndsAtOnce: the tasks of a server that could not be reached end at once,
// marked unreachable, and the others are followed as usual.
func TestUnreachableEndsAtOnce(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	e := New(Options{})
	bad := e.Server("http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp")
	bad.Unreachable(errors.New("connection refused"), Target{ID: "x"}, Target{ID: "y"})
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionModern, s)
	tk := create(t, c, url, "sleep", map[string]any{"seconds": 1}, "")
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	outs := e.Run(t.Context())
	ends := []End{outs[0].End, outs[1].End, outs[2].End}
	if !slices.Equal(ends, []End{EndError, EndError, EndResult}) || !outs[0].Unreachable || outs[2].Unreachable {
		t.Fatalf("outcomes %+v", outs)
	}
}

// TestSharedWriter: a command's own ledger changes and the engine's go through one writer
// (Options.Writer), in the order they were made; Run flushes that writer and leaves it open
// for its owner.
func TestSharedWriter(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	path := ledgerPath(t)
	rec := state.Record{TaskID: "gone", Server: state.Server{URL: url}, Era: rpc.VersionModern, Tool: "sleep", Status: "working", CreatedAt: time.Now()}
	if err := state.Open(path).Put(rec); err != nil {
		t.Fatal(err)
	}
	w := ledger.New(state.Open(path), ledger.Options{Every: time.Hour})
	key := rec.Server.Key()
	w.Patch(key, "gone", func(r *state.Record) { r.StatusMessage, r.Expired = "the command's change", false })
	e := New(Options{Writer: w, NoPush: true})
	s := e.Server(url, url)
	s.Follow(connect(t, url, rpc.VersionModern, s), Target{ID: "gone", Record: &rec})
	if o := e.Run(t.Context()); len(o) != 1 || o[0].End != EndExpired {
		t.Fatalf("outcomes %+v, want one expired", o)
	}
	got := records(t, path)
	if len(got) != 1 || !got[0].Expired || got[0].StatusMessage != "the command's change" {
		t.Fatalf("after Run the record is %+v: want the command's change, then the engine's expiry mark", got)
	}
	// A closed writer writes a change at once; an open one keeps it for its batch.
	w.Patch(key, "gone", func(r *state.Record) { r.LastError = "after the run" })
	if got := records(t, path); got[0].LastError != "" {
		t.Fatalf("the engine closed a writer it does not own: %+v", got[0])
	}
	w.Close()
	if got := records(t, path); got[0].LastError != "after the run" {
		t.Fatalf("Close did not write the last change: %+v", got[0])
	}
}
