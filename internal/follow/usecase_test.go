package follow

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/toolargs"
)

// connectWith opens a client to url in era with opts.
func connectWith(t *testing.T, url, era string, opts rpc.ClientOptions) *rpc.Client {
	t.Helper()
	tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Protocol, opts.Info = era, rpc.Implementation{Name: "follow-test", Version: "1"}
	c := rpc.NewClient(tr, opts)
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitStatus polls task id until it has status want, or fails the test after 10 s.
func waitStatus(t *testing.T, c *rpc.Client, id string, want rpc.TaskStatus) *rpc.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		tk, err := c.GetTask(ctx, id)
		if err == nil && tk.Status == want {
			return tk
		}
		if ctx.Err() != nil {
			t.Fatalf("task %s never became %s: %+v, %v", id, want, tk, err)
		}
		time.Sleep(10 * time.Millisecond) // poll cadence of a condition wait, bounded by ctx
	}
}

// TestCallToolAnswersInputRounds: a tools/call answered with input_required is retried with
// the answers and the echoed requestState (C26-MRTR); the Retry hook is told which keys.
func TestCallToolAnswersInputRounds(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	c := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{Elicitation: true})
	var retried []string
	res, err := CallTool(t.Context(), t.Context(), c, Call{
		Params:   rpc.CallParams{Name: "confirm"},
		Answerer: Answers{"confirm": json.RawMessage(`{"ok":true}`)},
		Retry:    func(keys []string) { retried = append(retried, keys...) },
	})
	if err != nil || res.Kind == rpc.KindInputRequired {
		t.Fatalf("CallTool: %+v, %v", res, err)
	}
	if !slices.Equal(retried, []string{"confirm"}) || countOf(rec.Methods(), "tools/call") != 2 {
		t.Errorf("retried %v, methods %v; want one retry answering confirm", retried, rec.Methods())
	}
}

// TestCallToolLeavesInputItCannotGive: without an answer the input_required result comes back
// as it is, and nothing is retried; a person asked who gives nothing is ErrNoInput; a first
// call the server refuses is a CallError of round 0 with the server's error inside.
func TestCallToolLeavesInputItCannotGive(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	c := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{Elicitation: true})
	res, err := CallTool(t.Context(), t.Context(), c, Call{Params: rpc.CallParams{Name: "confirm"}})
	if err != nil || res.Kind != rpc.KindInputRequired || res.InputRequests["confirm"] == nil {
		t.Fatalf("CallTool: %+v, %v", res, err)
	}
	asked := 0
	_, err = CallTool(t.Context(), t.Context(), c, Call{Params: rpc.CallParams{Name: "confirm"},
		Ask: func(context.Context, map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			asked++
			return nil, nil
		}})
	if !errors.Is(err, ErrNoInput) || asked != 1 {
		t.Fatalf("asked %d, err %v; want ErrNoInput after one question", asked, err)
	}
	if n := countOf(rec.Methods(), "tools/call"); n != 2 {
		t.Errorf("%d tools/call; unanswered input must not be retried", n)
	}
	bare := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{})
	_, err = CallTool(t.Context(), t.Context(), bare, Call{Params: rpc.CallParams{Name: "confirm"}})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Round != 0 || !errors.Is(err, &rpc.Error{Code: rpc.CodeMissingCapability}) {
		t.Fatalf("err %v; want a round-0 CallError carrying -32021", err)
	}
}

