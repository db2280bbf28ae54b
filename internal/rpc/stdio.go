package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// StdioOptions configures a StdioTransport.
type StdioOptions struct {
	// Argv is the server command and its arguments.
	Argv []string
	// Dir is the working directory ("" = mcptask's own).
	Dir string
	// Env holds extra KEY=VALUE pairs added to mcptask's environment.
	Env []string
	// Trace receives the --trace log, including the server's stderr.
	Trace *TraceOptions
	// MaxLineBytes caps one stdout line (default 16 MiB).
	MaxLineBytes int
	// StderrBytes is how much of the server's latest stderr is kept for error messages (8 KiB).
	StderrBytes int
	// ShutdownWait is how long Close waits after closing stdin and after SIGTERM (2 s each).
	ShutdownWait time.Duration
}

// StdioTransport runs an MCP server as a child process and speaks newline-delimited JSON-RPC
// on its stdin and stdout (C25-TRANS §stdio, C26-STDIO). One reader goroutine routes the
// server's lines: responses to their waiting request, requests and notifications to the
// Handler. The server's stderr is kept (the latest few KiB) so that an early exit is reported
// with what the server said.
type StdioTransport struct {
	cmd   *exec.Cmd
	argv0 string
	trace *tracer
	wait  time.Duration
	maxL  int

	wmu   sync.Mutex
	stdin io.WriteCloser

	mu      sync.Mutex
	pending map[string]chan *Message
	handler Handler
	closed  bool
	exitErr error

	stderr *ring
	// done is closed when the process has exited and stdout is drained.
	done chan struct{}
	// readErr is a fatal error of the reader (a line over the cap), reported to waiters.
	readErr error
}

