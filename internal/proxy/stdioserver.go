package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// `proxy --stdio 'cmd' --listen ADDR` (issue 22 §2): HTTP hosts reach a stdio server, which is
// what mcp-proxy and supergateway do. StdioBackend is a Streamable HTTP server whose MCP
// endpoint is backed by stdio server processes: one per 2025-11-25 session (started by the
// host's initialize, ended by its DELETE), and one shared by every 2026-07-28 request (a
// stateless era). The ordinary HTTP proxy stands in front of it and reaches it in process
// (Transport: no port of its own that anything else could reach), so hosts go through the
// same listener, checks, ledger, record, linter and bridge as for any HTTP server.

// StdioBackendOptions configure a StdioBackend.
type StdioBackendOptions struct {
	// Argv, Dir and Env start the server, as for RunStdio.
	Argv []string
	Dir  string
	Env  []string
	// MaxSessions bounds the server processes started for 2025-11-25 sessions (64).
	MaxSessions int
	// SessionIdle is how long a 2025-11-25 session may go without a request, a request in
	// flight or an open GET stream before its process is ended to make room for a new one
	// (10 min): hosts that initialize and vanish cannot hold every place for good.
	SessionIdle time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
}

// StdioBackend serves stdio servers over Streamable HTTP.
type StdioBackend struct {
	o   StdioBackendOptions
	seq atomic.Int64

	mu       sync.Mutex
	sessions map[string]*backendSession
	shared   *backendSession
	closed   bool
}

// NewStdioBackend returns a backend; Close ends its server processes.
func NewStdioBackend(o StdioBackendOptions) *StdioBackend {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 64
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &StdioBackend{o: o, sessions: map[string]*backendSession{}}
}

// backendSession is one server process and the host streams its messages may go to.
type backendSession struct {
	b  *StdioBackend
	id string
	t  *rpc.StdioTransport

	// active counts the requests in flight and the open GET stream; used is when the last
	// one began or ended. Both are guarded by b.mu.
	active int
	used   time.Time

	mu sync.Mutex
	// streams are the open event streams: the answers of the host's requests in flight, and
	// the 2025-11-25 GET stream.
	streams []*backendStream
	get     *backendStream
	// ids maps the host's request ids to the ids they were sent to the server with, for
	// notifications/cancelled.
	ids map[string]json.RawMessage
	// waits are the server's requests sent to the host, waiting for its answer.
	waits map[string]chan *rpc.Message
}

// backendStream is one event stream to the host.
type backendStream struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	token string // the progressToken of the request it answers, as the server knows it
	ctx   context.Context
	// hostToken and hostID are the request's progressToken and id as the host sent them, and
	// serverID the id it went to the server with: the shared 2026-07-28 process sees
	// proxy-made tokens and ids, which messages to the host carry back as the host's.
	hostToken json.RawMessage
	hostID    json.RawMessage
	serverID  string
	// started says the answer became an event stream: a request's answer is sent as plain
	// JSON unless a message of the server's had to go first.
	started bool
}

// answer sends the last message of a request's stream: as JSON when nothing went before it.
func (s *backendStream) answer(m *rpc.Message) {
	s.mu.Lock()
	started := s.started
	if !started {
		s.started = true
		data, err := json.Marshal(m)
		if err == nil {
			s.w.Header().Set("Content-Type", "application/json")
			s.w.WriteHeader(http.StatusOK)
			_, _ = s.w.Write(data)
		}
	}
	s.mu.Unlock()
	if started {
		s.send(m)
	}
}

func (s *backendStream) send(m *rpc.Message) bool {
	data, err := json.Marshal(m)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return false
	}
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
	if _, err := fmt.Fprintf(s.w, "event: message\ndata: %s\n\n", data); err != nil {
		return false
	}
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}

// Close ends every server process.
func (b *StdioBackend) Close() {
	b.mu.Lock()
	b.closed = true
	all := make([]*backendSession, 0, len(b.sessions)+1)
	for _, s := range b.sessions {
		all = append(all, s)
	}
	if b.shared != nil {
		all = append(all, b.shared)
	}
	b.sessions, b.shared = map[string]*backendSession{}, nil
	b.mu.Unlock()
	for _, s := range all {
		_ = s.t.Close()
	}
}

