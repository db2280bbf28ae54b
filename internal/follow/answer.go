package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/elicit"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Answerer answers the questions tasks ask without a person: the answers given up front
// (Answers), a program run for each question (--on-input exec, internal/follow/answerexec). It
// returns the response the spec defines for the request's kind (for an elicitation an
// ElicitResult, for roots/list a ListRootsResult), and false when it has none, so that the
// question goes on to the next answerer, then to whoever listens (Options.Listen), else ends
// the follow as EndInputRequired. An error means the answer it has is wrong (an *AnswerError
// names the key and the problem); nothing is sent then.
type Answerer interface {
	Answer(ctx context.Context, req Request) (json.RawMessage, bool, error)
}

// Resolver is an Answerer whose answers depend on every question open at once: Answers, where
// an answer given by field names must fit exactly one open question. Resolve is called with
// the open questions of a task (or of a multi-round-trip tools/call) before any of them is
// answered, and returns the Answerer that answers them; an error (an *AnswerError) means none
// may be answered, and nothing is sent.
type Resolver interface {
	Resolve(open []Request) (Answerer, error)
}

// Resolve prepares a to answer the open questions together: a Resolver resolves, any other
// Answerer answers as it is.
func Resolve(a Answerer, open []Request) (Answerer, error) {
	if r, ok := a.(Resolver); ok {
		return r.Resolve(open)
	}
	return a, nil
}

// Sampler is an Answerer that can answer sampling/createMessage, as a program can and answers
// given up front cannot. Only then is the sampling capability declared: C26-MRTR §Server
// Requirements forbids servers from sending input requests of a kind the client did not
// declare, and a client declares only what it can fulfil.
type Sampler interface {
	Samples() bool
}

