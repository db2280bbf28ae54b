package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/pflag"
)

// Answers to input requests given without a human: --answer KEY=VALUE (repeatable) and
// --answers FILE. The key is the input request's key (2026-07-28 inputRequests and MRTR); a
// 2025-11-25 elicitation has no key and takes the answer given for "elicitation" (or "*").
//
// A VALUE is the response the spec defines for that request kind (for an elicitation
// {"action":"accept","content":{…}}); an object without "action" is taken as the content of an
// accepted elicitation, so --answer name='{"name":"Ada"}' works.

// AnswerFlags collects the answer flags of one command.
type AnswerFlags struct {
	Answer  []string
	Answers string
	// OnInput is what to do with a question no answer was given for: fail (exit 5 with the
	// questions as JSON on stdout), decline, or prompt (the live view; needs a terminal).
	OnInput string
}

// AddFlags registers --answer, --answers and --on-input.
func (a *AnswerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&a.Answer, "answer", nil, "answer input request `KEY=JSON` or KEY=@file.json (repeatable); never prompts")
	fs.StringVar(&a.Answers, "answers", "", "answer input requests from a JSON object `FILE` of key -> response")
	fs.StringVar(&a.OnInput, "on-input", "", "unanswered questions: `fail|decline|prompt` (default prompt on a terminal, else fail)")
}

// onInput resolves --on-input against whether the live view can run.
func (a *AnswerFlags) onInput(tty bool) (string, error) {
	switch a.OnInput {
	case "":
		if tty {
			return "prompt", nil
		}
		return "fail", nil
	case "fail", "decline":
		return a.OnInput, nil
	case "prompt":
		if !tty {
			return "", flagErrorf("--on-input prompt needs a terminal (stdout is not one, or --json was given); use --answer, or --on-input fail|decline")
		}
		return "prompt", nil
	}
	return "", flagErrorf("--on-input %q: want fail, decline or prompt", a.OnInput)
}

// answerSet maps keys to raw answers as the user gave them.
type answerSet map[string]json.RawMessage

// parse reads the flags. Bad JSON or a missing file is a usage error naming the key.
func (a *AnswerFlags) parse(stdin io.Reader) (answerSet, error) {
	set := answerSet{}
	switch a.OnInput {
	case "", "fail", "decline", "prompt":
	default:
		return nil, flagErrorf("--on-input %q: want fail, decline or prompt", a.OnInput)
	}
	if a.OnInput == "decline" {
		// Any question without an answer of its own is declined.
		set["*"] = json.RawMessage(`{"action":"decline"}`)
	}
	if a.Answers != "" {
		data, err := readArg(a.Answers, stdin)
		if err != nil {
			return nil, flagErrorf("--answers %s: %v", a.Answers, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, flagErrorf("--answers %s must be a JSON object of key -> response: %v", a.Answers, err)
		}
		for k, v := range m {
			set[k] = v
		}
	}
	for _, kv := range a.Answer {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, flagErrorf("--answer %q: want KEY=JSON or KEY=@file.json", kv)
		}
		data := []byte(v)
		if strings.HasPrefix(v, "@") {
			var err error
			if data, err = readArg(v[1:], stdin); err != nil {
				return nil, flagErrorf("--answer %s: %v", k, err)
			}
		}
		if !json.Valid(data) {
			return nil, flagErrorf("--answer %s: the value is not valid JSON (quote strings: --answer %s='\"text\"')", k, k)
		}
		set[k] = json.RawMessage(data)
	}
	if len(set) == 0 {
		return nil, nil
	}
	return set, nil
}

func readArg(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(stdin, 16<<20))
	}
	return os.ReadFile(name)
}

// lookup returns the answer for key, with the 2025-11-25 fallbacks.
func (s answerSet) lookup(key string) (json.RawMessage, bool) {
	if v, ok := s[key]; ok {
		return v, true
	}
	if v, ok := s["*"]; ok {
		return v, true
	}
	return nil, false
}

// inputRequest is the part of an input request (ElicitRequest, ListRootsRequest,
// CreateMessageRequest) the answer depends on.
type inputRequest struct {
	Method string `json:"method"`
	Params struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	} `json:"params"`
}

// response turns a user's answer into the response the spec defines for the request and
// checks it against the request's requestedSchema. A mismatch is a usage error naming the
// field.
func response(key string, req json.RawMessage, answer json.RawMessage) (json.RawMessage, error) {
	var r inputRequest
	_ = json.Unmarshal(req, &r)
	return responseFor(key, r.Method, r.Params.RequestedSchema, answer)
}

func responseFor(key, method string, schema, answer json.RawMessage) (json.RawMessage, error) {
	if method == "roots/list" && strings.Contains(string(answer), `"decline"`) {
		return json.RawMessage(`{"roots":[]}`), nil // declining roots is sharing none
	}
	if method != "" && method != "elicitation/create" {
		// roots/list and the rest: the answer is the result object as given.
		return answer, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(answer, &obj); err != nil {
		return nil, flagErrorf("answer %s: an elicitation answer must be a JSON object, either a response like {\"action\":\"accept\",\"content\":{…}} or the content itself", key)
	}
	if _, ok := obj["action"]; !ok {
		wrapped, _ := json.Marshal(map[string]any{"action": "accept", "content": obj})
		answer, obj = wrapped, map[string]json.RawMessage{"action": json.RawMessage(`"accept"`), "content": answer}
	}
	var action string
	_ = json.Unmarshal(obj["action"], &action)
	switch action {
	case "accept":
		// SEP-1034: omitted fields take the form's defaults before the answer is checked.
		answer = rpc.ElicitDefaults(schema, answer)
		obj = nil
		_ = json.Unmarshal(answer, &obj)
	case "decline", "cancel":
		return answer, nil
	default:
		return nil, flagErrorf("answer %s: action %q must be accept, decline or cancel", key, action)
	}
	if err := checkContent(obj["content"], schema); err != nil {
		return nil, flagErrorf("answer %s: %v", key, err)
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
	names := make([]string, 0, len(c))
	for k := range c {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
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

// answerOptions returns the client options that go with a set of answers: elicitation is
// declared (something can now answer), and on 2025-11-25 the elicitation/create requests that
// arrive while tasks/result is open are answered from the set (key "elicitation" or "*").
func answerOptions(opts rpc.ClientOptions, answers answerSet, warn func(string)) rpc.ClientOptions {
	if answers == nil {
		return opts
	}
	opts.Elicitation = true
	opts.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		if method != "elicitation/create" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask does not handle " + method}
		}
		var p struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		_ = json.Unmarshal(params, &p)
		ans, ok := answers.lookup("elicitation")
		if !ok {
			warn("the server asked a question and no --answer elicitation=… was given; cancelling it")
			return json.RawMessage(`{"action":"cancel"}`), nil
		}
		resp, err := responseFor("elicitation", method, p.RequestedSchema, ans)
		if err != nil {
			warn(err.Error() + "; cancelling the question")
			return json.RawMessage(`{"action":"cancel"}`), nil
		}
		return resp, nil
	}
	return opts
}