func (b *StdioBackend) start(id string) (*backendSession, error) {
	t, err := rpc.NewStdioTransport(context.Background(), rpc.StdioOptions{Argv: b.o.Argv, Dir: b.o.Dir, Env: b.o.Env})
	if err != nil {
		return nil, err
	}
	s := &backendSession{b: b, id: id, t: t, ids: map[string]json.RawMessage{}, waits: map[string]chan *rpc.Message{}}
	t.SetHandler(s.fromServer)
	return s, nil
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ServeHTTP implements http.Handler: C25-TRANS §Streamable HTTP and C26-HTTP, server side.
func (b *StdioBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		b.post(w, r)
	case http.MethodGet:
		b.getStream(w, r)
	case http.MethodDelete:
		sid := r.Header.Get("Mcp-Session-Id")
		b.mu.Lock()
		s := b.sessions[sid]
		delete(b.sessions, sid)
		b.mu.Unlock()
		if s == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		_ = s.t.Close()
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// session finds the process a request goes to: its 2025-11-25 session, a new one for an
// initialize, else the shared 2026-07-28 one.
func (b *StdioBackend) session(w http.ResponseWriter, r *http.Request, m *rpc.Message) (*backendSession, bool) {
	sid := r.Header.Get("Mcp-Session-Id")
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return nil, false
	}
	switch {
	case sid != "":
		s := b.sessions[sid]
		if s == nil {
			// C25-TRANS §Session Management: a request with an unknown session gets 404.
			http.Error(w, "unknown or ended session", http.StatusNotFound)
			return nil, false
		}
		s.used = b.o.Now()
		return s, true
	case m.Method == "initialize":
		if len(b.sessions) >= b.o.MaxSessions {
			b.expireLocked()
		}
		if len(b.sessions) >= b.o.MaxSessions {
			http.Error(w, "too many sessions: end one (DELETE) or restart the proxy", http.StatusServiceUnavailable)
			return nil, false
		}
		s, err := b.start(newSessionID())
		if err != nil {
			http.Error(w, "the stdio server could not be started: "+err.Error(), http.StatusBadGateway)
			return nil, false
		}
		s.used = b.o.Now()
		b.sessions[s.id] = s
		return s, true
	}
	if b.shared != nil {
		select {
		case <-b.shared.t.Done():
			b.shared = nil // it died: the next request starts it again
		default:
			return b.shared, true
		}
	}
	s, err := b.start("")
	if err != nil {
		http.Error(w, "the stdio server could not be started: "+err.Error(), http.StatusBadGateway)
		return nil, false
	}
	b.shared = s
	return s, true
}

// expireLocked ends the 2025-11-25 sessions idle for SessionIdle; b.mu is held. A later request
// of such a session gets 404, which tells its host to initialize again (C25-TRANS §Session
// Management).
func (b *StdioBackend) expireLocked() {
	now := b.o.Now()
	for id, s := range b.sessions {
		if s.active == 0 && now.Sub(s.used) >= b.o.SessionIdle {
			delete(b.sessions, id)
			go func() { _ = s.t.Close() }()
		}
	}
}

// busy marks s in use until the returned function is called.
func (b *StdioBackend) busy(s *backendSession) func() {
	b.mu.Lock()
	s.active++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		s.active--
		s.used = b.o.Now()
		b.mu.Unlock()
	}
}

