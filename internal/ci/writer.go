package ci

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/mcptask/mcptask/internal/lines"
)

// Writer neutralises everything written through it for the job log of Sys, so that no line of
// it can be taken as a workflow command (GitHub) or a section marker (GitLab): mcptask's stdout
// and stderr go through one in a CI job, and its own commands (Log) go through Trusted. It
// holds a line until its end has come, because the runners read whole lines: a command split
// over two writes is still a command. Complete lines are passed on at once, so progress lines
// are not delayed; Flush passes on what is left.
//
// On GitHub a line that could be a command is handled in one of three ways:
//   - JSON set (--json, --jsonl on stdout), and any line of stderr that is JSON text: "##[" is
//     written "\u0023#[", the same string to any JSON reader (a JSON line never starts with
//     "::").
//   - Exact set (stdout, which carries results byte for byte): the lines are wrapped in a
//     ::stop-commands:: block with a random token (Neutralize), so the runner reads them as text
//     and the log shows them unchanged.
//   - Otherwise (stderr: progress, errors): the line is defused (Defuse), with a backslash the
//     way the runner defuses its own markers. Stderr never opens a stop-commands block: the
//     runner has one stop state for both streams and reads them in no fixed order, so a block on
//     each could overlap, and the first to end would end the other's pause.
type Writer struct {
	W     io.Writer
	Sys   System
	JSON  bool
	Exact bool

	mu   sync.Mutex
	held lines.Held
}

// Write implements io.Writer. It reports len(p) written once the complete lines of p are
// passed on; the rest waits for its line's end or Flush.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.Sys == None {
		return w.W.Write(p)
	}
	chunk := w.held.Add(p, w.lastLineEnd(p))
	if chunk == nil {
		return len(p), nil
	}
	if err := w.pass(chunk); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on a last line that has no end yet.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held.Empty() {
		return nil
	}
	return w.pass(w.held.Rest())
}

// Trusted returns a writer for mcptask's own workflow commands (Log): it writes as is, but
// never in the middle of what this Writer writes.
func (w *Writer) Trusted() io.Writer { return trusted{w} }

type trusted struct{ w *Writer }

func (t trusted) Write(p []byte) (int, error) {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	return t.w.W.Write(p)
}

func (w *Writer) pass(chunk []byte) error {
	_, err := io.WriteString(w.W, w.neutralize(string(chunk)))
	return err
}

func (w *Writer) neutralize(text string) string {
	if w.Sys != None {
		text = DefuseAgents(text, w.JSON)
	}
	switch w.Sys {
	case GitLab:
		return DefuseGitLab(text)
	case GitHub:
	default:
		return text
	}
	if !Dangerous(text) {
		return text
	}
	if w.Exact && !w.JSON {
		return Neutralize(GitHub, text)
	}
	return mapLines(text, func(line string) string {
		switch {
		case !dangerousLine(line):
		case w.JSON || jsonValid(line):
			line = defuseJSON(line)
			if commandStart().MatchString(line) { // not JSON after all (JSON never starts with "::")
				line = Defuse(line)
			}
		default:
			line = Defuse(line)
		}
		return line
	})
}

func jsonValid(line string) bool { return json.Valid([]byte(line)) }

// lastLineEnd is the index of the last byte of p that ends a line as the system's log parser
// reads lines, or -1. GitHub's runner ends a line at "\n" or a lone "\r" (a "\r" that ends p
// may be the first half of "\r\n", so it does not count yet); GitLab's at "\n" only, as a
// section marker holds a "\r".
func (w *Writer) lastLineEnd(p []byte) int {
	if w.Sys == GitLab {
		return bytes.LastIndexByte(p, '\n')
	}
	for i := len(p) - 1; i >= 0; i-- {
		switch p[i] {
		case '\n':
			return i
		case '\r':
			if i < len(p)-1 {
				return i
			}
		}
	}
	return -1
}

// Streams are a run's stdout and stderr as the job log of a CI system gets them. They are made
// once, when the run starts (Wrap), before its flags say which system it is in; until Start
// says, and outside CI, they pass everything on as is.
type Streams struct {
	// Out and Err are the streams the run writes to. Out is the stdout given to Wrap when that
	// is a terminal: a person's terminal is not a job log, and the live view's output is left
	// alone.
	Out, Err io.Writer

	out, err *Writer // nil out: stdout is a terminal
}

// Wrap puts out and errOut through neutralising Writers, out only when it is not a terminal.
// stdout carries results byte for byte (Exact); stderr is defused line by line.
func Wrap(out, errOut io.Writer, outIsTerminal bool) *Streams {
	s := &Streams{Out: out, err: &Writer{W: errOut}}
	if !outIsTerminal {
		s.out = &Writer{W: out, Exact: true}
		s.Out = s.out
	}
	s.Err = s.err
	return s
}

// Start makes the streams write for the job log of sys; json says that stdout carries JSON
// (--json, --jsonl). It is called once, when the flags are read, before anything is written.
func (s *Streams) Start(sys System, json bool) {
	if s.out != nil {
		s.out.mu.Lock()
		s.out.Sys, s.out.JSON = sys, json
		s.out.mu.Unlock()
	}
	s.err.mu.Lock()
	s.err.Sys = sys
	s.err.mu.Unlock()
}

// Log returns the writer of mcptask's own workflow commands (Log.W): stderr as it is, never in
// the middle of a line that stderr's Writer holds.
func (s *Streams) Log() io.Writer { return s.err.Trusted() }

// Flush passes on what the Writers hold (the last line of a result without a line end).
func (s *Streams) Flush() {
	if s.out != nil {
		_ = s.out.Flush()
	}
	_ = s.err.Flush()
}
