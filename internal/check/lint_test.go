package check

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

func TestLinterFlagsWhatItSees(t *testing.T) {
	var got []string
	l := NewLinter(func(v Violation) { got = append(got, v.Rule) })
	now := time.Unix(1000, 0)
	l.Now = func() time.Time { return now }
	get := func(body string) {
		l.Observe(rpc.EraModern, "tasks/get", map[string]any{"taskId": "t1"}, json.RawMessage(body), nil)
	}
	l.Observe(rpc.EraModern, "tools/call", nil, json.RawMessage(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`), nil)
	get(`{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"x","lastUpdatedAt":"x","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"a"}}}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"x","lastUpdatedAt":"x","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"b"}}}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"completed","createdAt":"x","lastUpdatedAt":"x","result":{}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x"}`)
	l.Observe(rpc.EraModern, "tasks/update", nil, json.RawMessage(`{"resultType":"task"}`), nil)
	l.Observe(rpc.EraModern, "tools/call", nil, json.RawMessage(`{"resultType":"task","taskId":"t2","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":1}`), nil)
	now = now.Add(time.Second)
	l.Observe(rpc.EraModern, "tasks/get", map[string]any{"taskId": "t2"}, nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown"})
	l.ObserveStream("notifications/progress")
	l.ObserveStream("notifications/tasks/other")
	want := []string{"B32", "B33", "B23", "B25", "B34"}
	if len(got) != len(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("violations %v, want %v", got, want)
		}
	}
}
