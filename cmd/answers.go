package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/follow/answerexec"
	"github.com/mcptask/mcptask/internal/follow/answerflags"
	"github.com/spf13/pflag"
)

// Answers to input requests given without a human: --answer KEY=VALUE (repeatable), --answers
// FILE, and a program that answers (--on-input exec:'command'). Reading them is
// internal/follow/answerflags'; this file registers the flags and gives their errors exit codes.

// AnswerFlags collects the answer flags of one command.
type AnswerFlags answerflags.Flags

// execPrefix starts an --on-input value that names a program.
const execPrefix = answerflags.ExecPrefix

// AddFlags registers --answer, --answers and --on-input.
func (a *AnswerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&a.Answer, "answer", nil, "answer input request `KEY=JSON` (or KEY=@file.json; repeatable)")
	fs.StringVar(&a.Answers, "answers", "", "answer input requests from `FILE`, a JSON object of key -> response")
	fs.StringVar(&a.OnInput, "on-input", "", "answer open questions by `MODE`: fail, decline, exec:CMD or prompt")
}

// onInput resolves --on-input against whether the live view can run (answerflags.Flags.Mode).
func (a *AnswerFlags) onInput(tty bool) (string, error) {
	mode, err := answerflags.Flags(*a).Mode(tty)
	return mode, answerFlagErr(err)
}

// none reports that nothing answers questions: no --answer, no --answers, no program.
func (a *AnswerFlags) none() bool { return answerflags.Flags(*a).None() }

// parse reads the flags into what answers questions without a person: the answers given, then
// the program of --on-input exec. It is nil when nothing does. stderr gets the program's stderr.
func (a *AnswerFlags) parse(stdin io.Reader, stderr io.Writer) (follow.Answerer, error) {
	given, err := a.given(stdin)
	if err != nil {
		return nil, err
	}
	return a.answerer(given, stderr)
}

// given reads the answers given up front (answerflags.Flags.Given).
func (a *AnswerFlags) given(stdin io.Reader) (follow.Answers, error) {
	given, err := answerflags.Flags(*a).Given(stdin)
	return given, answerFlagErr(err)
}

// answerer is given followed by the program of --on-input exec, if any; nil when neither.
func (a *AnswerFlags) answerer(given follow.Answers, stderr io.Writer) (follow.Answerer, error) {
	x, err := answerflags.Flags(*a).Program(stderr)
	if err != nil {
		return nil, answerFlagErr(err)
	}
	var program follow.Answerer
	if x != nil {
		program = execAnswerer{x}
	}
	return answerflags.Join(given, program), nil
}

// answerFlagErr makes answerflags' usage errors FlagErrors (exit 2, nothing sent).
func answerFlagErr(err error) error {
	if ue := (*exitcode.UsageError)(nil); errors.As(err, &ue) {
		return &FlagError{Err: ue.Err}
	}
	return err
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