// TestCallToolTypesArgs: --arg pairs are typed from the tool's inputSchema (one tools/list,
// through the Guard) before the tools/call, and win over the JSON arguments; a value of the
// wrong type sends no tools/call.
func TestCallToolTypesArgs(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	c := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{})
	var guarded []string
	guard := func(ctx context.Context, what string, req func(context.Context) error) error {
		guarded = append(guarded, what)
		return req(ctx)
	}
	_, err := CallTool(t.Context(), t.Context(), c, Call{
		Params: rpc.CallParams{Name: "echo", Arguments: map[string]any{"text": "from --args"}},
		Pairs:  []toolargs.Pair{{Key: "text", Value: "42"}},
		Guard:  guard,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(guarded, []string{"tools/list"}) {
		t.Errorf("guarded %v; want the one tools/list", guarded)
	}
	var call struct {
		Params struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	bodies, methods := rec.Bodies(), rec.Methods()
	_ = json.Unmarshal(bodies[slices.Index(methods, "tools/call")], &call)
	if got := call.Params.Arguments["text"]; got != "42" {
		t.Errorf("sent text %#v; want the string \"42\" the schema asks for", got)
	}

	_, err = CallTool(t.Context(), t.Context(), c, Call{
		Params: rpc.CallParams{Name: "sleep"},
		Pairs:  []toolargs.Pair{{Key: "steps", Value: "many"}},
	})
	var ue *exitcode.UsageError
	if !errors.As(err, &ue) || countOf(rec.Methods(), "tools/call") != 1 {
		t.Fatalf("err %v, methods %v; want a UsageError and no second tools/call", err, rec.Methods())
	}
}

// TestUpdateAnswersNow: Update answers a waiting task at once in both eras (2026-07-28 one
// tasks/update; 2025-11-25 elicitation/create on a tasks/result it opens), writes the answered
// key to the ledger before it returns, and the task goes on to its result.
func TestUpdateAnswersNow(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			path := ledgerPath(t)
			key := "name"
			if era == rpc.VersionLegacy {
				key = "elicitation"
			}
			ans := Answers{key: json.RawMessage(`{"name":"Ada"}`)}
			u := NewUpdate(ans, Request{Tool: "ask", Server: url})
			c := connectWith(t, url, era, u.ClientOptions(rpc.ClientOptions{}, func(string) {}))
			tk := create(t, c, url, "ask", nil, path)
			waitStatus(t, c, tk.TaskID, rpc.StatusInputRequired)
			led := ledger.New(state.Open(path), ledger.Options{OnError: func(err error) { t.Error(err) }})
			defer led.Close()
			out, err := u.Run(t.Context(), c, UpdateRequest{TaskID: tk.TaskID, Answers: ans, Wait: 10 * time.Second, Ledger: led, Key: state.Server{URL: url}.Key()})
			if err != nil || !slices.Equal(out.Answered, []string{key}) {
				t.Fatalf("Run: %+v, %v", out, err)
			}
			if r := records(t, path); len(r) != 1 || !slices.Equal(r[0].AnsweredKeys, []string{key}) {
				t.Errorf("ledger after Run: %+v; want the answered key written", r)
			}
			if era == rpc.VersionModern && countOf(rec.Methods(), "tasks/update") != 1 {
				t.Errorf("want exactly one tasks/update: %v", rec.Methods())
			}
			if _, err := WaitWhile(t.Context(), c, tk.TaskID, rpc.StatusInputRequired, 0); err != nil {
				t.Fatal(err)
			}
			done := waitStatus(t, c, tk.TaskID, rpc.StatusCompleted)
			if done.TaskID != tk.TaskID {
				t.Fatalf("task %+v", done)
			}
		})
	}
}

// TestUpdateRefusesWhatIsNotAsked: nothing is sent to a task that is not waiting
// (NotWaitingError), for a key it does not ask (UnneededError), for a key answered before
// (UnneededError), and a task that has ended is reported as ended.
func TestUpdateRefusesWhatIsNotAsked(t *testing.T) {
	url, rec := demoServer(t, demo.Options{StepDelay: time.Second})
	ans := Answers{"other": json.RawMessage(`{"x":1}`)}
	u := NewUpdate(ans, Request{})
	c := connectWith(t, url, rpc.VersionModern, u.ClientOptions(rpc.ClientOptions{}, func(string) {}))
	sleeping := create(t, c, url, "sleep", map[string]any{"seconds": 600}, "")
	_, err := u.Run(t.Context(), c, UpdateRequest{TaskID: sleeping.TaskID, Answers: ans})
	var nw *NotWaitingError
	if !errors.As(err, &nw) {
		t.Fatalf("a working task: %v; want NotWaitingError", err)
	}
	asking := create(t, c, url, "ask", nil, "")
	waitStatus(t, c, asking.TaskID, rpc.StatusInputRequired)
	var un *UnneededError
	if _, err := u.Run(t.Context(), c, UpdateRequest{TaskID: asking.TaskID, Answers: ans}); !errors.As(err, &un) {
		t.Fatalf("a key not asked: %v; want UnneededError", err)
	}
	name := Answers{"name": json.RawMessage(`{"name":"Ada"}`)}
	u = NewUpdate(name, Request{})
	if _, err := u.Run(t.Context(), c, UpdateRequest{TaskID: asking.TaskID, Answers: name, Answered: []string{"name"}}); !errors.As(err, &un) {
		t.Fatalf("a key answered before: %v; want UnneededError", err)
	}
	if n := countOf(rec.Methods(), "tasks/update"); n != 0 {
		t.Fatalf("%d tasks/update sent; want none", n)
	}
	if _, _, err := c.CancelTask(t.Context(), sleeping.TaskID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, sleeping.TaskID, rpc.StatusCancelled)
	out, err := u.Run(t.Context(), c, UpdateRequest{TaskID: sleeping.TaskID, Answers: name})
	if err != nil || !out.Ended() || len(out.Answered) != 0 {
		t.Fatalf("an ended task: %+v, %v; want Ended and nothing sent", out, err)
	}
}