func (b *StdioBackend) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxInspect+1))
	if err != nil || len(body) > DefaultMaxInspect {
		http.Error(w, "the request body could not be read", http.StatusBadRequest)
		return
	}
	m, err := rpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, "not a JSON-RPC message: "+err.Error(), http.StatusBadRequest)
		return
	}
	s, ok := b.session(w, r, m)
	if !ok {
		return
	}
	defer b.busy(s)()
	switch {
	case m.IsRequest():
		s.request(w, r, m)
	case s.id == "" && !m.IsRequest():
		// The shared 2026-07-28 process: its hosts are not told apart, so what a host sends
		// that names a request (an answer, notifications/cancelled {requestId}) could name
		// another host's. A 2026-07-28 server sends no requests, and a host cancels its
		// request by closing the stream (C26-HTTP §Cancellation), which the transport turns
		// into notifications/cancelled for that request alone.
		w.WriteHeader(http.StatusAccepted)
	case m.IsResponse():
		s.mu.Lock()
		ch := s.waits[m.IDKey()]
		delete(s.waits, m.IDKey())
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		if m.Method == "notifications/cancelled" {
			m = s.cancelled(m)
		}
		if err := s.t.Send(r.Context(), m, nil); err != nil {
			http.Error(w, "the stdio server is gone: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// cancelled rewrites the request id a host's notifications/cancelled names to the id the
// request went to the server with.
func (s *backendSession) cancelled(m *rpc.Message) *rpc.Message {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		return m
	}
	s.mu.Lock()
	id, ok := s.ids[idKey(p["requestId"])]
	s.mu.Unlock()
	if !ok {
		return m
	}
	p["requestId"] = id
	raw, _ := json.Marshal(p)
	return &rpc.Message{JSONRPC: "2.0", Method: m.Method, Params: raw}
}

// request sends a host's request to the server under an id of its own (hosts share the
// 2026-07-28 process) and answers on an event stream: the server's messages for the host while
// it runs, then the answer.
func (s *backendSession) request(w http.ResponseWriter, r *http.Request, m *rpc.Message) {
	id := json.RawMessage(strconv.Quote("h" + strconv.FormatInt(s.b.seq.Add(1), 10)))
	var meta struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &meta)
	params := m.Params
	st := &backendStream{w: w, ctx: r.Context(), token: string(meta.Meta.ProgressToken), hostToken: meta.Meta.ProgressToken, hostID: m.ID, serverID: idKey(id)}
	if s.id == "" && len(meta.Meta.ProgressToken) > 0 {
		// Hosts of the shared process choose their progress tokens independently: each
		// request's goes to the server as a token of the proxy's, as its id does.
		tok := json.RawMessage(strconv.Quote("p" + strconv.FormatInt(s.b.seq.Add(1), 10)))
		if p, ok := withProgressToken(m.Params, tok); ok {
			params, st.token = p, string(tok)
		}
	}
	if s.id != "" && m.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", s.id)
	}
	s.mu.Lock()
	s.streams = append(s.streams, st)
	s.ids[m.IDKey()] = id
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for i, x := range s.streams {
			if x == st {
				s.streams = append(s.streams[:i], s.streams[i+1:]...)
				break
			}
		}
		delete(s.ids, m.IDKey())
		s.mu.Unlock()
	}()
	resp, err := s.t.RoundTrip(r.Context(), &rpc.Message{JSONRPC: "2.0", ID: id, Method: m.Method, Params: params}, nil)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		resp = &rpc.Message{Error: &rpc.Error{Code: rpc.CodeInternalError, Message: "mcptask proxy: the stdio server failed: " + err.Error()}}
	}
	resp.JSONRPC, resp.ID = "2.0", m.ID
	st.answer(resp)
}

// getStream serves a 2025-11-25 session's GET stream: the server's messages that belong to no
// request in flight.
func (b *StdioBackend) getStream(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	s := b.sessions[r.Header.Get("Mcp-Session-Id")]
	b.mu.Unlock()
	if s == nil {
		http.Error(w, "a GET stream needs a session", http.StatusMethodNotAllowed)
		return
	}
	defer b.busy(s)()
	st := &backendStream{w: w, ctx: r.Context(), started: true}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	s.mu.Lock()
	s.get = st
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-s.t.Done():
	}
	s.mu.Lock()
	if s.get == st {
		s.get = nil
	}
	s.mu.Unlock()
}

// route picks the stream a server message goes on, and the message as that host must see it.
// In a 2025-11-25 session (one host): the request its progressToken names, else the GET
// stream, else the latest request in flight (C25-TRANS §Listening for Messages from the
// Server: the server may send on either). In the shared 2026-07-28 process, only to the one
// host it belongs to, or to none: progress by the proxy's token, a subscription's
// notifications by the listen request's id (C26-STDIO: _meta subscriptionId), anything
// else only while a single request is in flight.
func (s *backendSession) route(m *rpc.Message) (*backendStream, *rpc.Message) {
	var p struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Meta          struct {
			Subscription json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		var st *backendStream
		switch {
		case len(p.ProgressToken) > 0:
			st = s.streamWhere(func(x *backendStream) bool { return x.token == string(p.ProgressToken) })
			if st != nil {
				return st, rewriteParams(m, func(q map[string]json.RawMessage) { q["progressToken"] = st.hostToken })
			}
		case len(p.Meta.Subscription) > 0:
			st = s.streamWhere(func(x *backendStream) bool { return x.serverID == idKey(p.Meta.Subscription) })
			if st != nil {
				return st, rewriteParams(m, func(q map[string]json.RawMessage) {
					meta := map[string]json.RawMessage{}
					_ = json.Unmarshal(q["_meta"], &meta)
					meta["io.modelcontextprotocol/subscriptionId"] = st.hostID
					q["_meta"], _ = json.Marshal(meta)
				})
			}
		case m.IsRequest():
			// A 2026-07-28 server sends no requests; none has a host to go to.
		default:
			var live []*backendStream
			for _, x := range s.streams {
				if x.ctx.Err() == nil {
					live = append(live, x)
				}
			}
			if len(live) == 1 {
				return live[0], m
			}
		}
		return nil, m
	}
	if len(p.ProgressToken) > 0 {
		for _, st := range s.streams {
			if st.token == string(p.ProgressToken) {
				return st, m
			}
		}
	}
	if s.get != nil && s.get.ctx.Err() == nil {
		return s.get, m
	}
	for i := len(s.streams) - 1; i >= 0; i-- {
		if s.streams[i].ctx.Err() == nil {
			return s.streams[i], m
		}
	}
	return nil, m
}