// Samples reports whether a answers sampling/createMessage.
func Samples(a Answerer) bool {
	s, ok := a.(Sampler)
	return ok && s.Samples()
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

// Resolve implements Resolver: each answerer of the chain is resolved.
func (c Chain) Resolve(open []Request) (Answerer, error) {
	out := make(Chain, 0, len(c))
	for _, a := range c {
		if a == nil {
			continue
		}
		r, err := Resolve(a, open)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Samples implements Sampler: a chain samples when one of its answerers does.
func (c Chain) Samples() bool { return slices.ContainsFunc(c, Samples) }

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
// question without an answer of its own (--on-input decline), and a 2025-11-25 elicitation,
// which has no key, takes the answer given for "elicitation".
//
// A KEY that is no open question's key is matched by field names instead: it answers the one
// open elicitation whose requestedSchema asks for exactly the fields KEY names (one name, or
// several separated by commas), so --answer confirm='{"confirm":true}' answers a question keyed
// confirm-e6f21b98 that asks only for confirm, a key the server makes up at run time. A key
// match always wins; an answer that fits several open questions by their fields answers none
// (an *AnswerError that lists the open keys). See Resolve.
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

// Answer implements Answerer: the answer given for the request's key (or, failing that, by
// its fields), checked against the request's requestedSchema. It sees one question; Resolve
// first when a task has several open.
func (a Answers) Answer(ctx context.Context, req Request) (json.RawMessage, bool, error) {
	r, err := a.Resolve([]Request{req})
	if err != nil {
		return nil, false, err
	}
	return r.Answer(ctx, req)
}

// Resolve implements Resolver: it settles which answer is for which open question. An answer
// given by key is for the question of that key. An answer whose key is no open question's
// key is for the one open elicitation, without an answer of its own, whose requestedSchema
// asks for exactly the fields the key names; when several fit, it is an *AnswerError listing
// the open keys, and nothing may be answered.
func (a Answers) Resolve(open []Request) (Answerer, error) {
	b := boundAnswers{given: map[string]boundAnswer{}}
	if v, ok := a["*"]; ok {
		b.fallback = &boundAnswer{name: "*", raw: v}
	}
	keys := make(map[string]bool, len(open))
	for _, r := range open {
		k := answerKey(r)
		keys[k] = true
		if v, ok := a[k]; ok {
			b.given[k] = boundAnswer{name: k, raw: v}
		}
	}
	for _, name := range a.Keys() {
		fields := fieldNames(name)
		if name == "*" || keys[name] || len(fields) == 0 {
			continue
		}
		var fits []string
		for _, r := range open {
			k := answerKey(r)
			if _, byKey := a[k]; !byKey && asksExactly(r, fields) {
				fits = append(fits, k)
			}
		}
		switch len(fits) {
		case 0:
			continue
		case 1:
		default:
			return nil, &AnswerError{name, fmt.Errorf("it fits %d open questions by their fields (%s), so it answers none; answer each by its key (the open keys: %s)",
				len(fits), strings.Join(fits, ", "), strings.Join(openKeys(open), ", "))}
		}
		if prev, dup := b.given[fits[0]]; dup {
			return nil, &AnswerError{name, fmt.Errorf("question %s is answered by its fields by %s as well; give it one answer", fits[0], prev.name)}
		}
		b.given[fits[0]] = boundAnswer{name: name, raw: a[name]}
	}
	return b, nil
}

// Unused lists, sorted, the answers that fit none of the inputRequests of t, neither by key nor
// by field names. "*" always fits.
func (a Answers) Unused(t *rpc.Task) []string {
	open := requestsOf(t, nil, Request{})
	var out []string
	for _, name := range a.Keys() {
		if name == "*" {
			continue
		}
		if _, ok := t.InputRequests[name]; ok {
			continue
		}
		fields := fieldNames(name)
		if !slices.ContainsFunc(open, func(r Request) bool { return len(fields) > 0 && asksExactly(r, fields) }) {
			out = append(out, name)
		}
	}
	return out
}

// boundAnswers are Answers resolved for a set of open questions: each answer is bound to the
// key of the question it is for.
type boundAnswers struct {
	given    map[string]boundAnswer
	fallback *boundAnswer
}

// boundAnswer is one answer and the key it was given as.
type boundAnswer struct {
	name string
	raw  json.RawMessage
}

// Answer implements Answerer.
func (b boundAnswers) Answer(_ context.Context, req Request) (json.RawMessage, bool, error) {
	key := answerKey(req)
	ans, ok := b.given[key]
	if !ok {
		if b.fallback == nil {
			return nil, false, nil
		}
		ans = *b.fallback
	}
	label := key
	if ans.name != key && ans.name != "*" {
		label = ans.name + " (by its fields, for " + key + ")"
	}
	resp, err := Response(label, req.Method, req.Params, ans.raw)
	if err != nil {
		return nil, false, err
	}
	return resp, true, nil
}

// answerKey is the key an answer for req is given as: its key, and for a 2025-11-25
// elicitation, which has none, "elicitation".
func answerKey(req Request) string {
	if req.Legacy && req.Method == "elicitation/create" {
		return "elicitation"
	}
	return req.Key
}

// openKeys lists the answer keys of open, sorted.
func openKeys(open []Request) []string {
	out := make([]string, 0, len(open))
	for _, r := range open {
		out = append(out, answerKey(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fieldNames are the field names an answer key names: itself, or a comma-separated list;
// sorted, without repeats.
func fieldNames(key string) []string {
	var out []string
	for f := range strings.SplitSeq(key, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// asksExactly reports whether req is a form elicitation whose requestedSchema has exactly the
// properties fields (sorted).
func asksExactly(req Request, fields []string) bool {
	if req.Method != "elicitation/create" {
		return false
	}
	var p struct {
		Mode            string `json:"mode"`
		RequestedSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	if json.Unmarshal(req.Params, &p) != nil || (p.Mode != "" && p.Mode != "form") {
		return false
	}
	return slices.Equal(slices.Sorted(maps.Keys(p.RequestedSchema.Properties)), fields)
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
	if err := elicit.Check(p.RequestedSchema, obj["content"]); err != nil { // the form's own check
		return nil, &AnswerError{key, err}
	}
	return answer, nil
}

// Respond answers every request of reqs (by key, as a 2026-07-28 inputRequests map or a
// multi-round-trip tools/call's, C26-MRTR) with a. about carries what every request is about
// (TaskID, Tool, Server). It returns the responses when all of them have one, and nil when
// some question is left (nothing is sent then).
func Respond(ctx context.Context, a Answerer, about Request, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if a == nil {
		return nil, nil
	}
	open := requestsOf(&rpc.Task{TaskID: about.TaskID, InputRequests: reqs}, nil, about)
	a, err := Resolve(a, open)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, r := range open {
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
// Update Requests: inputResponses hold only currently outstanding keys). about carries the
// Tool and Server the requests are about. Every answer is made before anything is sent, so
// that one wrong answer sends none. It returns the keys it answered, sorted; the caller
// records them.
func SendAnswers(ctx context.Context, c *rpc.Client, t *rpc.Task, a Answerer, answered map[string]bool, about Request) ([]string, error) {
	if a == nil || c.Era() != rpc.EraModern {
		return nil, nil // 2025-11-25 input arrives as elicitation/create on tasks/result
	}
	open := requestsOf(t, answered, about)
	a, err := Resolve(a, open)
	if err != nil {
		return nil, err
	}
	responses := map[string]json.RawMessage{}
	for _, r := range open {
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

// legacyRequest is a 2025-11-25 server-to-client request as a question for an Answerer, and
// false when a cannot answer its kind: elicitation/create (key "elicitation"), and
// sampling/createMessage (key "sampling") when a samples. Anything else is refused, since
// only those were declared.
func legacyRequest(a Answerer, method string, params json.RawMessage) (Request, bool) {
	req := Request{TaskID: relatedTask(params), Legacy: true, Method: method, Params: params}
	switch {
	case method == "elicitation/create":
		req.Key = "elicitation"
	case method == "sampling/createMessage" && a != nil && Samples(a):
		req.Key = "sampling"
	default:
		return req, false
	}
	return req, true
}

// Handler is a client's OnRequest for a command that answers 2025-11-25 questions from a
// alone, without following anything (mcptask update): elicitation/create gets a's answer
// (key "elicitation"), or is cancelled with a note; sampling/createMessage too when a samples;
// anything else is refused. about carries the Tool and Server the questions are about. An
// answer that is wrong (a's error) goes to fail and the question is left unanswered, so that
// the task stays as it was.
func Handler(a Answerer, about Request, note func(string), fail func(error)) func(context.Context, string, json.RawMessage) (json.RawMessage, *rpc.Error) {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		req, ok := legacyRequest(a, method, params)
		if !ok || a == nil {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not handle " + method}
		}
		req.Tool, req.Server = about.Tool, about.Server
		resp, ok, err := a.Answer(ctx, req)
		switch {
		case err != nil:
			fail(err)
			return nil, rpc.NoResponse
		case !ok && method != "elicitation/create":
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask has no answer for " + method}
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
