package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/tui"
)

// useTUI reports whether the live view is wanted: stdout is a terminal, no --json, and the
// terminal can draw (TERM=dumb gets plain lines).
func (f *Factory) useTUI() bool {
	return f.IO.IsStdoutTTY() && !f.Global.JSON && f.Getenv("TERM") != "dumb" && f.Getenv("MCPTASK_NO_TUI") == ""
}

// tuiEntry is one task the view follows, with the connection that reaches it.
type tuiEntry struct {
	rec  state.Record
	out  *outcome
	task *rpc.Task // known state, or nil
}

// tuiPoller adapts rpc.Clients to tui.Poller and keeps the ledger in step.
type tuiPoller struct {
	mu      sync.Mutex
	entries map[string]*tuiEntry

	// 2025-11-25: questions arrive as elicitation/create requests while tasks/result is open
	// (C25-TASKS §Input Required Status). Each waits in asks until the view answers it.
	asks     map[string]map[string]*legacyAsk // task id -> key -> question
	opening  map[string]bool                  // task id -> tasks/result in flight
	askCount int
}

// legacyAsk is a server-to-client request waiting for the person at the terminal.
type legacyAsk struct {
	req    tui.InputRequest
	answer chan json.RawMessage
}

func newTUIPoller() *tuiPoller {
	return &tuiPoller{entries: map[string]*tuiEntry{}, asks: map[string]map[string]*legacyAsk{}, opening: map[string]bool{}}
}