// TestCancelKeepsTheLedgerInStep: without a follow, the 2025-11-25 answer (the task, already
// cancelled) is written to the record before Cancel returns, and a task the server does not know
// is marked expired; with a follow, the task is followed to its real end and its record goes,
// after Cancel's own changes, in both eras.
func TestCancelKeepsTheLedgerInStep(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			path := ledgerPath(t)
			st := state.Open(path)
			key := state.Server{URL: url}.Key()
			c := connectWith(t, url, era, rpc.ClientOptions{})
			tk := create(t, c, url, "forever", nil, path)
			r := records(t, path)[0]
			// The first thing the follow reports must find Cancel's own change in the ledger
			// already: its batch is written before the engine starts, not at some later tick.
			var first sync.Once
			events := &recorder{on: func(Event) {
				first.Do(func() {
					if era != rpc.VersionLegacy {
						return
					}
					if r := records(t, path); len(r) != 1 || r[0].Status != string(rpc.StatusCancelled) {
						t.Errorf("when the follow began, the ledger held %+v; want Cancel's change (cancelled) written", r)
					}
				})
			}}
			e := New(Options{Ledger: st, NoPush: true, LeaveResults: true}, events)
			out, err := Cancel(t.Context(), t.Context(), c, CancelRequest{TaskID: tk.TaskID, Key: key, Record: &r, Ledger: st, Follow: e, Server: url})
			if err != nil || !out.Acked || out.Outcome == nil || out.Outcome.End != EndCancelled {
				t.Fatalf("Cancel: %+v, %v", out, err)
			}
			if (era == rpc.VersionLegacy) != (out.Task != nil) {
				t.Errorf("era %s answered with the task %+v; want it on 2025-11-25 only", era, out.Task)
			}
			if left := records(t, path); len(left) != 0 {
				t.Errorf("a cancelled task leaves the ledger: %+v", left)
			}
			if n := countOf(rec.Methods(), "tasks/cancel"); n != 1 {
				t.Errorf("%d tasks/cancel, want 1", n)
			}

			tk = create(t, c, url, "forever", nil, path)
			r = records(t, path)[0]
			out, err = Cancel(t.Context(), t.Context(), c, CancelRequest{TaskID: tk.TaskID, Key: key, Record: &r, Ledger: st})
			if err != nil || out.Outcome != nil {
				t.Fatalf("Cancel: %+v, %v", out, err)
			}
			left := records(t, path)
			if era == rpc.VersionLegacy && (len(left) != 1 || left[0].Status != string(rpc.StatusCancelled)) {
				t.Errorf("2025-11-25: the record after Cancel returned: %+v; want it cancelled", left)
			}

			gone := state.Record{TaskID: "no-such-task", Server: state.Server{URL: url}, Era: string(c.Era()), CreatedAt: time.Now()}
			if err := st.Put(gone); err != nil {
				t.Fatal(err)
			}
			_, err = Cancel(t.Context(), t.Context(), c, CancelRequest{TaskID: gone.TaskID, Key: key, Record: &gone, Ledger: st})
			if !rpc.IsUnknownTask(err) {
				t.Fatalf("an unknown task: %v", err)
			}
			for _, x := range records(t, path) {
				if x.TaskID == gone.TaskID && !x.Expired {
					t.Errorf("an unknown task is not marked expired: %+v", x)
				}
			}
		})
	}
}

// TestListTasksPages: every page of a 2025-11-25 tasks/list is read, each through the guard;
// a guard's explanation comes back as it is; 2026-07-28 has no tasks/list.
func TestListTasksPages(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	c := connectWith(t, url, rpc.VersionLegacy, rpc.ClientOptions{})
	const n = 60 // more than one page of the demo (50)
	for range n {
		create(t, c, url, "sleep", map[string]any{"seconds": 0}, "")
	}
	guarded := 0
	guard := func(ctx context.Context, what string, req func(context.Context) error) error {
		guarded++
		if what != "tasks/list" {
			t.Errorf("guard asked about %q", what)
		}
		return req(ctx)
	}
	var ts []*rpc.Task
	handed := 0
	err := ListPages(t.Context(), c, guard, func(page []*rpc.Task) error {
		handed++
		ts = append(ts, page...)
		return nil
	})
	if err != nil || len(ts) != n || handed != 2 {
		t.Fatalf("%d tasks in %d pages, %v; want %d in 2", len(ts), handed, err, n)
	}
	if pages := countOf(rec.Methods(), "tasks/list"); pages != 2 || guarded != 2 {
		t.Errorf("%d tasks/list, %d guarded; want 2 pages, each guarded", pages, guarded)
	}
	explained := errors.New("explained")
	err = ListPages(t.Context(), c, func(ctx context.Context, _ string, req func(context.Context) error) error {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_ = req(cctx)
		return explained
	}, func([]*rpc.Task) error { return nil })
	if err != explained {
		t.Errorf("err %v; want the guard's explanation as it is", err)
	}
	modern := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{})
	if err := ListPages(t.Context(), modern, nil, func([]*rpc.Task) error { return nil }); !errors.Is(err, ErrNoTasksList) {
		t.Errorf("2026-07-28: %v; want ErrNoTasksList", err)
	}
}

