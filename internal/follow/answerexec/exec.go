// Package answerexec answers the questions tasks ask with a program the user names
// (--on-input exec:'command'): one run per question, the question as JSON on the program's
// stdin, the response it prints on stdout checked exactly as an --answer is before anything is
// sent. It is a follow.Answerer, so it slots into a follow.Chain after the answers given by
// key. It sits beside internal/follow rather than in it because the engine starts no processes
// (internal/follow TestLayers).
package answerexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/proc"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// DefaultTimeout bounds one run of the program: long enough for a script that asks another
// service, short enough that a program waiting on a terminal it does not have is noticed.
const DefaultTimeout = 60 * time.Second

// maxOutput caps what is read of the program's stdout: a response is a small JSON object, and
// a program that prints without end must not fill memory.
const maxOutput = 1 << 20

// tailSize is how much of the program's stderr an Error quotes.
const tailSize = 2048

// Exec is a program that answers questions, run without a shell (a user who wants one writes
// it: exec:'sh -c "…"'). Make it with New.
type Exec struct {
	command string
	argv    []string
	// Timeout bounds one run (DefaultTimeout when zero); past it the program's process group
	// is killed and the question stays unanswered.
	Timeout time.Duration
	// Stderr gets the program's stderr as it writes it (nil: dropped). It is the user's own
	// program, so it passes through as is; an Error quotes its last lines either way.
	Stderr io.Writer
	// Env is the environment the program starts with (nil: mcptask's own);
	// MCPTASK_TASK_ID and MCPTASK_INPUT_KEY are added to it.
	Env []string
	// one lets one run go at a time, so that a program need not guard against itself (a
	// thousand tasks asking at once do not start a thousand programs).
	one chan struct{}
}

// New returns the Exec that runs argv, without a shell: command is the command line argv was
// split from (the command layer splits it as it does --stdio), for messages.
func New(command string, argv []string) (*Exec, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no program given")
	}
	return &Exec{command: command, argv: argv, one: make(chan struct{}, 1)}, nil
}

// Command returns the command line as given.
func (x *Exec) Command() string { return x.command }

// Samples implements follow.Sampler: a program can answer sampling/createMessage, so the
// sampling capability is declared when one is given.
func (x *Exec) Samples() bool { return true }

// Input is the JSON document the program reads on stdin, one per question.
type Input struct {
	// Key is the question's key: the 2026-07-28 inputRequests key (or a multi-round-trip
	// tools/call's), "elicitation" or "sampling" for a 2025-11-25 request, which has none.
	Key string `json:"key"`
	// Method and Params are the request as the server sent it: elicitation/create,
	// sampling/createMessage or roots/list, with its params (message, requestedSchema, …).
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	// TaskID is the task that asks; empty for a tools/call that asks before it starts.
	TaskID string `json:"taskId"`
	// Tool and Server are the tool the task runs and its server.
	Tool   string `json:"tool"`
	Server string `json:"server"`
}

