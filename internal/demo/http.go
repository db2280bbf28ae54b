package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcptask/mcptask/internal/rpc"
)

// maxBody caps a POST body; demo messages are tiny.
const maxBody = 4 << 20

// Handler returns the Streamable HTTP endpoint. It serves the same endpoint at /mcp and at /,
// so both `http://host/mcp` and `http://host/` work as server URLs.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/mcp" && r.URL.Path != "/mcp/" {
			http.NotFound(w, r)
			return
		}
		// C25-TRANS §Security Warning: servers MUST validate Origin and answer 403 when it is
		// not acceptable; the demo only accepts local origins.
		if o := r.Header.Get("Origin"); o != "" && !localOrigin(o) {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return
		}
		switch r.Method {
		case http.MethodPost:
			s.servePost(w, r)
		case http.MethodDelete:
			s.serveDelete(w, r)
		default:
			// C25-TRANS §Listening for Messages: a server without a standalone SSE stream
			// answers GET with 405; C26-HTTP: GET is 405 for modern clients anyway.
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

func localOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// serveDelete ends a legacy session (C25-TRANS §Session Management); without a session there
// is nothing to delete and the answer is 405, as C26-HTTP expects of a modern server.
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sid] == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	delete(s.sessions, sid)
	// The session's tasks can no longer be reached by anyone; stop and forget them.
	for id, t := range s.tasks {
		if t.Era == rpc.EraLegacy && t.Session == sid {
			delete(s.tasks, id)
			t.gone = true
			wakeTask(t)
		}
	}
	s.persistLocked()
	s.notifyLocked()
	w.WriteHeader(http.StatusOK)
}

func acceptsBoth(r *http.Request) bool {
	a := strings.Join(r.Header.Values("Accept"), ",")
	if strings.Contains(a, "*/*") {
		return true
	}
	return strings.Contains(a, "application/json") && strings.Contains(a, "text/event-stream")
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	m, err := rpc.DecodeMessage(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &rpc.Error{Code: rpc.CodeParseError, Message: "invalid JSON-RPC message"}))
		return
	}
	if m.IsResponse() {
		// C25-TRANS §Sending Messages to the Server: a response POST gets 202 Accepted.
		if !s.deliver(m) {
			s.opts.Logf("dropped a response nobody was waiting for")
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// C25-TRANS/C26-HTTP §Sending Messages: the client MUST accept both JSON and SSE.
	if !acceptsBoth(r) {
		writeJSON(w, http.StatusNotAcceptable, errorMessage(m.ID, &rpc.Error{Code: rpc.CodeInvalidRequest,
			Message: "Accept must list both application/json and text/event-stream"}))
		return
	}
	switch {
	case isModern(m):
		// C26-HTTP §Earlier Streamable HTTP Revisions: a modern request ignores Mcp-Session-Id.
		st := &sseStream{w: w}
		res, e := s.modernFromTransport(r.Context(), m, r.Header, st.send, st.upgrade)
		if res == nil && e == nil {
			return // a listen stream the client closed
		}
		st.finish(m.ID, res, e)
	case m.Method == "initialize":
		sid := newSessionID()
		res, e := s.initialize(m, sid)
		if e == nil {
			w.Header().Set("Mcp-Session-Id", sid)
		}
		writeResult(w, m.ID, res, e)
	default:
		s.serveLegacy(w, r, m)
	}
}

// modernFromTransport checks and serves a modern request (hdr is nil on stdio).
func (s *Server) modernFromTransport(ctx context.Context, m *rpc.Message, hdr http.Header, out func(*rpc.Message) error, upgrade func()) (any, *rpc.Error) {
	req, e := checkModern(m, hdr)
	if e != nil {
		return nil, e
	}
	req.out, req.upgrade = out, upgrade
	return s.handleModern(ctx, req)
}

func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request, m *rpc.Message) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		// Neither a modern request (no _meta protocolVersion) nor part of a legacy session.
		writeJSON(w, http.StatusBadRequest, errorMessage(m.ID, invalidParams(
			"missing params._meta %q (2026-07-28) or Mcp-Session-Id header (2025-11-25: call initialize first)", rpc.MetaProtocolVersion)))
		return
	}
	s.mu.Lock()
	sess := s.sessions[sid]
	s.mu.Unlock()
	if sess == nil {
		// C25-TRANS §Session Management: an unknown or ended session gets 404, after which the
		// client must initialize again.
		writeJSON(w, http.StatusNotFound, errorMessage(m.ID, &rpc.Error{Code: rpc.CodeInvalidRequest, Message: "session not found; initialize again"}))
		return
	}
	// C25-TRANS §Protocol Version Header: an invalid or unsupported MCP-Protocol-Version gets
	// 400. Without the header the server would have to assume 2025-03-26, which the demo does
	// not speak, so a missing header is refused too.
	if v := r.Header.Get("MCP-Protocol-Version"); v != rpc.VersionLegacy {
		writeJSON(w, http.StatusBadRequest, errorMessage(m.ID, &rpc.Error{Code: rpc.CodeInvalidRequest,
			Message: fmt.Sprintf("MCP-Protocol-Version header must be %s in this session, got %q", rpc.VersionLegacy, v)}))
		return
	}
	st := &sseStream{w: w}
	req := &legacyReq{msg: m, sess: sess}
	if m.Method == "tasks/result" || m.Method == "tools/call" {
		// Only tasks/result may need to carry server→client requests; tasks/get is never
		// upgraded to SSE (C25-TASKS §Input Required Status note). A plain tools/call
		// carries the progress tool's notifications/progress before its answer.
		req.out = st.send
	}
	res, e := s.handleLegacy(r.Context(), req)
	st.finish(m.ID, res, e)
}

// sseStream answers one POST either as plain JSON or, once a server→client message has been
// sent on it, as an SSE stream whose last event is the response.
type sseStream struct {
	w   http.ResponseWriter
	mu  sync.Mutex
	sse bool
}

func (st *sseStream) send(m *rpc.Message) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.startLocked()
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(st.w, "event: message\ndata: %s\n\n", b); err != nil {
		return err
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// upgrade makes the response an SSE stream now, before any event.
func (st *sseStream) upgrade() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.startLocked()
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *sseStream) startLocked() {
	if st.sse {
		return
	}
	st.w.Header().Set("Content-Type", "text/event-stream")
	st.w.Header().Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
	st.sse = true
}

func (st *sseStream) finish(id json.RawMessage, res any, e *rpc.Error) {
	st.mu.Lock()
	sse := st.sse
	st.mu.Unlock()
	if !sse {
		writeResult(st.w, id, res, e)
		return
	}
	_ = st.send(responseMessage(id, res, e))
}

func responseMessage(id json.RawMessage, res any, e *rpc.Error) *rpc.Message {
	if e != nil {
		return errorMessage(id, e)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return errorMessage(id, &rpc.Error{Code: rpc.CodeInternalError, Message: "encode result"})
	}
	return &rpc.Message{JSONRPC: "2.0", ID: id, Result: b}
}

func errorMessage(id json.RawMessage, e *rpc.Error) *rpc.Message {
	return &rpc.Message{JSONRPC: "2.0", ID: id, Error: e}
}

func writeResult(w http.ResponseWriter, id json.RawMessage, res any, e *rpc.Error) {
	status := http.StatusOK
	if e != nil && e.HTTPStatus != 0 {
		status = e.HTTPStatus
	}
	writeJSON(w, status, responseMessage(id, res, e))
}

func writeJSON(w http.ResponseWriter, status int, m *rpc.Message) {
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
