package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	rtdebug "runtime/debug"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/tui"
)

// useTUI reports whether the live view is wanted: a person is at the terminal
// (IOStreams.CanPrompt) and --json and --jsonl are off.
func (f *Factory) useTUI() bool {
	return f.IO.CanPrompt(f.Getenv) && !f.printer().JSON()
}

// runLive shows the live view while the engine follows its tasks: the engine's events reach the
// view through feed (viewSink), the view's commands reach the engine (it is the view's
// tui.Controller). When the view ends (every task finished, or the person detached) the
// engine stops, and the outcomes are reported the way the plain mode does, after the view.
func runLive(ctx context.Context, f *Factory, e *follow.Engine, feed *tui.Feed, rep *reporter, ids []string, initial map[string]tui.Snapshot, opts tui.Options) error {
	opts.WorkDir, _ = os.Getwd()
	opts.NoColor = f.Getenv("NO_COLOR") != ""
	if f.Workflow.Notify {
		// --notify: a task that ends while the terminal is not in front is notified at once.
		opts.OnFocus = func(focused bool) { f.wf.setBlurred(!focused) }
	}
	// MCPTASK_DEBUG_LOG=FILE: while the view owns the terminal, debug output goes only there.
	var debug *log.Logger
	if p := f.Getenv("MCPTASK_DEBUG_LOG"); p != "" {
		if lf, err := tea.LogToFile(p, "mcptask"); err == nil {
			defer lf.Close()
			debug = log.Default()
		}
	}
	if f.Getenv("GOGC") == "" {
		// The view's renderer and rows add a few MB of live heap to what the engine holds, and
		// the garbage collector lets the heap grow to twice what is live: collecting at 75%
		// keeps a person watching a thousand tasks within 1.2x the memory of a CI job
		// following them, for no CPU that bench/README.md can measure.
		defer rtdebug.SetGCPercent(rtdebug.SetGCPercent(75))
	}
	m := tui.New(e, feed, ids, initial, opts)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out), tea.WithFPS(tui.FPS)}
	if w, h := f.IO.Size(); w > 0 && h > 0 {
		popts = append(popts, tea.WithWindowSize(w, h))
	}
	done := make(chan []follow.Outcome, 1)
	go func() { done <- e.Run(ctx) }()
	start := time.Now()
	final, err := tea.NewProgram(m, popts...).Run()
	e.Stop() // detach whatever is still followed; finished tasks still get their results
	feed.Close()
	outs := <-done
	fm, _ := final.(tui.Model)
	if debug != nil {
		took := time.Since(start)
		debug.Printf("live view: %d views in %s (%d frames at %d FPS)", fm.Views(), took.Round(time.Millisecond), int(took.Seconds()*tui.FPS), tui.FPS)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("watch view: %w", err)
	}
	return rep.finishLive(ctx, ids, outs)
}

// viewSink turns the engine's events into the live view's updates. It runs on the engine's
// goroutines and never blocks: the feed coalesces what arrives between frames.
type viewSink struct{ feed *tui.Feed }

// Event implements follow.Sink.
func (v viewSink) Event(ev follow.Event) {
	u := tui.Update{TaskID: ev.TaskID, Via: string(ev.Via), NextPoll: ev.Next, Interval: ev.Interval, Source: ev.Source}
	switch ev.Kind {
	case follow.KindCreated, follow.KindStatus, follow.KindPolled, follow.KindInput:
		u.Snap = snapshot(ev, ev.Task)
	case follow.KindAnswered:
		u.Note, u.Answered = "answered "+strings.Join(ev.Keys, ", "), ev.Keys
	case follow.KindCancelRequested:
		u.Note = "cancellation requested"
	case follow.KindError:
		switch ev.Op {
		case "poll":
			u.Err, u.Failures = ev.Err.Error(), ev.Failures
		case "answer":
			u.Note = "answer to " + strings.Join(ev.Keys, ", ") + " failed: " + ev.Err.Error()
			if len(ev.Keys) > 0 {
				u.Retry = ev.Keys[0]
			}
		default:
			u.Note = ev.Op + " failed: " + ev.Err.Error()
		}
	case follow.KindNote:
		if ev.TaskID == "" {
			return
		}
		u.Note = ev.Message
	case follow.KindResult:
		o := ev.Outcome
		u.Done, u.NextPoll, u.Interval = true, time.Time{}, 0
		if o.Task != nil {
			u.Snap = snapshot(ev, o.Task)
		}
		switch o.End {
		case follow.EndResult:
			if o.Result != nil {
				u.Snap.Result = firstText(o.Result)
			}
			if o.RPCError != nil {
				u.Snap.Result = o.RPCError.Error()
			}
		case follow.EndExpired:
			u.Snap = tui.Snapshot{TaskID: ev.TaskID, Status: taskstatus.Expired, StatusMessage: "the server no longer knows this task"}
		case follow.EndError:
			u.Ended = "following stopped: " + o.Err.Error()
		}
	default:
		return
	}
	v.feed.Send(u)
}

// snapshot converts a task for the view.
func snapshot(ev follow.Event, t *rpc.Task) tui.Snapshot {
	if t == nil {
		return tui.Snapshot{}
	}
	s := tui.Snapshot{
		TaskID: t.TaskID, Tool: ev.Tool, Server: ev.Server, Protocol: string(ev.Era), Status: string(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: t.TTL, PollInterval: t.PollInterval, Inputs: tuiInputs(ev.Requests),
	}
	if t.Status.Terminal() && len(t.Result) > 0 {
		if tr, err := rpc.DecodeToolResult(t.Result); err == nil {
			s.Result = firstText(tr)
		}
	}
	if t.Error != nil {
		s.Result = t.Error.Error()
	}
	return s
}

func firstText(tr *rpc.ToolResult) string {
	for _, c := range tr.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// tuiInputs converts the questions a task asks (EXT §Task Update Requests, C26-MRTR,
// C25-TASKS §Input Required Status) for the view.
func tuiInputs(reqs []follow.Request) []tui.InputRequest {
	var out []tui.InputRequest
	for _, r := range reqs {
		var p struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			URL             string          `json:"url"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		_ = json.Unmarshal(r.Params, &p)
		out = append(out, tui.InputRequest{Key: r.Key, Kind: r.Method, Message: p.Message, Mode: p.Mode, URL: p.URL, Schema: p.RequestedSchema})
	}
	return out
}

// requestsOf lists inputRequests (a 2026-07-28 task's, or a multi-round-trip tools/call's) by
// key.
func requestsOf(reqs map[string]json.RawMessage) []follow.Request {
	out := make([]follow.Request, 0, len(reqs))
	for _, k := range output.SortedKeys(reqs) {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(reqs[k], &r)
		out = append(out, follow.Request{Key: k, Method: r.Method, Params: r.Params})
	}
	return out
}

// askMRTR asks, on the terminal, the questions a tools/call answered with input_required
// (C26-MRTR) and returns the responses, or nil when the person left.
func askMRTR(ctx context.Context, f *Factory, tool string, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	wd, _ := os.Getwd()
	m := tui.NewAsk(tool, tuiInputs(requestsOf(reqs)), tui.Options{WorkDir: wd, NoColor: f.Getenv("NO_COLOR") != ""})
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
