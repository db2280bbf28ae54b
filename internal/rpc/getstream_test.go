package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sessionServer is a 2025-11-25 server with a session and a standalone GET stream: the first
// GET gets a priming event (id, retry), an elicitation/create request and then the end of the
// stream; later GETs (the reconnections) are recorded and held open.
type sessionServer struct {
	mu       sync.Mutex
	gets     []http.Header
	answers  []string
	getCode  int // when not 0, every GET is answered with it
	getsSeen chan struct{}
}

func (s *sessionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.gets = append(s.gets, r.Header.Clone())
		n := len(s.gets)
		code := s.getCode
		s.mu.Unlock()
		select {
		case s.getsSeen <- struct{}{}:
		default:
		}
		if code != 0 {
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		if n == 1 {
			io.WriteString(w, "id: ev-1\nretry: 150\ndata: \n\n")
			io.WriteString(w, `id: ev-2`+"\n"+`data: {"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","default":true},"why":{"type":"string"}}}}}`+"\n\n")
			w.(http.Flusher).Flush()
			return // the server closes the stream: the client must come back after retry
		}
		<-r.Context().Done()
	case http.MethodDelete:
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		m, _ := DecodeMessage(body)
		switch {
		case m.IsResponse():
			s.mu.Lock()
			s.answers = append(s.answers, string(body)+"|"+r.Header.Get("Mcp-Session-Id"))
			s.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		case m.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-9")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`, m.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
		}
	}
}

func (s *sessionServer) snapshot() ([]http.Header, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.gets...), append([]string(nil), s.answers...)
}

func legacyClient(t *testing.T, url string, onRequest func(context.Context, string, json.RawMessage) (json.RawMessage, *Error)) *Client {
	t.Helper()
	tr, err := NewHTTPTransport(url, HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(tr, ClientOptions{Protocol: VersionLegacy, Elicitation: true, OnRequest: onRequest})
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// While a tool call runs, mcptask holds the standalone GET stream open: a request the server
// sends there is answered (with the form's defaults filled in), and when the server ends the
// stream mcptask comes back after the retry delay with Last-Event-ID.
func TestStandaloneStream(t *testing.T) {
	s := &sessionServer{getsSeen: make(chan struct{}, 8)}
	srv := httptest.NewServer(s)
	defer srv.Close()
	asked := make(chan string, 1)
	c := legacyClient(t, srv.URL, func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, *Error) {
		asked <- method
		return json.RawMessage(`{"action":"accept","content":{"why":"tidy"}}`), nil
	})
	if _, err := c.CallTool(t.Context(), CallParams{Name: "anything"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-asked:
		if m != "elicitation/create" {
			t.Fatalf("handler got %s", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the elicitation sent on the GET stream never reached the handler")
	}
	deadline := time.After(10 * time.Second)
	for {
		gets, answers := s.snapshot()
		if len(gets) >= 2 && len(answers) == 1 {
			if gets[0].Get("Mcp-Session-Id") != "sess-9" || gets[0].Get("Mcp-Protocol-Version") != VersionLegacy || gets[0].Get("Last-Event-Id") != "" {
				t.Errorf("first GET headers %v", gets[0])
			}
			if gets[1].Get("Last-Event-Id") != "ev-2" {
				t.Errorf("reconnection Last-Event-ID %q, want ev-2", gets[1].Get("Last-Event-Id"))
			}
			if !strings.Contains(answers[0], `"id":"q1"`) || !strings.Contains(answers[0], `"confirm":true`) ||
				!strings.Contains(answers[0], `"why":"tidy"`) || !strings.HasSuffix(answers[0], "|sess-9") {
				t.Errorf("answer POST %s", answers[0])
			}
			break
		}
		select {
		case <-deadline:
			t.Fatalf("GETs %d, answers %v", len(gets), answers)
		case <-s.getsSeen:
		case <-time.After(20 * time.Millisecond):
		}
	}
	// One stream at a time, however many calls wait.
	c.CallTool(t.Context(), CallParams{Name: "again"})
	if gets, _ := s.snapshot(); len(gets) != 2 {
		t.Errorf("%d GETs after a second call, want the one stream kept", len(gets))
	}
	// Close stops the stream's loop before it returns: nothing can reconnect afterwards.
	c.Close()
	gs := c.Transport().(*HTTPTransport).gs
	gs.mu.Lock()
	open := gs.open
	gs.mu.Unlock()
	if open {
		t.Error("the GET stream loop still runs after Close")
	}
}

// A 405 means the server has no standalone stream: asked once, never again.
func TestStandaloneStreamNone(t *testing.T) {
	s := &sessionServer{getCode: http.StatusMethodNotAllowed, getsSeen: make(chan struct{}, 8)}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := legacyClient(t, srv.URL, nil)
	defer c.Close()
	for range 3 {
		if _, err := c.CallTool(t.Context(), CallParams{Name: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if gets, _ := s.snapshot(); len(gets) != 1 {
		t.Errorf("%d GETs to a server that answered 405", len(gets))
	}
}

// A 2026-07-28 client never opens one (C26-HTTP: GET is gone).
func TestStandaloneStreamNotModern(t *testing.T) {
	f := modernToolServer(t, "public", 0)
	c, _, err := f.client(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	callRoute(t, c)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.other != 0 {
		t.Errorf("%d GET/DELETE requests reached a 2026-07-28 server", f.other)
	}
}

func TestElicitDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a"]},"free":{"type":"string"}}}`)
	tests := []struct{ in, want string }{
		{`{"action":"accept","content":{}}`, `{"action":"accept","content":{"age":30,"name":"John Doe","tags":["a"]}}`},
		{`{"action":"accept"}`, `{"action":"accept","content":{"age":30,"name":"John Doe","tags":["a"]}}`},
		{`{"action":"accept","content":{"name":"Ada","free":"x"}}`, `{"action":"accept","content":{"age":30,"free":"x","name":"Ada","tags":["a"]}}`},
		{`{"action":"decline"}`, `{"action":"decline"}`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(ElicitDefaults(schema, json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("ElicitDefaults(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