// Error is an answer from the program that cannot be sent: the program failed (did not start,
// exited non-zero, ran past its timeout), printed no JSON, or printed a response that does not
// fit the question. The question stays unanswered.
type Error struct {
	// Key is the question's key, Program the command as given.
	Key, Program string
	// Err is what went wrong.
	Err error
	// Stderr is the last lines the program wrote to stderr, on one line.
	Stderr string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("--on-input exec: question %s was not answered: the program %s %v", e.Key, e.Program, e.Err)
	if e.Stderr != "" {
		msg += "; its stderr ended with: " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Answer implements follow.Answerer: the program's response to req, checked as an --answer is
// (follow.Response: an object without "action" is the content of an accepted elicitation, and
// the content must fit requestedSchema). Every question gets an answer or an *Error; a ctx
// that ends first (the follow interrupted) is returned as is.
func (x *Exec) Answer(ctx context.Context, req follow.Request) (json.RawMessage, bool, error) {
	out, tail, err := x.run(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, x.fail(req, err, tail)
	}
	resp, err := follow.Response(req.Key, req.Method, req.Params, out)
	if err != nil {
		var ae *follow.AnswerError
		if errors.As(err, &ae) {
			err = ae.Err // the key is the Error's to name
		}
		return nil, false, x.fail(req, fmt.Errorf("printed an answer that does not fit the question: %w", err), tail)
	}
	return resp, true, nil
}

func (x *Exec) fail(req follow.Request, err error, tail []byte) *Error {
	return &Error{Key: req.Key, Program: "'" + x.command + "'", Err: err, Stderr: lastLines(tail)}
}

// run runs the program once for req and returns what it printed on stdout (trimmed, valid
// JSON) and the tail of its stderr.
func (x *Exec) run(ctx context.Context, req follow.Request) ([]byte, []byte, error) {
	select {
	case x.one <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-x.one }()

	doc, err := json.Marshal(Input{Key: req.Key, Method: req.Method, Params: req.Params, TaskID: req.TaskID, Tool: req.Tool, Server: req.Server})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot encode the question: %w", err)
	}
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, x.argv[0], x.argv[1:]...)
	proc.Group(cmd)
	// A program that left a child holding its stdout or stderr open is not waited for
	// long once it has exited or been killed.
	cmd.WaitDelay = 2 * time.Second
	cmd.Env = x.environ(req)
	cmd.Stdin = bytes.NewReader(append(doc, '\n'))
	stdout := &capped{max: maxOutput}
	cmd.Stdout = stdout
	tail := &tailBuffer{max: tailSize}
	cmd.Stderr = tail
	if x.Stderr != nil {
		cmd.Stderr = io.MultiWriter(x.Stderr, tail)
	}
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, tail.Bytes(), ctx.Err()
	case err != nil && rctx.Err() != nil:
		return nil, tail.Bytes(), fmt.Errorf("did not finish within %s and was killed", timeout)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, tail.Bytes(), fmt.Errorf("failed (%s)", ee.ProcessState)
		}
		return nil, tail.Bytes(), fmt.Errorf("could not run: %w", err)
	case stdout.over:
		return nil, tail.Bytes(), fmt.Errorf("printed more than %d bytes; want one JSON response", maxOutput)
	}
	out, err := response(stdout.buf.Bytes())
	return out, tail.Bytes(), err
}

// environ is the program's environment: the Exec's (or this process's), with the task id and
// the input key when they are plain.
func (x *Exec) environ(req follow.Request) []string {
	env := x.Env
	if env == nil {
		env = os.Environ()
	}
	// The task id and the key are the server's words: the environment gets them only when
	// they are plain (an id rpc.CheckTaskID takes, a key termsafe leaves as it is and within
	// its bound), so that no control character reaches a script raw (SECURITY.md, class 8);
	// the question on stdin carries both exactly, as JSON.
	out := env[:len(env):len(env)]
	if req.TaskID == "" || rpc.CheckTaskID(req.TaskID) == nil {
		out = append(out, "MCPTASK_TASK_ID="+req.TaskID)
	}
	if req.Key == termsafe.Line(termsafe.Cut(req.Key)) {
		out = append(out, "MCPTASK_INPUT_KEY="+req.Key)
	}
	return out
}

// response checks what the program printed on stdout: one JSON object, returned trimmed.
func response(printed []byte) ([]byte, error) {
	out := bytes.TrimSpace(printed)
	switch {
	case len(out) == 0:
		return nil, errors.New("printed nothing; want the response as JSON on stdout")
	case !json.Valid(out):
		return nil, fmt.Errorf("printed something that is not JSON: %s", clip(out, 120))
	case out[0] != '{':
		return nil, fmt.Errorf("printed %s; want a JSON object", clip(out, 120))
	}
	return out, nil
}

// capped keeps the first max bytes written to it and notes that more came.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return t.buf }

// lastLines renders the last few non-blank lines of a program's stderr on one line, without
// control characters, for an error message.
func lastLines(b []byte) string {
	var lines []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l = strings.TrimSpace(printable(l)); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// clip renders b on one line, cut to n runes.
func clip(b []byte, n int) string {
	s := []rune(printable(string(b)))
	if len(s) > n {
		return string(s[:n]) + "…"
	}
	return string(s)
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return -1
		}
		return r
	}, s)
}
