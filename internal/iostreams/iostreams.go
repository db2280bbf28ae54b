// Package iostreams is the one place that knows whether mcptask talks to a terminal, and the
// one policy for "a person is at the terminal" (STYLE.md §3): the commands, the live view and
// the login all ask IOStreams. It is a package of its own, as in the GitHub CLI, so that
// nothing below the commands needs cmd to learn it, and tests replace the answers in one place.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// IOStreams is the one place that knows whether mcptask talks to a terminal. Every command
// asks it rather than calling isatty itself, and tests override the answers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	// width and height, when set, fix the terminal size (tests; a real terminal reports its own).
	width, height int
}

// System returns streams on the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  term.IsTerminal(os.Stdin.Fd()),
		stdoutTTY: term.IsTerminal(os.Stdout.Fd()),
		stderrTTY: term.IsTerminal(os.Stderr.Fd()),
	}
}

// Test returns streams on buffers, with no terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether a person is at the terminal to see the live view and answer its
// questions there: stdin and stdout are terminals (the view reads the one and draws on the
// other), the terminal can draw (TERM is not dumb), and the run's environment neither turns
// the view off (MCPTASK_NO_TUI) nor says this is a CI job (CI). getenv is the run's
// environment (the Factory's Getenv, which tests inject). mcptask never draws the view or prompts
// otherwise (STYLE.md §3).
func (s *IOStreams) CanPrompt(getenv func(string) string) bool {
	return s.personAt(s.stdoutTTY, getenv) && getenv("TERM") != "dumb" && getenv("MCPTASK_NO_TUI") == ""
}

// CanLogin reports whether a person is at the terminal to log in at a browser: stdin and
// stderr are terminals and CI is unset. The login shows its URL and waits on stderr, so the
// results may go to a pipe or a file while the person logs in.
func (s *IOStreams) CanLogin(getenv func(string) string) bool {
	return s.personAt(s.stderrTTY, getenv)
}

// personAt is mcptask's one test of "a person is at the terminal", reading an output whose
// terminal-ness is out: they can type (stdin is a terminal), they see that output, and the
// environment does not say this is a CI job. CanPrompt and CanLogin differ only in the output.
func (s *IOStreams) personAt(out bool, getenv func(string) string) bool {
	return s.stdinTTY && out && getenv("CI") == ""
}

// SetTTY overrides the terminal answers (tests).
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

// SetSize fixes the terminal size the live view assumes (tests drive it without a terminal).
func (s *IOStreams) SetSize(w, h int) { s.width, s.height = w, h }

// Size returns the fixed terminal size, or zeros when the terminal reports its own.
func (s *IOStreams) Size() (int, int) { return s.width, s.height }

// DefaultWidth is the width text is laid out for when stdout is not a terminal (a pipe, a
// file, the generated reference): fixed, so that the text is the same wherever it is made.
const DefaultWidth = 80

// Width is the number of columns text on stdout is laid out for (help): the fixed size when
// set, the terminal's own on a terminal, DefaultWidth otherwise.
func (s *IOStreams) Width() int {
	if s.width > 0 {
		return s.width
	}
	if s.stdoutTTY {
		if w, _, err := term.GetSize(os.Stdout.Fd()); err == nil && w > 0 {
			return w
		}
	}
	return DefaultWidth
}
