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
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
)

// Tests of the transports against scripted loopback servers and real child processes.

func req(id int64, method string) *Message {
	return &Message{JSONRPC: "2.0", ID: IntID(id), Method: method, Params: json.RawMessage(`{}`)}
}

func newHTTP(t *testing.T, h http.HandlerFunc, opts HTTPOptions) (*HTTPTransport, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr, err := NewHTTPTransport(srv.URL+"/mcp", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, srv
}

func TestHTTPJSONAndHeaders(t *testing.T) {
	var got http.Header
	tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
	}, HTTPOptions{Header: http.Header{"X-Api-Key": {"k"}}})
	m, err := tr.RoundTrip(t.Context(), req(1, "ping"), http.Header{"Mcp-Method": {"ping"}})
	if err != nil || string(m.Result) != `{"ok":true}` {
		t.Fatalf("%v %v", m, err)
	}
	if a := got.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
		t.Errorf("Accept %q must list both types", a)
	}
	if got.Get("Content-Type") != "application/json" || got.Get("X-Api-Key") != "k" || got.Get("Mcp-Method") != "ping" {
		t.Errorf("headers %v", got)
	}
}

func TestHTTPSSEWithServerRequestAndNotification(t *testing.T) {
	var mu sync.Mutex
	var answered []string
	tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost {
			return // the DELETE that ends the session when the test closes the transport
		}
		m, _ := DecodeMessage(body)
		if m.IsResponse() {
			mu.Lock()
			answered = append(answered, string(body)+"|"+r.Header.Get("Mcp-Session-Id")+"|"+r.Header.Get("Mcp-Protocol-Version"))
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		// Only the response carrying the InitializeResult assigns a session (C25-TRANS);
		// this header on another response must not replace the session in use.
		w.Header().Set("Mcp-Session-Id", "not-a-new-session")
		// A priming event, a comment, CRLF and CR line ends, an event of another type, a
		// multi-line data field, a notification, a server request, then the response.
		io.WriteString(w, "id: 1\r\ndata:\r\n\r\n")
		io.WriteString(w, ": keep-alive\n\n")
		io.WriteString(w, "event: other\ndata: {\"ignored\":true}\n\n")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\rdata: \"method\":\"notifications/progress\",\"params\":{}}\r\r")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"elicitation/create\",\"params\":{}}\n\n")
		io.WriteString(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"done\":1}}\n\n")
	}, HTTPOptions{})
	var notes []string
	tr.SetHandler(func(ctx context.Context, m *Message) *Message {
		notes = append(notes, m.Method)
		if m.IsRequest() {
			return &Message{Result: json.RawMessage(`{"action":"decline"}`)}
		}
		return nil
	})
	tr.SetSessionID("sess-1")
	m, err := tr.RoundTrip(t.Context(), req(7, "tasks/result"), http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
	if err != nil || string(m.Result) != `{"done":1}` {
		t.Fatalf("%v %v", m, err)
	}
	if strings.Join(notes, ",") != "notifications/progress,elicitation/create" {
		t.Errorf("handler saw %v", notes)
	}
	if tr.SessionID() != "sess-1" {
		t.Errorf("session %q: a tasks/result response replaced the session", tr.SessionID())
	}
	if len(answered) != 1 || !strings.Contains(answered[0], `"id":"s1"`) || !strings.Contains(answered[0], `"action":"decline"`) ||
		!strings.HasSuffix(answered[0], "|sess-1|2025-11-25") {
		t.Errorf("the server request must be answered by a POST with its id, the session and the version: %v", answered)
	}
}

