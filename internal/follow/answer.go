package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Answerer answers the questions tasks ask without a person: the answers given up front
// (Answers), and later a program that answers requests. It returns the response the spec
// defines for the request's kind (for an elicitation an ElicitResult, for roots/list a
// ListRootsResult), and false when it has none, so that the question goes on to the next
// answerer, then to whoever listens (Options.Listen), else ends the follow as
// EndInputRequired. An error means the answer it has is wrong (an *AnswerError names the key
// and the problem); nothing is sent then.
type Answerer interface {
	Answer(ctx context.Context, req Request) (json.RawMessage, bool, error)
}

// Chain asks each answerer in turn; the first that has an answer wins.
type Chain []Answerer

// Answer implements Answerer.
func (c Chain) Answer(ctx context.Context, req Request) (json.RawMessage, bool, error) {
	for _, a := range c {
		if a == nil {
			continue
		}
		if resp, ok, err := a.Answer(ctx, req); ok || err != nil {
			return resp, ok, err
		}
	}
	return nil, false, nil
}

// AnswerError is an answer that does not fit its question (a field the requestedSchema does
// not allow, an action that is not accept, decline or cancel). The command layer reports it
// as a usage error.
type AnswerError struct {
	Key string
	Err error
}

func (e *AnswerError) Error() string { return "answer " + e.Key + ": " + e.Err.Error() }
func (e *AnswerError) Unwrap() error { return e.Err }

// Answers are answers given up front, by input request key (--answer KEY=VALUE, --answers
// FILE). A VALUE is the response the spec defines for that request kind (for an elicitation
// {"action":"accept","content":{…}}); an object without "action" is taken as the content of an
// accepted elicitation, so --answer name='{"name":"Ada"}' works. The key "*" answers any
// question without an answer of its own (--on-input decline), and a 2025-11-25 question, which
// has no key, takes the answer given for "elicitation".
type Answers map[string]json.RawMessage

// Lookup returns the raw answer for key, with the "*" fallback.
func (a Answers) Lookup(key string) (json.RawMessage, bool) {
	if v, ok := a[key]; ok {
		return v, true
	}
	if v, ok := a["*"]; ok {
		return v, true
	}
	return nil, false
}

// Keys lists the keys answers were given for.
func (a Answers) Keys() []string { return slices.Sorted(maps.Keys(a)) }

// Answer implements Answerer: the answer given for the request's key, checked against the
// request's requestedSchema.
func (a Answers) Answer(_ context.Context, req Request) (json.RawMessage, bool, error) {
	key := req.Key
	if req.Legacy {
		key = "elicitation"
	}
	ans, ok := a.Lookup(key)
	if !ok {
		return nil, false, nil
	}
	resp, err := Response(key, req.Method, req.Params, ans)
	if err != nil {
		return nil, false, err
	}
	return resp, true, nil
}