// NewStdioTransport starts the server. The process belongs to the transport, not to ctx: it
// lives until Close, so that a cancelled request does not kill a server that holds tasks.
func NewStdioTransport(ctx context.Context, opts StdioOptions) (*StdioTransport, error) {
	if len(opts.Argv) == 0 || opts.Argv[0] == "" {
		return nil, errors.New("empty --stdio command")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(opts.Argv[0], opts.Argv[1:]...)
	cmd.Dir = opts.Dir
	if len(opts.Env) > 0 {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	setProcessGroup(cmd)
	t := &StdioTransport{
		cmd:     cmd,
		argv0:   opts.Argv[0],
		trace:   newTracer(opts.Trace),
		wait:    opts.ShutdownWait,
		maxL:    opts.MaxLineBytes,
		pending: map[string]chan *Message{},
		stderr:  newRing(opts.StderrBytes),
		done:    make(chan struct{}),
	}
	if t.wait <= 0 {
		t.wait = 2 * time.Second
	}
	if t.maxL <= 0 {
		t.maxL = DefaultMaxLineBytes
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	t.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var errDone sync.WaitGroup
	errDone.Add(1)
	go func() {
		defer errDone.Done()
		t.copyStderr(stderr)
	}()
	go func() {
		t.read(stdout)
		// Wait for stderr to be drained so the exit error can quote it.
		errDone.Wait()
		werr := cmd.Wait()
		t.finish(werr)
	}()
	return t, nil
}

// Pid returns the server's process id.
func (t *StdioTransport) Pid() int { return t.cmd.Process.Pid }

// Done is closed when the server process has exited.
func (t *StdioTransport) Done() <-chan struct{} { return t.done }

// SetHandler implements Transport.
func (t *StdioTransport) SetHandler(h Handler) { t.mu.Lock(); t.handler = h; t.mu.Unlock() }

// Notef writes one explanatory line to the --trace log, when there is one.
func (t *StdioTransport) Notef(format string, args ...any) { t.trace.printf("# "+format+"\n", args...) }

func (t *StdioTransport) copyStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			t.stderr.Write(line)
			if t.trace != nil {
				t.trace.printf("stderr| %s\n", termsafe.Line(strings.TrimRight(string(line), "\r\n")))
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// read is the reader goroutine: one JSON-RPC message per line.
func (t *StdioTransport) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !skipping {
			if len(buf)+len(chunk) > t.maxL+1 {
				// A line beyond the cap: drop it, and fail whatever is waiting, since that
				// line was most likely its response.
				t.failPending(fmt.Errorf("%w: a line from the server exceeded %d bytes", ErrTooLarge, t.maxL))
				buf, skipping = buf[:0], true
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && skipping {
			skipping = false
			continue
		}
		if len(bytes.TrimSpace(buf)) > 0 {
			t.dispatch(buf)
		}
		buf = buf[:0]
		if err != nil {
			return
		}
	}
}

func (t *StdioTransport) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	t.trace.frame("<", "", line)
	m, err := DecodeMessage(line)
	if err != nil {
		// C25-TRANS §stdio: the server MUST NOT write anything but MCP messages to stdout.
		// One bad line is reported in the trace and skipped, not fatal.
		t.trace.printf("! ignoring a line that is not JSON-RPC: %s\n", termsafe.Line(err.Error()))
		return
	}
	switch {
	case m.IsResponse():
		t.mu.Lock()
		ch := t.pending[m.IDKey()]
		delete(t.pending, m.IDKey())
		t.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.IsRequest():
		// Requests run on their own goroutine: answering one may wait for a person (an
		// elicitation in the TUI), and responses must keep flowing meanwhile.
		go t.answer(m)
	default:
		t.mu.Lock()
		h := t.handler
		t.mu.Unlock()
		if h != nil {
			h(context.Background(), m)
		}
	}
}

func (t *StdioTransport) answer(m *Message) {
	t.mu.Lock()
	h := t.handler
	t.mu.Unlock()
	resp := &Message{Error: &Error{Code: CodeMethodNotFound, Message: "mcptask does not handle " + m.Method}}
	if h != nil {
		if resp = h(context.Background(), m); resp == nil {
			return // left unanswered (NoResponse)
		}
	}
	resp.JSONRPC, resp.ID, resp.Method = "2.0", m.ID, ""
	_ = t.write(resp)
}

func (t *StdioTransport) failPending(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.readErr = err
	for k, ch := range t.pending {
		close(ch)
		delete(t.pending, k)
	}
}

// finish records the exit and wakes every waiter.
func (t *StdioTransport) finish(werr error) {
	t.mu.Lock()
	closing := t.closed
	var b strings.Builder
	b.WriteString(t.argv0)
	if werr != nil {
		fmt.Fprintf(&b, " (%v)", werr)
	}
	if tail := strings.TrimSpace(t.stderr.String()); tail != "" && !closing {
		b.WriteString("; its stderr ended with:\n")
		b.WriteString(termsafe.String(tail))
	}
	t.exitErr = fmt.Errorf("%w: %s", ErrServerExited, b.String())
	for k, ch := range t.pending {
		close(ch)
		delete(t.pending, k)
	}
	t.mu.Unlock()
	close(t.done)
}

// write sends one message as one line.
func (t *StdioTransport) write(m *Message) error {
	data, err := m.Encode()
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	t.trace.frame(">", "", data)
	data = append(data[:len(data):len(data)], '\n') // never into the spare room of a built message
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if _, err := t.stdin.Write(data); err != nil {
		select {
		case <-t.done:
			return t.exited()
		default:
		}
		return fmt.Errorf("%w: writing to %s: %v", ErrTransport, t.argv0, err)
	}
	return nil
}

func (t *StdioTransport) exited() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exitErr != nil {
		return t.exitErr
	}
	return ErrServerExited
}

// RoundTrip implements Transport. hdr is ignored: stdio has no header layer.
func (t *StdioTransport) RoundTrip(ctx context.Context, req *Message, _ http.Header) (*Message, error) {
	key := req.IDKey()
	ch := make(chan *Message, 1)
	t.mu.Lock()
	switch {
	case t.closed:
		t.mu.Unlock()
		return nil, ErrClosed
	case t.exitErr != nil:
		err := t.exitErr
		t.mu.Unlock()
		return nil, err
	}
	t.pending[key] = ch
	t.mu.Unlock()
	if err := t.write(req); err != nil {
		t.mu.Lock()
		delete(t.pending, key)
		t.mu.Unlock()
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if ok {
			return m, nil
		}
		t.mu.Lock()
		err := t.readErr
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return nil, t.exited()
	case <-ctx.Done():
		t.mu.Lock()
		delete(t.pending, key)
		t.mu.Unlock()
		// C26-STDIO / C25-CANCEL: an abandoned request is cancelled with
		// notifications/cancelled (never initialize; task cancellation uses tasks/cancel).
		if req.Method != "initialize" {
			params, _ := json.Marshal(map[string]any{"requestId": req.ID, "reason": "client gave up waiting"})
			_ = t.write(&Message{JSONRPC: "2.0", Method: "notifications/cancelled", Params: params})
		}
		return nil, ctx.Err()
	}
}

// Send implements Transport.
func (t *StdioTransport) Send(ctx context.Context, msg *Message, _ http.Header) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return t.write(msg)
}

// Close shuts the server down as C25-LIFE §Shutdown says: close its stdin, wait for it to
// exit, then SIGTERM, then SIGKILL.
func (t *StdioTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		<-t.done
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.wmu.Lock()
	_ = t.stdin.Close()
	t.wmu.Unlock()
	for _, sig := range []os.Signal{nil, sigterm, os.Kill} {
		if sig != nil {
			_ = t.cmd.Process.Signal(sig)
		}
		timer := time.NewTimer(t.wait)
		select {
		case <-t.done:
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
	<-t.done
	return nil
}

// ring keeps the last n bytes written to it.
type ring struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newRing(n int) *ring {
	if n <= 0 {
		n = 8 << 10
	}
	return &ring{n: n}
}

func (r *ring) Write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.n {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.n:]...)
	}
}

func (r *ring) String() string { r.mu.Lock(); defer r.mu.Unlock(); return string(r.buf) }
