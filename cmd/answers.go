package cmd

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/spf13/pflag"
)

// Answers to input requests given without a human: --answer KEY=VALUE (repeatable) and
// --answers FILE. What they mean, and how they are checked against a question, is
// follow.Answers'; this file only reads the flags.

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

// parse reads the flags into the answers the follow engine gives (follow.Answers). Bad JSON or
// a missing file is a usage error naming the key.
func (a *AnswerFlags) parse(stdin io.Reader) (follow.Answers, error) {
	set := follow.Answers{}
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
