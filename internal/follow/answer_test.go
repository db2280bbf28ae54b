package follow

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
)

// form is a form elicitation asking for fields, all booleans.
func form(key string, fields ...string) Request {
	props := map[string]any{}
	for _, f := range fields {
		props[f] = map[string]any{"type": "boolean"}
	}
	p, _ := json.Marshal(map[string]any{"mode": "form", "message": "?", "requestedSchema": map[string]any{"type": "object", "properties": props}})
	return Request{TaskID: "t1", Key: key, Method: "elicitation/create", Params: p}
}

// answerAll resolves a for open and answers each question; it returns the responses by key,
// and the first error.
func answerAll(t *testing.T, a Answerer, open []Request) (map[string]string, error) {
	t.Helper()
	r, err := Resolve(a, open)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, q := range open {
		resp, ok, err := r.Answer(t.Context(), q)
		if err != nil {
			return nil, err
		}
		if ok {
			out[q.Key] = string(resp)
		}
	}
	return out, nil
}

// TestAnswersByFieldNames: an answer whose key is no open question's key answers the one open
// elicitation that asks for exactly the fields it names; a key match always wins; an answer
// that fits several open questions answers none and lists the open keys.
func TestAnswersByFieldNames(t *testing.T) {
	yes := json.RawMessage(`{"confirm":true}`)
	accepted := `{"action":"accept","content":{"confirm":true}}`
	for _, tt := range []struct {
		name    string
		answers Answers
		open    []Request
		want    map[string]string
		err     string // in the *AnswerError, when one is wanted
	}{
		{"one question fits", Answers{"confirm": yes},
			[]Request{form("confirm-e6f21b98", "confirm"), form("name", "name")},
			map[string]string{"confirm-e6f21b98": accepted}, ""},
		{"several fields, in any order", Answers{"b, a": json.RawMessage(`{"a":true,"b":false}`)},
			[]Request{form("k-1", "a", "b")},
			map[string]string{"k-1": `{"action":"accept","content":{"a":true,"b":false}}`}, ""},
		{"not the same fields", Answers{"confirm": yes},
			[]Request{form("k-1", "confirm", "reason"), form("k-2")},
			map[string]string{}, ""},
		{"a key match wins over the fields", Answers{"confirm": json.RawMessage(`{"ok":true}`)},
			[]Request{form("confirm", "ok"), form("confirm-1", "confirm")},
			map[string]string{"confirm": `{"action":"accept","content":{"ok":true}}`}, ""},
		{"a question answered by key is not matched by fields", Answers{"confirm": yes, "confirm-1": json.RawMessage(`{"action":"decline"}`)},
			[]Request{form("confirm-1", "confirm"), form("confirm-2", "confirm")},
			map[string]string{"confirm-1": `{"action":"decline"}`, "confirm-2": accepted}, ""},
		{"fields win over decline", Answers{"confirm": yes, "*": json.RawMessage(`{"action":"decline"}`)},
			[]Request{form("confirm-1", "confirm"), form("name", "name")},
			map[string]string{"confirm-1": accepted, "name": `{"action":"decline"}`}, ""},
		{"several fit: ambiguous", Answers{"confirm": yes},
			[]Request{form("confirm-aaaaaaaa", "confirm"), form("confirm-bbbbbbbb", "confirm"), form("name", "name")},
			nil, "the open keys: confirm-aaaaaaaa, confirm-bbbbbbbb, name"},
		{"two answers for one question", Answers{"a,b": yes, "b,a": yes},
			[]Request{form("k", "a", "b")}, nil, "give it one answer"},
		{"the content is checked against the schema", Answers{"confirm": json.RawMessage(`{"confirm":"yes"}`)},
			[]Request{form("confirm-1", "confirm")}, nil, `"confirm" must be true or false`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := answerAll(t, tt.answers, tt.open)
			if tt.err != "" {
				var ae *AnswerError
				if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want an *AnswerError with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("answered %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %s, want %s", k, got[k], v)
				}
			}
		})
	}

	// The ambiguity sends nothing: Respond (a multi-round-trip tools/call) returns the error
	// before any answer is made.
	reqs := map[string]json.RawMessage{}
	for _, r := range []Request{form("confirm-1", "confirm"), form("confirm-2", "confirm")} {
		reqs[r.Key], _ = json.Marshal(map[string]any{"method": r.Method, "params": r.Params})
	}
	if out, err := Respond(t.Context(), Answers{"confirm": yes}, Request{}, reqs); out != nil || err == nil {
		t.Errorf("Respond with an ambiguous answer: %v, %v", out, err)
	}
	// Unused tells update which answers fit nothing at all.
	task := &rpc.Task{InputRequests: reqs}
	if got := (Answers{"confirm": yes, "confirm-2": yes, "nope": yes, "*": yes}).Unused(task); len(got) != 1 || got[0] != "nope" {
		t.Errorf("Unused = %v, want [nope]", got)
	}
}

