// Package answerflags reads what a person gives on the command line to answer the questions
// tasks ask, --answer KEY=JSON (or KEY=@file.json), --answers FILE and --on-input MODE, into
// the engine's answer sources: follow.Answers for the answers given up front (with "*" for
// --on-input decline) and an answerexec.Exec for --on-input exec:CMD. What an answer means and
// how it is checked against a question is follow.Answers' and answerexec.Exec's; this package
// only reads the values, so that every command (call, result, watch, resume, update, the
// proxy's bridge) reads them the same way and the rules are tested without a command. It sits
// beside internal/follow, not in it, because it builds an answerexec.Exec, which starts
// processes (internal/follow TestLayers), and answerexec imports follow.
package answerflags

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/follow/answerexec"
)

// ExecPrefix starts an --on-input value that names a program.
const ExecPrefix = "exec:"

// MaxStdin bounds what --answers - and --answer KEY=@- read from stdin.
const MaxStdin = 16 << 20

// Flags are the values of one command's answer flags.
type Flags struct {
	Answer  []string
	Answers string
	// OnInput is what to do with a question no answer was given for: fail (exit 5 with the
	// questions as JSON on stdout), decline, prompt (the live view; needs a terminal), or
	// exec:COMMAND (a program answers each).
	OnInput string
}

// Mode resolves --on-input against whether the live view can run (tty): "prompt", "fail",
// "decline" or "exec". Without --on-input it is prompt on a terminal, else fail.
func (a Flags) Mode(tty bool) (string, error) {
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
			return "", exitcode.Usagef("--on-input prompt needs a terminal with a person at it (stdin and stdout are terminals, TERM is not dumb, CI and MCPTASK_NO_TUI are unset, no --json); use --answer, or --on-input fail|decline|exec:CMD")
		}
		return "prompt", nil
	}
	if strings.HasPrefix(a.OnInput, ExecPrefix) {
		return "exec", nil
	}
	return "", exitcode.Usagef("--on-input %q: want fail, decline, prompt or exec:CMD", a.OnInput)
}

// None reports that nothing answers questions: no --answer, no --answers, no program.
func (a Flags) None() bool {
	return len(a.Answer) == 0 && a.Answers == "" && !strings.HasPrefix(a.OnInput, ExecPrefix)
}

// Given reads the answers given up front, with "*" for --on-input decline; nil when there are
// none. --answers and --answer read "-" (or @-) from stdin. Bad JSON, a missing file or an
// unknown --on-input is a exitcode.UsageError naming the key or the flag.
func (a Flags) Given(stdin io.Reader) (follow.Answers, error) {
	set := follow.Answers{}
	switch a.OnInput {
	case "", "fail", "decline", "prompt":
	default:
		if !strings.HasPrefix(a.OnInput, ExecPrefix) {
			return nil, exitcode.Usagef("--on-input %q: want fail, decline, prompt or exec:CMD", a.OnInput)
		}
	}
	if a.OnInput == "decline" {
		// Any question without an answer of its own is declined.
		set["*"] = json.RawMessage(`{"action":"decline"}`)
	}
	if a.Answers != "" {
		data, err := readArg(a.Answers, stdin)
		if err != nil {
			return nil, exitcode.Usagef("--answers %s: %v", a.Answers, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, exitcode.Usagef("--answers %s must be a JSON object of key -> response: %v", a.Answers, err)
		}
		for k, v := range m {
			set[k] = v
		}
	}
	for _, kv := range a.Answer {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exitcode.Usagef("--answer %q: want KEY=JSON or KEY=@file.json", kv)
		}
		data := []byte(v)
		if strings.HasPrefix(v, "@") {
			var err error
			if data, err = readArg(v[1:], stdin); err != nil {
				return nil, exitcode.Usagef("--answer %s: %v", k, err)
			}
		}
		if !json.Valid(data) {
			return nil, exitcode.Usagef("--answer %s: the value is not valid JSON (quote strings: --answer %s='\"text\"')", k, k)
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
		return io.ReadAll(io.LimitReader(stdin, MaxStdin))
	}
	return os.ReadFile(name)
}

// Program is the program of --on-input exec:CMD, its stderr going to stderr; nil without one.
// A command line that does not split into a program is a exitcode.UsageError.
func (a Flags) Program(stderr io.Writer) (*answerexec.Exec, error) {
	command, ok := strings.CutPrefix(a.OnInput, ExecPrefix)
	if !ok {
		return nil, nil
	}
	argv, err := connect.SplitCommand(command)
	if err == nil && len(argv) == 0 {
		err = errors.New("no program given")
	}
	if err != nil {
		return nil, exitcode.Usagef("--on-input %q: %v", a.OnInput, err)
	}
	x, err := answerexec.New(command, argv)
	if err != nil {
		return nil, exitcode.Usagef("--on-input %q: %v", a.OnInput, err)
	}
	x.Stderr = stderr
	return x, nil
}

// Join is what answers questions without a person: the answers given, then the program
// (follow.Chain); either may be nil, and it is nil when both are.
func Join(given follow.Answers, program follow.Answerer) follow.Answerer {
	switch {
	case program == nil && given == nil:
		return nil
	case program == nil:
		return given
	case given == nil:
		return program
	}
	return follow.Chain{given, program}
}
