package demo

import (
	"encoding/json"
	"regexp"
	"testing"
)

var deployKey = regexp.MustCompile(`^confirm-[0-9a-f]{8}$`)

// The deploy tool asks under keys made up at run time, one per target, every one asking for
// {confirm}; it deploys only when every one is confirmed (2026-07-28).
func TestDeployModern(t *testing.T) {
	e := newEnv(t, Options{})
	_, m := e.modern("tools/call", map[string]any{"name": "deploy", "arguments": map[string]any{"targets": 2}}, capsFull)
	id := mustResult(t, m)["taskId"].(string)
	reqs := e.modernWait(id, "input_required")["inputRequests"].(map[string]any)
	if len(reqs) != 2 {
		t.Fatalf("inputRequests = %v, want two questions", reqs)
	}
	answers := map[string]any{}
	for key, r := range reqs {
		var q struct {
			Method string `json:"method"`
			Params struct {
				RequestedSchema struct {
					Properties map[string]any `json:"properties"`
				} `json:"requestedSchema"`
			} `json:"params"`
		}
		_ = json.Unmarshal(jsonOf(r), &q)
		if !deployKey.MatchString(key) || q.Method != "elicitation/create" || len(q.Params.RequestedSchema.Properties) != 1 || q.Params.RequestedSchema.Properties["confirm"] == nil {
			t.Fatalf("question %s = %s", key, jsonOf(r))
		}
		answers[key] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	_, m = e.modern("tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, capsFull)
	mustResult(t, m)
	if got := contentText(t, e.modernWait(id, "completed")["result"]); got != "deployed" {
		t.Errorf("result %q, want deployed", got)
	}

	// Without the elicitation capability the question cannot be asked (C26-MRTR).
	_, m = e.modern("tools/call", map[string]any{"name": "deploy"}, capsTasks)
	mustError(t, m, -32021)
}

// In 2025-11-25 the question goes as elicitation/create on tasks/result; declining it (or
// confirm false) does not deploy.
func TestDeployLegacy(t *testing.T) {
	e := newEnv(t, Options{})
	l := e.initialize(map[string]any{"elicitation": map[string]any{}})
	id, _ := l.createTask("deploy", nil, map[string]any{})
	l.wait(id, "input_required")
	events := l.resultStream(id)
	q := <-events
	if q == nil || q.Method != "elicitation/create" {
		t.Fatalf("event %+v, want an elicitation/create", q)
	}
	e.post(l.headers(), map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"confirm": false}}})
	final := <-events
	if final == nil || contentText(t, mustResult(t, final)) != "not deployed" {
		t.Fatalf("tasks/result = %+v", final)
	}
}