// onRequest is the clients' OnRequest in the live view: it parks a 2025-11-25 elicitation
// until the view answers it. Sampling is refused; roots only with the user's consent, asked
// like any other question.
func (p *tuiPoller) onRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	if method == "sampling/createMessage" {
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not sample language models"}
	}
	var pr struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		URL             string          `json:"url"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		Meta            map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &pr)
	id := pr.Meta[rpc.MetaRelatedTask].TaskID
	p.mu.Lock()
	if id == "" || p.entries[id] == nil {
		// C25-TASKS §Input Required Status: requests for a task carry related-task meta; one
		// this view cannot place is cancelled rather than left hanging.
		p.mu.Unlock()
		return json.RawMessage(`{"action":"cancel"}`), nil
	}
	p.askCount++
	key := fmt.Sprintf("question-%d", p.askCount)
	ask := &legacyAsk{req: tui.InputRequest{Key: key, Kind: method, Message: pr.Message, Mode: pr.Mode, URL: pr.URL, Schema: pr.RequestedSchema},
		answer: make(chan json.RawMessage, 1)}
	if p.asks[id] == nil {
		p.asks[id] = map[string]*legacyAsk{}
	}
	p.asks[id][key] = ask
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.asks[id], key)
		p.mu.Unlock()
	}()
	select {
	case resp := <-ask.answer:
		return resp, nil
	case <-ctx.Done():
		return json.RawMessage(`{"action":"cancel"}`), nil
	}
}

// openResult keeps a 2025-11-25 tasks/result open while the task waits for input, so that
// its questions can arrive.
func (p *tuiPoller) openResult(ctx context.Context, e *tuiEntry, id string) {
	p.mu.Lock()
	if p.opening[id] {
		p.mu.Unlock()
		return
	}
	p.opening[id] = true
	p.mu.Unlock()
	go func() {
		_, _, _ = e.out.c.TaskResult(ctx, id)
		p.mu.Lock()
		p.opening[id] = false
		p.mu.Unlock()
	}()
}

func (p *tuiPoller) entry(id string) (*tuiEntry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[id]
	if e == nil {
		return nil, fmt.Errorf("unknown task %s", id)
	}
	return e, nil
}

func (p *tuiPoller) Poll(ctx context.Context, id string) (tui.Snapshot, error) {
	e, err := p.entry(id)
	if err != nil {
		return tui.Snapshot{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout) // a silent server cannot stall the view
	defer cancel()
	t, err := e.out.c.GetTask(rctx, id)
	if err != nil {
		if rpc.IsUnknownTask(err) {
			e.out.markExpired(id)
			return tui.Snapshot{TaskID: id, Status: "expired", StatusMessage: "the server no longer knows this task"}, nil
		}
		return tui.Snapshot{}, err
	}
	p.mu.Lock()
	changed := e.task == nil || e.task.Status != t.Status || e.task.StatusMessage != t.StatusMessage
	e.task = t
	p.mu.Unlock()
	if changed {
		e.out.saveStatus(ctx, t)
	}
	if t.Status == rpc.StatusInputRequired && e.out.c.Era() == rpc.EraLegacy {
		p.openResult(context.WithoutCancel(ctx), e, id)
	}
	snap := snapshot(e, t)
	p.mu.Lock()
	for _, a := range p.asks[id] {
		snap.Inputs = append(snap.Inputs, a.req)
	}
	p.mu.Unlock()
	return snap, nil
}

func (p *tuiPoller) Cancel(ctx context.Context, id string) (tui.Snapshot, error) {
	e, err := p.entry(id)
	if err != nil {
		return tui.Snapshot{}, err
	}
	t, _, err := e.out.c.CancelTask(ctx, id)
	if err != nil {
		return tui.Snapshot{}, err
	}
	if t == nil { // 2026-07-28: an acknowledgement only; the next poll tells
		return tui.Snapshot{}, nil
	}
	p.mu.Lock()
	e.task = t
	p.mu.Unlock()
	e.out.saveStatus(ctx, t)
	return snapshot(e, t), nil
}

func (p *tuiPoller) Answer(ctx context.Context, id, key string, resp json.RawMessage) error {
	e, err := p.entry(id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	ask := p.asks[id][key]
	p.mu.Unlock()
	if ask != nil {
		// 2025-11-25: the answer is the response to the parked elicitation/create.
		if ask.req.Kind == "sampling/createMessage" {
			resp = json.RawMessage(`{"action":"decline"}`)
		}
		ask.answer <- resp
		return nil
	}
	// EXT §Task Update Requests: tasks/update with only currently outstanding keys.
	if err := e.out.c.UpdateTask(ctx, id, map[string]json.RawMessage{key: resp}); err != nil {
		return err
	}
	// The ledger remembers answered keys, so a resumed watch never answers twice.
	e.out.recordAnswered(id, []string{key})
	return nil
}

// snapshot converts a task for the view.
func snapshot(e *tuiEntry, t *rpc.Task) tui.Snapshot {
	s := tui.Snapshot{
		TaskID: t.TaskID, Tool: e.rec.Tool, Server: e.out.ref.String(), Protocol: string(e.out.c.Era()), Status: string(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: t.TTL, PollInterval: t.PollInterval,
	}
	s.Inputs = tuiInputs(t.InputRequests)
	if t.Status.Terminal() && len(t.Result) > 0 {
		if tr, err := rpc.DecodeToolResult(t.Result); err == nil {
			for _, c := range tr.Content {
				if c.Type == "text" {
					s.Result = c.Text
					break
				}
			}
		}
	}
	if t.Error != nil {
		s.Result = t.Error.Error()
	}
	return s
}

// runTUI shows the live view over entries, then reports each task the way the plain mode
// does: results of finished tasks on stdout (after the view is gone), the most severe exit
// code, and on detach exit 130 with the command that resumes.
func runTUI(ctx context.Context, f *Factory, kind string, p *tuiPoller, entries []*tuiEntry) error {
	ids := make([]string, 0, len(entries))
	initial := map[string]tui.Snapshot{}
	for _, e := range entries {
		if _, dup := p.entries[e.rec.TaskID]; dup {
			continue
		}
		p.entries[e.rec.TaskID] = e
		ids = append(ids, e.rec.TaskID)
		if e.task != nil {
			initial[e.rec.TaskID] = snapshot(e, e.task)
		}
	}
	wd, _ := os.Getwd()
	noColor := f.Getenv("NO_COLOR") != ""
	answered := map[string][]string{}
	servers := map[string]bool{}
	for _, id := range ids {
		e := p.entries[id]
		answered[id] = e.rec.AnsweredKeys // a resumed view never offers them again
		servers[e.out.ref.String()] = true
	}
	opts := tui.Options{WorkDir: wd, NoColor: noColor, Answered: answered}
	if len(servers) == 1 {
		for s := range servers {
			opts.Server = s
		}
	}
	m := tui.New(p, ids, initial, opts).WithContext(ctx)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out), tea.WithFPS(tui.FPS)}
	if w, h := f.IO.Size(); w > 0 && h > 0 {
		popts = append(popts, tea.WithWindowSize(w, h))
	}
	prog := tea.NewProgram(m, popts...)
	// Push updates (2026-07-28 listen streams) go into the program as they come.
	pctx, stopPush := context.WithCancel(ctx)
	defer stopPush()
	if !f.Global.NoPush {
		p.startPush(pctx, prog, ids, func(msg string) {})
	}
	final, err := prog.Run()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("watch view: %w", err)
	}
	fm, _ := final.(tui.Model)
	interrupted := ctx.Err() != nil || fm.Detached()

	var codes []int
	for _, id := range ids {
		e := p.entries[id]
		p.mu.Lock()
		t := e.task
		p.mu.Unlock()
		snap := fm.Outcomes()[id]
		var err error
		switch {
		case snap.Status == "expired":
			err = &ExitError{Code: ExitExpired, Err: fmt.Errorf("task %s is no longer known to %s", id, e.out.ref)}
		case t != nil && t.Status.Terminal():
			if len(ids) > 1 {
				fmt.Fprintf(f.IO.Out, "── task %s (%s): %s\n", id, e.rec.Tool, t.Status)
			}
			err = e.out.finish(context.WithoutCancel(ctx), t)
		case interrupted:
			err = &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("detached: task %s keeps running", id)}
		default:
			err = fmt.Errorf("task %s: the view ended before the task did", id)
		}
		code := exitCode(ctx, err)
		if err != nil && code != ExitInterrupted {
			fmt.Fprintf(f.IO.ErrOut, "mcptask: %s\n", err)
		}
		codes = append(codes, code)
	}
	code := worstCode(codes)
	if code == ExitOK {
		return nil
	}
	if code == ExitInterrupted {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("detached; the tasks keep running and stay in the ledger: mcptask resume")}
	}
	return &ExitError{Code: code, Err: fmt.Errorf("%d of %d task(s) did not complete well", countBad(codes), len(codes)), Silent: len(codes) == 1}
}

// tuiInputs converts wire inputRequests (EXT §Task Update Requests, C26-MRTR) for the view.
func tuiInputs(reqs map[string]json.RawMessage) []tui.InputRequest {
	var out []tui.InputRequest
	for _, k := range sortedKeys(reqs) {
		var r struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				URL             string          `json:"url"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		_ = json.Unmarshal(reqs[k], &r)
		out = append(out, tui.InputRequest{Key: k, Kind: r.Method, Message: r.Params.Message, Mode: r.Params.Mode, URL: r.Params.URL, Schema: r.Params.RequestedSchema})
	}
	return out
}

