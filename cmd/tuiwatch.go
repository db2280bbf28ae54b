package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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
	return snapshot(e, t), nil
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
	// EXT §Task Update Requests: tasks/update with only currently outstanding keys.
	if err := e.out.c.UpdateTask(ctx, id, map[string]json.RawMessage{key: resp}); err != nil {
		return err
	}
	// The ledger remembers answered keys, so a resumed watch never answers twice.
	if st, err := e.out.f.ledger(); err == nil {
		_ = st.Patch(toServer(e.out.ref).Key(), id, func(r *state.Record) {
			if !strings.Contains(","+strings.Join(r.AnsweredKeys, ",")+",", ","+key+",") {
				r.AnsweredKeys = append(r.AnsweredKeys, key)
			}
		})
	}
	return nil
}

// snapshot converts a task for the view.
func snapshot(e *tuiEntry, t *rpc.Task) tui.Snapshot {
	s := tui.Snapshot{
		TaskID: t.TaskID, Tool: e.rec.Tool, Server: e.out.ref.String(), Status: string(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: t.TTL, PollInterval: t.PollInterval,
	}
	for _, k := range sortedKeys(t.InputRequests) {
		var r struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				URL             string          `json:"url"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		_ = json.Unmarshal(t.InputRequests[k], &r)
		s.Inputs = append(s.Inputs, tui.InputRequest{Key: k, Kind: r.Method, Message: r.Params.Message, Mode: r.Params.Mode, URL: r.Params.URL, Schema: r.Params.RequestedSchema})
	}
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
func runTUI(ctx context.Context, f *Factory, kind string, entries []*tuiEntry) error {
	p := &tuiPoller{entries: map[string]*tuiEntry{}}
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
