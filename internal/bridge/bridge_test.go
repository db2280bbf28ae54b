package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/mcptask/mcptask/internal/rpc"
)

// keyed answers the questions whose keys it holds, saying who answered.
type keyed struct {
	who  string
	keys map[string]bool
}

func (k keyed) Answer(_ context.Context, req follow.Request) (json.RawMessage, bool, error) {
	if !k.keys[req.Key] {
		return nil, false, nil
	}
	return json.RawMessage(`"` + k.who + `"`), true, nil
}

func answeredBy(t *testing.T, a follow.Answerer, req follow.Request) string {
	t.Helper()
	resolved, err := follow.Resolve(a, []follow.Request{req})
	if err != nil {
		t.Fatal(err)
	}
	raw, ok, err := resolved.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "nobody"
	}
	var who string
	_ = json.Unmarshal(raw, &who)
	return who
}

// TestAnswererOrder: a 2025-11-25 host is asked before --on-input; for a 2026-07-28 host that
// declared what it can answer, its own answers answer only what it can, and --on-input never
// takes a question the host can answer (that one goes back to the host as an input_required
// round), even when --on-input has an answer for its key.
func TestAnswererOrder(t *testing.T) {
	onInput := keyed{who: "on-input", keys: map[string]bool{"form": true, "sample": true, "both": true}}
	f := New(onInput)
	form := follow.Request{Key: "form", Method: "elicitation/create"}
	sample := follow.Request{Key: "sample", Method: "sampling/createMessage"}
	both := follow.Request{Key: "both", Method: "elicitation/create"}

	var asked []string
	legacy := f.answerer(proxy.FollowedTask{AskHost: func(_ context.Context, q proxy.Question) (json.RawMessage, bool, error) {
		asked = append(asked, q.Key)
		if q.Method != "elicitation/create" {
			return nil, false, nil
		}
		return json.RawMessage(`"host"`), true, nil
	}})
	if got := answeredBy(t, legacy, form); got != "host" {
		t.Errorf("2025-11-25 form question answered by %s, want the host", got)
	}
	if got := answeredBy(t, legacy, sample); got != "on-input" {
		t.Errorf("2025-11-25 question the host refused answered by %s, want --on-input", got)
	}
	if len(asked) != 2 || asked[1] != "sample" {
		t.Errorf("the host was asked %v, want every question first", asked)
	}

	hostCan := func(q proxy.Question) bool { return q.Method == "elicitation/create" }
	modern := f.answerer(proxy.FollowedTask{HostCan: hostCan,
		HostAnswers: map[string]json.RawMessage{"form": json.RawMessage(`"host"`), "sample": json.RawMessage(`"host"`)}})
	for _, tc := range []struct {
		req  follow.Request
		want string
	}{
		{form, "host"},       // the host's answer to what it can answer
		{sample, "on-input"}, // the host cannot sample: its answer for the key is not taken
		{both, "nobody"},     // the host can answer: it gets an input_required round
	} {
		if got := answeredBy(t, modern, tc.req); got != tc.want {
			t.Errorf("2026-07-28 %s answered by %s, want %s", tc.req.Key, got, tc.want)
		}
	}
	if f.Answers() != true || New(nil).Answers() || New(nil).Samples() {
		t.Error("Answers/Samples do not say what --on-input answers")
	}
}

// TestEnd: the engine's outcomes in the proxy's words, with what the host is answered from.
func TestEnd(t *testing.T) {
	rpcErr := &rpc.Error{Code: -32000, Message: "boom"}
	stop := errors.New("server gone")
	for name, tc := range map[string]struct {
		out  follow.Outcome
		want proxy.TaskEnd
	}{
		"result":    {follow.Outcome{End: follow.EndResult, Result: &rpc.ToolResult{Raw: json.RawMessage(`{"content":[]}`)}}, proxy.TaskEnd{Kind: proxy.TaskResult, Result: json.RawMessage(`{"content":[]}`)}},
		"error":     {follow.Outcome{End: follow.EndResult, RPCError: rpcErr}, proxy.TaskEnd{Kind: proxy.TaskResult, Error: rpcErr}},
		"cancelled": {follow.Outcome{End: follow.EndCancelled}, proxy.TaskEnd{Kind: proxy.TaskCancelled}},
		"expired":   {follow.Outcome{End: follow.EndExpired, Err: stop}, proxy.TaskEnd{Kind: proxy.TaskExpired}},
		"detached":  {follow.Outcome{End: follow.EndDetached, Err: stop}, proxy.TaskEnd{Kind: proxy.TaskStopped, Err: stop}},
		"input": {follow.Outcome{End: follow.EndInputRequired, Requests: []follow.Request{{Key: "k", Method: "elicitation/create", Params: json.RawMessage(`{}`)}}},
			proxy.TaskEnd{Kind: proxy.TaskInputRequired, Questions: []proxy.Question{{Key: "k", Method: "elicitation/create", Params: json.RawMessage(`{}`)}}}},
	} {
		got := end(tc.out)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if string(g) != string(w) || got.Err != tc.want.Err {
			t.Errorf("%s: %s, want %s", name, g, w)
		}
	}
}
