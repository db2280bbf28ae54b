package spectest

// This file validates a stdio connection: newline-delimited JSON-RPC frames, both ways. The
// Recorder does the same for HTTP; on stdio there is no request/response pairing to lean on,
// so a Stream remembers the id, method and era of every request to read the answer by them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// Stream validates the frames of one stdio connection: what the client wrote (Client) and
// what the server wrote (Server). Feed it in the order the frames were read and written (the
// server reads a request before it answers it), or wrap the server's stdin and stdout with
// ClientReader and ServerWriter, which do that.
type Stream struct {
	V *Validator
	// ServerOnly skips the validation of what the client sent: for tests that send malformed
	// frames on purpose and check the server's answer to them.
	ServerOnly bool
	// OnError, when set, gets every failure as it is found (a child process writes them to
	// a file at once, since it may be killed at any moment).
	OnError func(string)

	mu      sync.Mutex
	era     string               // of the client's latest request
	pending map[string][2]string // client request id -> era, method
	asked   map[string]string    // server request id -> method (2025-11-25)
	frames  int
	errs    []string
}

// frame is what a Stream reads of any message.
type frame struct {
	Method *string          `json:"method"`
	ID     json.RawMessage  `json:"id"`
	Error  *json.RawMessage `json:"error"`
	Params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// streamIDKey is a canonical form of a JSON-RPC id ("7" and 7 stay distinct).
func streamIDKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil || v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Stream) fail(msg string) {
	s.errs = append(s.errs, msg)
	if s.OnError != nil {
		s.OnError(msg)
	}
}

// Client validates one frame the client wrote (without its newline).
func (s *Stream) Client(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || s.V == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frames++
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		if !s.ServerOnly {
			s.fail(fmt.Sprintf("client sent a frame that is not a JSON-RPC object: %v\n  frame: %s", err, clip(line)))
		}
		return
	}
	respondsTo := ""
	switch {
	case f.Method != nil && len(f.ID) > 0:
		era, method := requestEra(line)
		if s.pending == nil {
			s.pending = map[string][2]string{}
		}
		s.pending[streamIDKey(f.ID)] = [2]string{era, method}
		s.era = era
	case f.Method == nil:
		respondsTo = s.asked[streamIDKey(f.ID)]
		delete(s.asked, streamIDKey(f.ID))
	}
	if s.ServerOnly {
		return
	}
	if err := s.V.Message(line, respondsTo); err != nil {
		name := respondsTo
		if f.Method != nil {
			name = *f.Method
		}
		s.fail(fmt.Sprintf("client sent: %s: %v\n  frame: %s", name, err, clip(line)))
	}
}

// Server validates one frame the server wrote (without its newline): a response by the era
// and method of the request it answers, a notification or request by the era of the client's
// latest request (2026-07-28 when it carries a subscription id).
func (s *Stream) Server(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || s.V == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frames++
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		s.fail(fmt.Sprintf("server sent a frame that is not a JSON-RPC object: %v\n  frame: %s", err, clip(line)))
		return
	}
	era, method := s.era, ""
	if era == "" {
		era = EraLegacy
	}
	switch {
	case f.Method == nil:
		key := streamIDKey(f.ID)
		req, ok := s.pending[key]
		delete(s.pending, key)
		if ok {
			era, method = req[0], req[1]
		} else if f.Error == nil {
			s.fail(fmt.Sprintf("server sent a result for id %s, which no request of the client's carries\n  frame: %s", f.ID, clip(line)))
			return
		}
	case len(f.ID) > 0:
		if s.asked == nil {
			s.asked = map[string]string{}
		}
		s.asked[streamIDKey(f.ID)] = *f.Method
	default:
		if _, ok := f.Params.Meta["io.modelcontextprotocol/subscriptionId"]; ok {
			era = EraModern
		}
	}
	if err := s.V.ServerMessage(era, method, line); err != nil {
		name := method
		if f.Method != nil {
			name = *f.Method
		}
		s.fail(fmt.Sprintf("server sent: %s (%s): %v\n  frame: %s", name, era, err, clip(line)))
	}
}

// Frames counts the frames seen so far, both ways.
func (s *Stream) Frames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}

// Errors returns the validation failures seen so far, one per frame.
func (s *Stream) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// Check fails t for every frame that did not validate.
func (s *Stream) Check(t testing.TB) {
	t.Helper()
	for _, e := range s.Errors() {
		t.Errorf("stdio frame does not match the spec schema: %s", e)
	}
}

// ClientReader returns r (the server's stdin), validating each frame as the server reads it.
// The bytes pass unchanged. A last line without its newline is no frame and is not checked.
func (s *Stream) ClientReader(r io.Reader) io.Reader {
	return &teeReader{r: r, lines: lineSplitter{fn: s.Client}}
}

// ServerWriter returns w (the server's stdout), validating each frame the server writes. The
// bytes pass unchanged.
func (s *Stream) ServerWriter(w io.Writer) io.Writer {
	return &teeWriter{w: w, lines: lineSplitter{fn: s.Server}}
}

type lineSplitter struct {
	mu  sync.Mutex
	buf []byte
	fn  func([]byte)
}

func (l *lineSplitter) feed(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return
		}
		l.fn(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

type teeReader struct {
	r     io.Reader
	lines lineSplitter
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.lines.feed(p[:n])
	return n, err
}

type teeWriter struct {
	w     io.Writer
	lines lineSplitter
}

func (t *teeWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.lines.feed(p[:n])
	return n, err
}

// ChildStream is the Stream of a test's child process that serves stdio (the demo server
// started by mcptask, by a proxy, or by a TypeScript host): it validates with the schemas in
// dir and appends every failure to the file log as it is found, where the test that started
// the child reads it with CheckLog. When the schemas cannot be loaded, that is the failure
// logged, and nothing is validated.
func ChildStream(dir, log string, serverOnly bool) *Stream {
	appendLog := func(msg string) {
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "spectest: %v\n", err)
			return
		}
		// One record per failure, ended by a NUL line: failures span several lines.
		fmt.Fprintf(f, "%s\n\x00\n", msg)
		f.Close()
	}
	s := &Stream{ServerOnly: serverOnly, OnError: appendLog}
	v, err := New(dir)
	if err != nil {
		appendLog(fmt.Sprintf("the child could not load the schemas from %s: %v", dir, err))
		return &Stream{} // validates nothing: the failure above fails the test
	}
	s.V = v
	return s
}

// ReadLog returns the failures children logged to log (none when it does not exist).
func ReadLog(log string) ([]string, error) {
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rec := range strings.Split(string(b), "\n\x00\n") {
		if strings.TrimSpace(rec) != "" {
			out = append(out, rec)
		}
	}
	return out, nil
}

// CheckLog fails t for every failure a child logged to log.
func CheckLog(t testing.TB, log string) {
	t.Helper()
	errs, err := ReadLog(log)
	if err != nil {
		t.Errorf("spectest: %v", err)
	}
	for _, e := range errs {
		t.Errorf("a stdio frame does not match the spec schema: %s", e)
	}
}
