// Package feedfollow turns the follow engine's events into the live view's updates: a
// follow.Sink that feeds a tui.Feed, and the conversion of tasks and their questions into the
// view's snapshots. It is a package of its own because the view (internal/tui) must not know
// the engine or the wire types (its TestLayers bans follow and rpc), and the engine must not
// know the view: this adapter is the one place that knows both.
package feedfollow

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/tui"
)

// Sink turns the engine's events into the live view's updates. It runs on the engine's
// goroutines and never blocks: the feed coalesces what arrives between frames.
type Sink struct{ Feed *tui.Feed }

// Event implements follow.Sink.
func (v Sink) Event(ev follow.Event) {
	u := tui.Update{TaskID: ev.TaskID, Via: string(ev.Via), NextPoll: ev.Next, Interval: ev.Interval, Source: ev.Source}
	switch ev.Kind {
	case follow.KindCreated, follow.KindStatus, follow.KindPolled, follow.KindInput:
		u.Snap = Snapshot(ev, ev.Task)
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
	case follow.KindProgress:
		if ev.TaskID == "" {
			return // a call's, before there is a task (cmd's call spinner shows it)
		}
		u.Progress = Progress(ev)
	case follow.KindResult:
		o := ev.Outcome
		u.Done, u.NextPoll, u.Interval = true, time.Time{}, 0
		if o.Task != nil {
			u.Snap = Snapshot(ev, o.Task)
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
	v.Feed.Send(u)
}

// Progress converts a KindProgress event for the view.
func Progress(ev follow.Event) *tui.Progress {
	p := &tui.Progress{Value: ev.Progress, Message: ev.Message}
	if ev.Total != nil {
		p.Total = *ev.Total
	}
	return p
}

// Snapshot converts a task, as event ev saw it, for the view.
func Snapshot(ev follow.Event, t *rpc.Task) tui.Snapshot {
	if t == nil {
		return tui.Snapshot{}
	}
	s := tui.Snapshot{
		TaskID: t.TaskID, Tool: ev.Tool, Server: ev.Server, Protocol: string(ev.Era), Status: string(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: t.TTL, PollInterval: t.PollInterval, Inputs: inputs(ev.Requests),
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

// Inputs converts the inputRequests of a multi-round-trip tools/call (C26-MRTR), by key, for
// the question view.
func Inputs(reqs map[string]json.RawMessage) []tui.InputRequest { return inputs(requestsOf(reqs)) }

// inputs converts the questions a task asks (EXT §Task Update Requests, C26-MRTR,
// C25-TASKS §Input Required Status) for the view.
func inputs(reqs []follow.Request) []tui.InputRequest {
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
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(reqs[k], &r)
		out = append(out, follow.Request{Key: k, Method: r.Method, Params: r.Params})
	}
	return out
}