// TestListSession: the session reused is that of an unfinished 2025-11-25 record on the same
// server; finished records, other servers and 2026-07-28 records lend none.
func TestListSession(t *testing.T) {
	now := time.Now()
	a := state.Server{URL: "http://127.0.0.1:1/mcp"}
	b := state.Server{URL: "http://127.0.0.1:2/mcp"}
	recs := []state.Record{
		{TaskID: "1", Server: a, Era: string(rpc.EraLegacy), SessionID: "done", Status: string(rpc.StatusCompleted), CreatedAt: now},
		{TaskID: "2", Server: b, Era: string(rpc.EraLegacy), SessionID: "other", Status: string(rpc.StatusWorking), CreatedAt: now},
		{TaskID: "3", Server: a, Era: string(rpc.EraModern), SessionID: "modern", Status: string(rpc.StatusWorking), CreatedAt: now},
		{TaskID: "4", Server: a, Era: string(rpc.EraLegacy), SessionID: "mine", Status: string(rpc.StatusWorking), CreatedAt: now},
	}
	if got := ListSession(recs, a.Key(), now); got != "mine" {
		t.Errorf("ListSession = %q, want mine", got)
	}
	if got := ListSession(recs[:3], a.Key(), now); got != "" {
		t.Errorf("ListSession = %q, want none", got)
	}
}

// plantedCache is a metadata cache holding whatever a test put in it, fresh.
type plantedCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (p *plantedCache) Load(key string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.m[key]
	return b, ok
}

func (p *plantedCache) Store(key string, data []byte, ttl time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ttl <= 0 {
		delete(p.m, key)
		return
	}
	p.m[key] = data
}

// TestCallToolChecksTypos: a misspelled tool, a near-miss argument and a missing required one
// are usage errors before anything is sent; a tool list read from the cache is fetched again
// before it refuses anything, so a stale cache never blocks a call the server accepts.
func TestCallToolChecksTypos(t *testing.T) {
	url, rec := demoServer(t, demo.Options{StepDelay: time.Millisecond})
	c := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{})
	for _, tc := range []struct {
		name  string
		call  rpc.CallParams
		pairs []toolargs.Pair
		want  string
	}{
		{"misspelled tool", rpc.CallParams{Name: "slep"}, nil, `no tool "slep"; did you mean sleep?`},
		{"near-miss key", rpc.CallParams{Name: "sleep"}, []toolargs.Pair{{Key: "secs", Value: "3"}}, "did you mean seconds?"},
		{"missing required", rpc.CallParams{Name: "echo", Arguments: map[string]any{}}, nil, "echo needs the argument text"},
	} {
		_, err := CallTool(t.Context(), t.Context(), c, Call{Params: tc.call, Pairs: tc.pairs})
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a usage error saying %q", tc.name, err, tc.want)
		}
	}
	if n := len(slices.DeleteFunc(rec.Methods(), func(m string) bool { return m != "tools/call" })); n != 0 {
		t.Errorf("%d tools/call sent for calls refused as typos", n)
	}

	// A cache from before the server's echo lost its required "text": the fresh list says
	// otherwise, and the call goes out.
	stale, _ := json.Marshal(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}, "colour": map[string]any{}}, "required": []string{"colour"}}}}})
	cache := &plantedCache{m: map[string][]byte{}}
	c2 := connectWith(t, url, rpc.VersionModern, rpc.ClientOptions{Cache: cache, CacheServer: url})
	for k := range cache.m {
		if strings.HasPrefix(k, "discover\x00") {
			cache.m["tools"+strings.TrimPrefix(k, "discover")] = stale
		}
	}
	if len(cache.m) < 2 {
		t.Fatalf("the demo's server/discover was not cached, so no tools entry was planted: %q", slices.Collect(maps.Keys(cache.m)))
	}
	res, err := CallTool(t.Context(), t.Context(), c2, Call{Params: rpc.CallParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}})
	if err != nil || res.Kind != rpc.KindComplete {
		t.Fatalf("a stale cached schema blocked a call the server accepts: %v", err)
	}
}
