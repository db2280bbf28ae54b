package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/follow/answerexec"
	"github.com/spf13/pflag"
)

// Answers to input requests given without a human: --answer KEY=VALUE (repeatable), --answers
// FILE, and a program that answers (--on-input exec:'command'). What they mean, and how they
// are checked against a question, is follow.Answers' and answerexec.Exec's; this file only
// reads the flags.

// AnswerFlags collects the answer flags of one command.
type AnswerFlags struct {
	Answer  []string
	Answers string
	// OnInput is what to do with a question no answer was given for: fail (exit 5 with the
	// questions as JSON on stdout), decline, prompt (the live view; needs a terminal), or
	// exec:COMMAND (a program answers each).
	OnInput string
}

// execPrefix starts an --on-input value that names a program.
const execPrefix = "exec:"

// AddFlags registers --answer, --answers and --on-input.
func (a *AnswerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&a.Answer, "answer", nil, "answer input request `KEY=JSON` or KEY=@file.json (repeatable; a KEY no question has matches the one question asking for exactly the fields it names); never prompts")
	fs.StringVar(&a.Answers, "answers", "", "answer input requests from a JSON object `FILE` of key -> response")
	fs.StringVar(&a.OnInput, "on-input", "", "`MODE` for unanswered questions: fail, decline, prompt (the default on a terminal, else fail), or exec:CMD (CMD answers each: the question as JSON on stdin, the answer on stdout)")
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
			return "", flagErrorf("--on-input prompt needs a terminal with a person at it (stdin and stdout are terminals, TERM is not dumb, CI and MCPTASK_NO_TUI are unset, no --json); use --answer, or --on-input fail|decline|exec:CMD")
		}
		return "prompt", nil
	}
	if strings.HasPrefix(a.OnInput, execPrefix) {
		return "exec", nil
	}
	return "", flagErrorf("--on-input %q: want fail, decline, prompt or exec:CMD", a.OnInput)
}

// none reports that nothing answers questions: no --answer, no --answers, no program.
func (a *AnswerFlags) none() bool {
	return len(a.Answer) == 0 && a.Answers == "" && !strings.HasPrefix(a.OnInput, execPrefix)
}

// parse reads the flags into what answers questions without a person: the answers given, by
// key (or by field names), then the program of --on-input exec (follow.Chain). It is nil when
// nothing does. stderr gets the program's stderr.
func (a *AnswerFlags) parse(stdin io.Reader, stderr io.Writer) (follow.Answerer, error) {
	given, err := a.given(stdin)
	if err != nil {
		return nil, err
	}
	return a.answerer(given, stderr)
}

// answerer is given followed by the program of --on-input exec, if any; nil when neither.
func (a *AnswerFlags) answerer(given follow.Answers, stderr io.Writer) (follow.Answerer, error) {
	command, ok := strings.CutPrefix(a.OnInput, execPrefix)
	if !ok {
		if given == nil {
			return nil, nil
		}
		return given, nil
	}
	argv, err := connect.SplitCommand(command)
	if err == nil && len(argv) == 0 {
		err = errors.New("no program given")
	}
	if err != nil {
		return nil, flagErrorf("--on-input %q: %v", a.OnInput, err)
	}
	x, err := answerexec.New(command, argv)
	if err != nil {
		return nil, flagErrorf("--on-input %q: %v", a.OnInput, err)
	}
	x.Stderr = stderr
	if given == nil {
		return execAnswerer{x}, nil
	}
	return follow.Chain{given, execAnswerer{x}}, nil
}

// execAnswerer is the program of --on-input exec. An answer it cannot give (the program failed,
// printed no JSON, or an answer that does not fit) leaves the question open and ends the
// follow of its task with exit 5, input required; nothing is sent for it.
type execAnswerer struct{ *answerexec.Exec }

// Answer implements follow.Answerer.
func (x execAnswerer) Answer(ctx context.Context, req follow.Request) (json.RawMessage, bool, error) {
	resp, ok, err := x.Exec.Answer(ctx, req)
	var xe *answerexec.Error
	if errors.As(err, &xe) {
		err = &ExitError{Code: ExitInputRequired, Err: err}
	}
	return resp, ok, err
}

// given reads the answers given up front (follow.Answers), with "*" for --on-input decline;
// nil when there are none. Bad JSON or a missing file is a usage error naming the key.
func (a *AnswerFlags) given(stdin io.Reader) (follow.Answers, error) {
	set := follow.Answers{}
	switch a.OnInput {
	case "", "fail", "decline", "prompt":
	default:
		if !strings.HasPrefix(a.OnInput, execPrefix) {
			return nil, flagErrorf("--on-input %q: want fail, decline, prompt or exec:CMD", a.OnInput)
		}
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