func TestHTTPStatusHandling(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		hdr     map[string]string
		body    string
		session string
		check   func(*testing.T, *Message, error)
	}{
		{"400 with id null is a message", 400, nil, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: no session"},"id":null}`, "",
			func(t *testing.T, m *Message, err error) {
				if err != nil || m == nil || m.Error == nil || m.Error.Code != -32000 || m.Error.HTTPStatus != 400 {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"404 with a session expires it", 404, nil, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, "old",
			func(t *testing.T, m *Message, err error) {
				if !errors.Is(err, ErrSessionExpired) {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"404 without a session is the JSON-RPC error", 404, nil, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`, "",
			func(t *testing.T, m *Message, err error) {
				if err != nil || m.Error == nil || m.Error.Code != CodeMethodNotFound {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"401 is auth", 401, map[string]string{"WWW-Authenticate": "Bearer"}, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"}}`, "",
			func(t *testing.T, m *Message, err error) {
				if !errors.Is(err, ErrAuth) {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"403 is auth", 403, nil, `Forbidden`, "",
			func(t *testing.T, m *Message, err error) {
				if !errors.Is(err, ErrAuth) {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"503 keeps Retry-After", 503, map[string]string{"Retry-After": "7"}, `busy`, "",
			func(t *testing.T, m *Message, err error) {
				var he *HTTPError
				if !errors.As(err, &he) || he.RetryAfter != 7*time.Second || !errors.Is(err, ErrTransport) {
					t.Errorf("got %+v %v", m, err)
				}
			}},
		{"garbage body is malformed", 200, map[string]string{"Content-Type": "application/json"}, `<html>oops</html>`, "",
			func(t *testing.T, m *Message, err error) {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("got %+v %v", m, err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.hdr {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}, HTTPOptions{})
			tr.SetSessionID(c.session)
			m, err := tr.RoundTrip(t.Context(), req(1, "x"), nil)
			c.check(t, m, err)
		})
	}
}

func TestHTTPSizeCaps(t *testing.T) {
	big := strings.Repeat("x", 4096)
	t.Run("body", func(t *testing.T) {
		tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"s":"%s"}}`, big)
		}, HTTPOptions{MaxBodyBytes: 1024})
		if _, err := tr.RoundTrip(t.Context(), req(1, "x"), nil); !errors.Is(err, ErrTooLarge) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("sse line", func(t *testing.T) {
		tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", big)
		}, HTTPOptions{MaxLineBytes: 1024})
		if _, err := tr.RoundTrip(t.Context(), req(1, "x"), nil); !errors.Is(err, ErrTooLarge) {
			t.Errorf("got %v", err)
		}
	})
}

func TestHTTPStreamBrokenAndResumed(t *testing.T) {
	t.Run("no ids: lost", func(t *testing.T) {
		tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		}, HTTPOptions{})
		if _, err := tr.RoundTrip(t.Context(), req(1, "tasks/get"), nil); !errors.Is(err, ErrStreamBroken) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("ids: GET with Last-Event-ID", func(t *testing.T) {
		var lastID string
		tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			if r.Method == http.MethodGet {
				lastID = r.Header.Get("Last-Event-Id")
				io.WriteString(w, "id: 6\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
				return
			}
			io.WriteString(w, "id: 5\nretry: 1\ndata:\n\n")
		}, HTTPOptions{})
		tr.SetSessionID("s")
		m, err := tr.RoundTrip(t.Context(), req(1, "tasks/result"), nil)
		if err != nil || m.Result == nil || lastID != "5" {
			t.Errorf("got %v %v, Last-Event-ID %q", m, err, lastID)
		}
	})
}

func TestHTTPCancelEndlessStream(t *testing.T) {
	started := make(chan struct{})
	tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		close(started)
		for {
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}, HTTPOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := tr.RoundTrip(ctx, req(1, "x"), nil); done <- err }()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RoundTrip did not return after cancel")
	}
}

func TestHTTPCloseDeletesSessionUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var deletes []string
		var mu sync.Mutex
		tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				mu.Lock()
				deletes = append(deletes, r.Header.Get("Mcp-Session-Id"))
				mu.Unlock()
			}
			w.WriteHeader(http.StatusOK)
		}, HTTPOptions{})
		tr.SetSessionID("abc")
		tr.KeepSession(keep)
		tr.Close()
		if _, err := tr.RoundTrip(t.Context(), req(1, "x"), nil); !errors.Is(err, ErrClosed) {
			t.Errorf("RoundTrip after Close: %v", err)
		}
		mu.Lock()
		if keep && len(deletes) != 0 || !keep && (len(deletes) != 1 || deletes[0] != "abc") {
			t.Errorf("keep=%v: DELETEs %v", keep, deletes)
		}
		mu.Unlock()
	}
}

func TestHTTPInvalidURL(t *testing.T) {
	for _, u := range []string{"ftp://x/mcp", "http:///mcp", "::"} {
		if _, err := NewHTTPTransport(u, HTTPOptions{}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

func TestTraceRedacts(t *testing.T) {
	var trace bytes.Buffer
	tr, srv := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "sid=cookie-secret")
		io.WriteString(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"s\":\"\x1b]0;pwn\x07\"}}")
	}, HTTPOptions{
		Header: http.Header{"Authorization": {"Bearer tok-secret"}, "X-Team-Key": {"team-secret"}, "Cookie": {"c=cookie2-secret"}},
		Trace:  &TraceOptions{W: &trace, Secret: []string{"x-team-key"}},
	})
	_ = srv
	tr.RoundTrip(t.Context(), req(1, "x"), nil)
	out := trace.String()
	for _, secret := range []string{"tok-secret", "team-secret", "cookie-secret", "cookie2-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("trace leaks %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, redact.Mark) || strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("trace:\n%q", out)
	}
	if redact.URL("https://u:pw@host/mcp") != "https://u:xxxxx@host/mcp" {
		t.Errorf("RedactURL: %s", redact.URL("https://u:pw@host/mcp"))
	}
}

// The stdio tests re-execute this binary as a tiny scripted server.
func TestMain(m *testing.M) {
	if mode := os.Getenv("RPC_TEST_SERVER"); mode != "" {
		os.Exit(fakeStdioServer(mode))
	}
	os.Exit(m.Run())
}

func fakeStdioServer(mode string) int {
	dec := json.NewDecoder(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	switch mode {
	case "die":
		fmt.Fprintln(os.Stderr, "fatal: database is on fire")
		return 3
	case "ignore-stdin":
		// A server that never exits by itself: Close must escalate to signals.
		select {}
	}
	for {
		var m Message
		if err := dec.Decode(&m); err != nil {
			return 0
		}
		if m.Method == "notifications/cancelled" {
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","method":"test/saw-cancel","params":%s}`+"\n", m.Params)
			continue
		}
		switch {
		case m.Method == "hang":
			// never answer
		case m.Method == "garbage-first":
			fmt.Println("this is not json")
			out.Encode(Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"after":"garbage"}`)})
		case m.Method == "huge":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"s":"%s"}}`+"\n", m.ID, strings.Repeat("x", 4096))
		case m.Method == "ask-first":
			out.Encode(Message{JSONRPC: "2.0", ID: json.RawMessage(`"srv-1"`), Method: "elicitation/create", Params: json.RawMessage(`{}`)})
			var answer Message
			if err := dec.Decode(&answer); err != nil {
				return 1
			}
			out.Encode(Message{JSONRPC: "2.0", Method: "notifications/message", Params: json.RawMessage(`{}`)})
			out.Encode(Message{JSONRPC: "2.0", ID: m.ID, Result: answer.Result})
		case m.Method == "die-now":
			fmt.Fprintln(os.Stderr, "panic: oh no")
			return 2
		default:
			out.Encode(Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"echo":` + string(m.ID) + `}`)})
		}
	}
}

func newStdio(t *testing.T, mode string, opts StdioOptions) *StdioTransport {
	t.Helper()
	opts.Argv = []string{os.Args[0], "-test.run=^$"}
	opts.Env = append(opts.Env, "RPC_TEST_SERVER="+mode)
	st, err := NewStdioTransport(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestStdioConcurrentRoundTrips(t *testing.T) {
	st := newStdio(t, "echo", StdioOptions{})
	st.SetHandler(func(context.Context, *Message) *Message { return nil })
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := st.RoundTrip(t.Context(), req(int64(i+1), "x"), nil)
			if err != nil || string(m.Result) != fmt.Sprintf(`{"echo":%d}`, i+1) {
				t.Errorf("request %d: %v %v", i+1, m, err)
			}
		}()
	}
	wg.Wait()
}

func TestStdioServerRequestAndGarbage(t *testing.T) {
	st := newStdio(t, "echo", StdioOptions{MaxLineBytes: 1024})
	var mu sync.Mutex
	var seen []string
	st.SetHandler(func(_ context.Context, m *Message) *Message {
		mu.Lock()
		seen = append(seen, m.Method)
		mu.Unlock()
		if m.IsRequest() {
			return &Message{Result: json.RawMessage(`{"action":"accept"}`)}
		}
		return nil
	})
	m, err := st.RoundTrip(t.Context(), req(1, "ask-first"), nil)
	if err != nil || string(m.Result) != `{"action":"accept"}` {
		t.Fatalf("the server request must be answered through the handler: %v %v", m, err)
	}
	m, err = st.RoundTrip(t.Context(), req(2, "garbage-first"), nil)
	if err != nil || !strings.Contains(string(m.Result), "after") {
		t.Fatalf("a garbage line must be skipped: %v %v", m, err)
	}
	if _, err := st.RoundTrip(t.Context(), req(3, "huge"), nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized line: %v", err)
	}
	if m, err := st.RoundTrip(t.Context(), req(4, "x"), nil); err != nil || m == nil {
		t.Fatalf("the transport must go on after an oversized line: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "elicitation/create,notifications/message" {
		t.Errorf("handler saw %v", seen)
	}
}

func TestStdioExitQuotesStderr(t *testing.T) {
	st := newStdio(t, "echo", StdioOptions{})
	_, err := st.RoundTrip(t.Context(), req(1, "die-now"), nil)
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "panic: oh no") {
		t.Fatalf("got %v", err)
	}
	if _, err := st.RoundTrip(t.Context(), req(2, "x"), nil); !errors.Is(err, ErrServerExited) {
		t.Errorf("after exit: %v", err)
	}
}

func TestStdioCancelSendsNotification(t *testing.T) {
	st := newStdio(t, "echo", StdioOptions{})
	saw := make(chan json.RawMessage, 1)
	st.SetHandler(func(_ context.Context, m *Message) *Message {
		if m.Method == "test/saw-cancel" {
			saw <- m.Params
		}
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := st.RoundTrip(ctx, req(9, "hang"), nil); done <- err }()
	// The request is on its way once the server echoes something for it; cancel at once.
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	select {
	case p := <-saw:
		if !strings.Contains(string(p), `"requestId":9`) {
			t.Errorf("notifications/cancelled params %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/cancelled reached the server")
	}
}

func TestStdioCloseEscalates(t *testing.T) {
	st := newStdio(t, "ignore-stdin", StdioOptions{ShutdownWait: 100 * time.Millisecond})
	done := make(chan struct{})
	go func() { st.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end a server that ignores stdin")
	}
	select {
	case <-st.Done():
	default:
		t.Error("the process is still running after Close")
	}
}

func TestStdioEarlyExit(t *testing.T) {
	st := newStdio(t, "die", StdioOptions{})
	<-st.Done()
	_, err := st.RoundTrip(t.Context(), req(1, "x"), nil)
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "database is on fire") {
		t.Fatalf("got %v", err)
	}
}

func TestStdioMissingCommand(t *testing.T) {
	_, err := NewStdioTransport(t.Context(), StdioOptions{Argv: []string{"/nonexistent/mcp-server"}})
	if err == nil {
		t.Fatal("a missing command must fail to start")
	}
	_ = exec.ErrNotFound
}

// FuzzSSE feeds arbitrary bytes to the SSE reader with small caps: it must never panic and
// never return an event larger than the cap.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: {}\n\n", "id: 1\r\ndata:\r\n\r\n", ": c\n\ndata: a\ndata: b\n\n", "retry: 10\ndata: x\r\r",
		"\xEF\xBB\xBFdata: bom\n\n", "event: e\nid\x00: 1\ndata\n\n", strings.Repeat("data: x\n", 100) + "\n",
		"data: " + strings.Repeat("y", 300) + "\n\n", "\r\n\r\n\r", "data:no-space\nid: \x00bad\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxLine, maxEvent = 256, 512
		r := newSSEReader(bytes.NewReader(b), maxLine, maxEvent)
		for range 10_000 {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > maxEvent {
				t.Fatalf("event of %d bytes beyond the cap", len(ev.Data))
			}
		}
	})
}

// FuzzSSELines: the line splitter, which copies whatever is buffered up to a line break, cuts
// lines exactly where the standard says (CRLF, LF or CR, a CRLF split across reads counting
// once) whatever sizes the reads come in, compared with a byte-at-a-time reference.
func FuzzSSELines(f *testing.F) {
	for _, s := range []string{"a\nb\r\nc\rd", "\r\n\r\n\r", "x\r", strings.Repeat("z", 40) + "\r\n" + strings.Repeat("w", 70), "\n\n\r\r\n"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		const maxLine = 64
		var want []string
		tooLong := false
		var line []byte
		cr := false
		for _, c := range b {
			if cr {
				cr = false
				if c == '\n' {
					continue
				}
			}
			switch c {
			case '\n', '\r':
				want = append(want, string(line))
				line, cr = line[:0], c == '\r'
				continue
			}
			if len(line) >= maxLine {
				tooLong = true
				break
			}
			line = append(line, c)
		}
		r := &sseReader{r: bufio.NewReaderSize(&chunkReader{b: b, n: int(chunk)%20 + 1}, 16), maxLine: maxLine}
		for i := 0; ; i++ {
			got, err := r.readLine()
			if errors.Is(err, ErrTooLarge) {
				if !tooLong || i != len(want) {
					t.Fatalf("line %d too long, but the reference has %d lines (too long: %v)", i, len(want), tooLong)
				}
				return
			}
			if err != nil {
				if !tooLong && (i != len(want) || string(got) != string(line)) {
					t.Fatalf("ended after %d lines with %q; want %d lines and %q", i, got, len(want), line)
				}
				return
			}
			if i >= len(want) || string(got) != want[i] {
				t.Fatalf("line %d is %q; want %q", i, got, want)
			}
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

func TestSSEParsing(t *testing.T) {
	in := "\xEF\xBB\xBFid: a\ndata: one\ndata: two\n\n: comment\n\nretry: 250\nevent: x\ndata: three\r\n\r\ndata: partial"
	r := newSSEReader(strings.NewReader(in), 1024, 1024)
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "one\ntwo" || ev.ID != "a" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	ev, err = r.Next()
	if err != nil || string(ev.Data) != "three" || ev.Event != "x" || !ev.HasRetry || ev.Retry != 250*time.Millisecond || ev.ID != "a" {
		t.Fatalf("second event %+v %v", ev, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("an event cut off by the end of the stream must be dropped: %v", err)
	}
}

// FuzzDecodeMessage: arbitrary bytes never panic the envelope decoder, and whatever it
// accepts is a request, a notification or a response.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"m"}}`, `[]`, `{"jsonrpc":"1.0"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if !m.IsRequest() && !m.IsNotification() && !m.IsResponse() {
			t.Fatalf("accepted a message of no kind: %s", b)
		}
		_ = m.IDKey()
	})
}