// streamWhere is the open stream of a request in flight that ok accepts; s.mu is held.
func (s *backendSession) streamWhere(ok func(*backendStream) bool) *backendStream {
	for _, st := range s.streams {
		if st.ctx.Err() == nil && ok(st) {
			return st
		}
	}
	return nil
}

// withProgressToken returns params with _meta.progressToken set to tok.
func withProgressToken(params json.RawMessage, tok json.RawMessage) (json.RawMessage, bool) {
	var q map[string]json.RawMessage
	if json.Unmarshal(params, &q) != nil || q == nil {
		return params, false
	}
	meta := map[string]json.RawMessage{}
	if json.Unmarshal(q["_meta"], &meta) != nil {
		return params, false
	}
	meta["progressToken"] = tok
	q["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(q)
	return out, err == nil
}

// rewriteParams returns a copy of the notification m with its params edited by edit.
func rewriteParams(m *rpc.Message, edit func(map[string]json.RawMessage)) *rpc.Message {
	var q map[string]json.RawMessage
	if json.Unmarshal(m.Params, &q) != nil || q == nil {
		return m
	}
	edit(q)
	raw, err := json.Marshal(q)
	if err != nil {
		return m
	}
	c := *m
	c.Params = raw
	return &c
}

// fromServer takes the server's requests and notifications to the host.
func (s *backendSession) fromServer(ctx context.Context, m *rpc.Message) *rpc.Message {
	st, m := s.route(m)
	if !m.IsRequest() {
		if st != nil {
			st.send(m)
		}
		return nil
	}
	if st == nil {
		return &rpc.Message{Error: &rpc.Error{Code: rpc.CodeInternalError, Message: "mcptask proxy: no stream to the host is open to ask it"}}
	}
	ch := make(chan *rpc.Message, 1)
	s.mu.Lock()
	s.waits[m.IDKey()] = ch
	s.mu.Unlock()
	if !st.send(m) {
		s.mu.Lock()
		delete(s.waits, m.IDKey())
		s.mu.Unlock()
		return &rpc.Message{Error: &rpc.Error{Code: rpc.CodeInternalError, Message: "mcptask proxy: the host went away"}}
	}
	select {
	case r := <-ch:
		return &rpc.Message{Result: r.Result, Error: r.Error}
	case <-ctx.Done():
		return nil
	case <-st.ctx.Done():
		s.mu.Lock()
		delete(s.waits, m.IDKey())
		s.mu.Unlock()
		return &rpc.Message{Error: &rpc.Error{Code: rpc.CodeInternalError, Message: "mcptask proxy: the host went away"}}
	}
}

// Transport returns an http.RoundTripper that serves requests with the backend in process: the
// proxy in front reaches it without a socket. The answer streams through a pipe as the backend
// writes it, so an event stream reaches the host event by event.
func (b *StdioBackend) Transport() http.RoundTripper { return handlerTransport{b} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			rw.writeHeader(http.StatusOK) // a handler that wrote nothing
			_ = pw.Close()
		}()
		t.h.ServeHTTP(rw, req)
	}()
	select {
	case <-rw.ready:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	go func() {
		<-req.Context().Done()
		_ = pr.CloseWithError(req.Context().Err())
	}()
	return &http.Response{StatusCode: rw.status, Status: http.StatusText(rw.status), Header: rw.sent, Body: pr,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, ContentLength: -1, Request: req}, nil
}

// pipeWriter is the http.ResponseWriter of handlerTransport.
type pipeWriter struct {
	header http.Header
	sent   http.Header
	pw     *io.PipeWriter
	status int
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) writeHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) WriteHeader(status int) { w.writeHeader(status) }

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.writeHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush implements http.Flusher: every Write already reaches the reader.
func (w *pipeWriter) Flush() {}