// TestAnswerByFieldNamesEngine: --answer confirm=… answers the deploy tool's question, keyed
// confirm-<random> on 2026-07-28 and keyless on 2025-11-25, through the engine; with two such
// questions open at once the follow ends with the ambiguity and nothing is sent.
func TestAnswerByFieldNamesEngine(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			e := New(Options{Answerer: Answers{"confirm": json.RawMessage(`{"confirm":true}`)}})
			s := e.Server(url, url)
			c := connect(t, url, era, s)
			tk := create(t, c, url, "deploy", nil, "")
			s.Follow(c, Target{ID: tk.TaskID, Tool: "deploy", Task: tk})
			if o := e.Run(t.Context())[0]; o.End != EndResult || text(o) != "deployed" {
				t.Fatalf("outcome %+v (%s)", o, text(o))
			}
			if era == rpc.VersionModern && countOf(rec.Methods(), "tasks/update") != 1 {
				t.Errorf("want one tasks/update: %v", rec.Methods())
			}
		})
	}
	t.Run("ambiguous", func(t *testing.T) {
		url, rec := demoServer(t, demo.Options{})
		e := New(Options{Answerer: Answers{"confirm": json.RawMessage(`{"confirm":true}`)}})
		s := e.Server(url, url)
		c := connect(t, url, rpc.VersionModern, s)
		tk := create(t, c, url, "deploy", map[string]any{"targets": 2}, "")
		s.Follow(c, Target{ID: tk.TaskID, Tool: "deploy", Task: tk})
		o := e.Run(t.Context())[0]
		var ae *AnswerError
		if o.End != EndError || !errors.As(o.Err, &ae) || !strings.Contains(o.Err.Error(), "fits 2 open questions") {
			t.Fatalf("outcome %+v", o)
		}
		if countOf(rec.Methods(), "tasks/update") != 0 {
			t.Errorf("an ambiguous answer was sent: %v", rec.Methods())
		}
	})
}

// TestLegacyBadAnswerLeftUnanswered: on 2025-11-25 an answer that does not fit is not sent,
// not even as a cancel: the question stays open, the task waits as it did, and the follow
// ends with the error, as on 2026-07-28.
func TestLegacyBadAnswerLeftUnanswered(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	e := New(Options{Answerer: Answers{"elicitation": json.RawMessage(`{"name":7}`)}})
	s := e.Server(url, url)
	c := connect(t, url, rpc.VersionLegacy, s)
	tk := create(t, c, url, "ask", nil, "")
	s.Follow(c, Target{ID: tk.TaskID, Task: tk})
	o := e.Run(t.Context())[0]
	var ae *AnswerError
	if o.End != EndError || !errors.As(o.Err, &ae) {
		t.Fatalf("outcome %+v", o)
	}
	got, err := c.GetTask(t.Context(), tk.TaskID)
	if err != nil || got.Status != rpc.StatusInputRequired {
		t.Fatalf("the task after a bad answer: %+v, %v; want it still waiting", got, err)
	}
}

// TestRequestsInServerOrder: a task's open questions come in the order the server wrote its
// inputRequests, not sorted: the live view asks them in that order, in one form.
func TestRequestsInServerOrder(t *testing.T) {
	raw := json.RawMessage(`{"taskId":"t1","status":"input_required","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":null,
		"inputRequests":{"zeta":{"method":"elicitation/create","params":{"mode":"form","message":"first","requestedSchema":{"type":"object","properties":{}}}},
		"alpha":{"method":"elicitation/create","params":{"mode":"form","message":"second","requestedSchema":{"type":"object","properties":{}}}}}}`)
	task, err := rpc.DecodeTask(raw)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range requestsOf(task, nil, Request{}) {
		keys = append(keys, r.Key)
	}
	if strings.Join(keys, ",") != "zeta,alpha" {
		t.Errorf("keys %v, want the server's order zeta,alpha", keys)
	}
	keys = keys[:0]
	for _, r := range requestsOf(task, map[string]bool{"zeta": true}, Request{}) {
		keys = append(keys, r.Key)
	}
	if strings.Join(keys, ",") != "alpha" {
		t.Errorf("an answered key must be left out: %v", keys)
	}
}