// Response turns an answer into the response the spec defines for a request of method with
// params, and checks it against the request's requestedSchema. A mismatch is an
// *AnswerError naming the field.
func Response(key, method string, params, answer json.RawMessage) (json.RawMessage, error) {
	if method == "roots/list" && strings.Contains(string(answer), `"decline"`) {
		return json.RawMessage(`{"roots":[]}`), nil // declining roots is sharing none
	}
	if method != "" && method != "elicitation/create" {
		// roots/list and the rest: the answer is the result object as given.
		return answer, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(answer, &obj); err != nil {
		return nil, &AnswerError{key, fmt.Errorf(`an elicitation answer must be a JSON object, either a response like {"action":"accept","content":{…}} or the content itself`)}
	}
	if _, ok := obj["action"]; !ok {
		wrapped, _ := json.Marshal(map[string]any{"action": "accept", "content": obj})
		answer, obj = wrapped, map[string]json.RawMessage{"action": json.RawMessage(`"accept"`), "content": answer}
	}
	var action string
	_ = json.Unmarshal(obj["action"], &action)
	var p struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	_ = json.Unmarshal(params, &p)
	switch action {
	case "accept":
		// SEP-1034: omitted fields take the form's defaults before the answer is checked.
		answer = rpc.ElicitDefaults(p.RequestedSchema, answer)
		obj = nil
		_ = json.Unmarshal(answer, &obj)
	case "decline", "cancel":
		return answer, nil
	default:
		return nil, &AnswerError{key, fmt.Errorf("action %q must be accept, decline or cancel", action)}
	}
	if err := checkContent(obj["content"], p.RequestedSchema); err != nil {
		return nil, &AnswerError{key, err}
	}
	return answer, nil
}

// checkContent validates an accepted elicitation's content against requestedSchema: the flat
// object of primitives both eras define (required fields, string/number/integer/boolean,
// enum).
func checkContent(content, schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			Enum  []any  `json:"enum"`
			OneOf []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var c map[string]any
	if len(content) > 0 {
		if err := json.Unmarshal(content, &c); err != nil {
			return fmt.Errorf("content must be a JSON object")
		}
	}
	for _, name := range s.Required {
		if _, ok := c[name]; !ok {
			return fmt.Errorf("field %q is required", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c)) {
		v := c[name]
		p, ok := s.Properties[name]
		if !ok {
			return fmt.Errorf("field %q is not in the requested schema", name)
		}
		switch p.Type {
		case "string":
			if _, ok := v.(string); !ok {
				return fmt.Errorf("field %q must be a string", name)
			}
		case "number":
			if _, ok := v.(float64); !ok {
				return fmt.Errorf("field %q must be a number", name)
			}
		case "integer":
			if f, ok := v.(float64); !ok || f != float64(int64(f)) {
				return fmt.Errorf("field %q must be an integer", name)
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("field %q must be true or false", name)
			}
		}
		allowed := p.Enum
		for _, o := range p.OneOf {
			allowed = append(allowed, o.Const)
		}
		if len(allowed) > 0 && !slices.Contains(allowed, v) {
			return fmt.Errorf("field %q must be one of %v", name, allowed)
		}
	}
	return nil
}

// Respond answers every request of reqs (by key, as a 2026-07-28 inputRequests map or a
// multi-round-trip tools/call's, C26-MRTR) with a. It returns the responses when all of
// them have one, and nil when some question is left (nothing is sent then).
func Respond(ctx context.Context, a Answerer, taskID string, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if a == nil {
		return nil, nil
	}
	out := map[string]json.RawMessage{}
	for _, r := range requestsOf(&rpc.Task{TaskID: taskID, InputRequests: reqs}, nil) {
		resp, ok, err := a.Answer(ctx, r)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, nil
		}
		out[r.Key] = resp
	}
	return out, nil
}

// SendAnswers answers, in one tasks/update, the outstanding input requests of the 2026-07-28
// task t that were not answered before (answered) and that a has an answer for (EXT §Task
// Update Requests: inputResponses hold only currently outstanding keys). It returns the keys
// it answered, sorted; the caller records them.
func SendAnswers(ctx context.Context, c *rpc.Client, t *rpc.Task, a Answerer, answered map[string]bool) ([]string, error) {
	if a == nil || c.Era() != rpc.EraModern {
		return nil, nil // 2025-11-25 input arrives as elicitation/create on tasks/result
	}
	responses := map[string]json.RawMessage{}
	for _, r := range requestsOf(t, answered) {
		resp, ok, err := a.Answer(ctx, r)
		if err != nil {
			return nil, err
		}
		if ok {
			responses[r.Key] = resp
		}
	}
	if len(responses) == 0 {
		return nil, nil
	}
	if err := c.UpdateTask(ctx, t.TaskID, responses); err != nil {
		return nil, fmt.Errorf("answer task %s: %w", t.TaskID, err)
	}
	return sortedKeys(responses), nil
}

// Handler is a client's OnRequest for a command that answers 2025-11-25 questions from a
// alone, without following anything (mcptask update): elicitation/create gets a's answer
// (key "elicitation"), or is cancelled with a note; anything else is refused, since only
// elicitation was declared.
func Handler(a Answerer, note func(string)) func(context.Context, string, json.RawMessage) (json.RawMessage, *rpc.Error) {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		if method != "elicitation/create" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not handle " + method}
		}
		resp, ok, err := a.Answer(ctx, Request{TaskID: relatedTask(params), Key: "elicitation", Legacy: true, Method: method, Params: params})
		switch {
		case err != nil:
			note(err.Error() + "; cancelling the question")
		case !ok:
			note("the server asked a question and no --answer elicitation=… was given; cancelling it")
		default:
			return resp, nil
		}
		return json.RawMessage(`{"action":"cancel"}`), nil
	}
}

// relatedTask reads the task a 2025-11-25 server-to-client request is about
// (C25-TASKS §Input Required Status: such requests carry related-task _meta).
func relatedTask(params json.RawMessage) string {
	var p struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta[rpc.MetaRelatedTask].TaskID
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