// askMRTR asks, on the terminal, the questions a tools/call answered with input_required
// (C26-MRTR) and returns the responses, or nil when the person left.
func askMRTR(ctx context.Context, f *Factory, tool string, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	wd, _ := os.Getwd()
	m := tui.NewAsk(tool, tuiInputs(reqs), tui.Options{WorkDir: wd, NoColor: f.Getenv("NO_COLOR") != ""})
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out), tea.WithFPS(tui.FPS)}
	if w, h := f.IO.Size(); w > 0 && h > 0 {
		popts = append(popts, tea.WithWindowSize(w, h))
	}
	final, err := tea.NewProgram(m, popts...).Run()
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("question view: %w", err)
	}
	fm, _ := final.(tui.AskModel)
	return fm.Responses(), nil
}

// startPush opens one listen stream per 2026-07-28 connection among the view's tasks and
// sends every pushed task into the program as a tui.PushMsg.
func (p *tuiPoller) startPush(ctx context.Context, prog *tea.Program, ids []string, note func(string)) {
	byClient := map[*rpc.Client][]string{}
	for _, id := range ids {
		e := p.entries[id]
		if e.out.c.Era() == rpc.EraModern {
			byClient[e.out.c] = append(byClient[e.out.c], id)
		}
	}
	for c, cids := range byClient {
		hub := newPushHub(cids)
		go hub.run(ctx, c, note)
		for _, id := range cids {
			e := p.entries[id]
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case t := <-hub.ch[id]:
						if t == nil {
							continue
						}
						p.mu.Lock()
						e.task = t
						p.mu.Unlock()
						e.out.saveStatus(ctx, t)
						prog.Send(tui.PushMsg(snapshot(e, t)))
					}
				}
			}()
		}
	}
}
