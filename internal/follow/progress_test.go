package follow

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

// TestProgressByToken: a notifications/progress is the task's that was created with its token
// (MCP 2025-11-25, Progress: the token stays in use for the task's whole life), whether the
// token came as a string or a number; one that names a task with related-task meta is that
// task's; one with a token no task has is a call's still in flight (no task id), and its total
// is kept only when the server gave one.
func TestProgressByToken(t *testing.T) {
	var mu sync.Mutex
	var got []Event
	e := New(Options{}, SinkFunc(func(ev Event) {
		if ev.Kind == KindProgress {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
	}))
	s := e.Server("http://127.0.0.1:1/mcp", "k")
	opts := s.ClientOptions(rpc.ClientOptions{})
	s.Follow(nil, Target{ID: "task-a", ProgressToken: "mcptask-1"}, Target{ID: "task-b", ProgressToken: "7"})
	for _, p := range []string{
		`{"progressToken":"mcptask-1","progress":2,"total":5,"message":"two"}`,
		`{"progressToken":7,"progress":1}`,
		`{"progressToken":"other","progress":3,"total":4}`,
		`{"progressToken":"other","progress":1,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-b"}}}`,
		`{"progressToken":`, // not JSON: dropped
	} {
		opts.OnNotify("notifications/progress", json.RawMessage(p))
	}
	want := []struct {
		id    string
		n     float64
		total float64 // 0: none
		msg   string
	}{{"task-a", 2, 5, "two"}, {"task-b", 1, 0, ""}, {"", 3, 4, ""}, {"task-b", 1, 0, ""}}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("%d progress events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		ev := got[i]
		total := 0.0
		if ev.Total != nil {
			total = *ev.Total
		}
		if ev.TaskID != w.id || ev.Progress != w.n || total != w.total || ev.Message != w.msg {
			t.Errorf("event %d: task %q %v/%v %q, want task %q %v/%v %q", i, ev.TaskID, ev.Progress, total, ev.Message, w.id, w.n, w.total, w.msg)
		}
	}
}
