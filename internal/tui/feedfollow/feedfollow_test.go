package feedfollow

import (
	"encoding/json"
	"testing"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestSnapshotResult: a finished task shows the first text of its result, a failed one its
// error, and the event's tool, server and era travel with it.
func TestSnapshotResult(t *testing.T) {
	ev := follow.Event{Tool: "sleep", Server: "http://127.0.0.1:1/mcp", Era: rpc.Era("2026-07-28")}
	done := &rpc.Task{TaskID: "t1", Status: "completed", Result: json.RawMessage(`{"content":[{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"slept 3s"}]}`)}
	s := Snapshot(ev, done)
	if s.TaskID != "t1" || s.Tool != "sleep" || s.Server != ev.Server || s.Protocol != "2026-07-28" || s.Result != "slept 3s" {
		t.Errorf("snapshot = %+v", s)
	}
	if s := Snapshot(ev, &rpc.Task{TaskID: "t2", Status: "working", Result: done.Result}); s.Result != "" {
		t.Errorf("a working task shows a result: %q", s.Result)
	}
	if s := Snapshot(ev, nil); s.TaskID != "" {
		t.Errorf("nil task: %+v", s)
	}
}

// TestInputsOrder: the questions of a multi-round-trip call come in key order, each with its
// method, message and schema.
func TestInputsOrder(t *testing.T) {
	in := Inputs(map[string]json.RawMessage{
		"b": json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"second","requestedSchema":{"type":"object"}}}`),
		"a": json.RawMessage(`{"method":"elicitation/create","params":{"mode":"url","message":"first","url":"https://example.test/x"}}`),
	})
	if len(in) != 2 || in[0].Key != "a" || in[1].Key != "b" {
		t.Fatalf("inputs = %+v", in)
	}
	if in[0].Kind != "elicitation/create" || in[0].Mode != "url" || in[0].URL != "https://example.test/x" || in[0].Message != "first" {
		t.Errorf("first = %+v", in[0])
	}
	if string(in[1].Schema) != `{"type":"object"}` || in[1].Mode != "form" {
		t.Errorf("second = %+v", in[1])
	}
}

// TestProgress: a progress event becomes the view's Progress; without a total its Total is 0,
// for which the view draws a spinner and the count instead of a bar.
func TestProgress(t *testing.T) {
	five := 5.0
	p := Progress(follow.Event{Kind: follow.KindProgress, TaskID: "t", Progress: 2, Total: &five, Message: "two"})
	if p.Value != 2 || p.Total != 5 || p.Message != "two" {
		t.Errorf("with a total: %+v", p)
	}
	if p := Progress(follow.Event{Kind: follow.KindProgress, TaskID: "t", Progress: 7}); p.Total != 0 || p.Value != 7 {
		t.Errorf("without a total: %+v", p)
	}
}
