package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// Over Streamable HTTP the bridge answers a bridged tools/call itself, on an event stream
// (C25-TRANS §Sending Messages to the Server: the server "MAY initiate an SSE stream" for a
// request): progress notifications and questions as they come, then the response, which ends
// the stream. Its own requests to the server go out on their own HTTP requests, with the
// host's session and credentials (passed through, never stored), so the host's stream and the
// server's never mix.

// sseLink is the event stream of one host request.
type sseLink struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
	ctx     context.Context
}

func (l *sseLink) send(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return errHostGone
	}
	if !l.started {
		l.w.Header().Set("Content-Type", "text/event-stream")
		l.w.Header().Set("Cache-Control", "no-cache")
		l.w.WriteHeader(http.StatusOK)
		l.started = true
	}
	if _, err := fmt.Fprintf(l.w, "event: message\ndata: %s\n\n", msg); err != nil {
		return err
	}
	if fl, ok := l.w.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

// upstream returns a transport for the proxy's own requests to the server on behalf of the
// host that sent r: its Authorization and cookies, the headers of a named server, its session.
func (f *httpFront) upstream(r *http.Request, h *host) (*rpc.HTTPTransport, error) {
	f.p.mu.Lock()
	session := h.session
	f.p.mu.Unlock()
	hdr := http.Header{}
	for _, k := range []string{"Authorization", "Cookie"} {
		if v := r.Header.Values(k); len(v) > 0 {
			hdr[k] = v
		}
	}
	for k, v := range f.extra {
		if len(hdr.Values(k)) == 0 {
			hdr[http.CanonicalHeaderKey(k)] = v
		}
	}
	o := rpc.HTTPOptions{Header: hdr, HTTPClient: rpc.NewHTTPClient(f.rp.Transport)}
	if f.p.rec != nil {
		// The proxy's own requests go to the record too, marked as the proxy's, headers
		// redacted by rpc's tracer as for the client's own record.
		o.Trace = &rpc.TraceOptions{Record: &bridgeTrace{p: f.p, host: h.label()}, Secret: f.p.opts.Secret}
	}
	t, err := rpc.NewHTTPTransport(f.up.String(), o)
	if err != nil {
		return nil, err
	}
	t.KeepSession(true) // the session is the host's: never ended by the proxy
	if session != "" {
		t.SetSessionID(session)
	}
	return t, nil
}

// callHeader is what the proxy's task call carries besides what the transport adds: the
// host's protocol version and 2026-07-28 routing headers, which the call keeps.
func callHeader(r *http.Request) http.Header {
	hdr := http.Header{}
	for k, v := range r.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name":
			hdr[k] = v
		default:
			if len(k) > len("Mcp-Param-") && http.CanonicalHeaderKey(k)[:len("Mcp-Param-")] == "Mcp-Param-" {
				hdr[k] = v
			}
		}
	}
	return hdr
}

// serveHTTP takes what the bridge answers itself of a host's POST: a host's answer to a
// question of the proxy's, a cancellation of a bridged call, a task-unaware host's tools/list
// (rewritten) and tools/call (bridged). It returns false for anything else, which the proxy
// forwards as always.
func (b *bridge) serveHTTP(f *httpFront, w http.ResponseWriter, r *http.Request, h *host, m *rpc.Message, params reqParams) bool {
	switch {
	case b.hostAnswer(h, m), b.hostCancelled(h, m):
		w.WriteHeader(http.StatusAccepted)
		return true
	case !m.IsRequest():
		return false
	case m.Method == "initialize":
		if out := b.declareAnswerable(m); out != nil {
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
		}
		return false
	case m.Method == "tools/list" && params.Meta.Version == "" && !b.hostSpeaksTasks(h):
		return b.serveToolsList(f, w, r, h, m)
	case m.Method != "tools/call":
		return false
	}
	up, err := f.upstream(r, h)
	if err != nil {
		return false
	}
	hdr := callHeader(r)
	support := func(name string) string {
		b.mu.Lock()
		s, ok := b.support[name]
		done := b.listed
		b.mu.Unlock()
		if ok || done {
			return s
		}
		b.listTools(r.Context(), up, hdr)
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.support[name]
	}
	if !b.wants(h, m, params, support) {
		return false
	}
	link := &sseLink{w: w, ctx: r.Context()}
	c := b.start(h, m, params, r.Header, link, up, hdr)
	c.run(r.Context())
	return true
}

// serveToolsList answers a task-unaware host's tools/list with the server's list rewritten
// (rewriteTools); when the server cannot be asked, the request goes through unchanged.
func (b *bridge) serveToolsList(f *httpFront, w http.ResponseWriter, r *http.Request, h *host, m *rpc.Message) bool {
	up, err := f.upstream(r, h)
	if err != nil {
		return false
	}
	req := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Quote(b.nextID())), Method: m.Method, Params: m.Params}
	resp, err := up.RoundTrip(r.Context(), req, callHeader(r))
	if err != nil {
		return false
	}
	resp.ID = m.ID
	out := b.rewriteListAnswer(h, resp)
	if out == nil {
		if out, err = json.Marshal(resp); err != nil {
			return false
		}
	}
	b.p.bridgeRecord(false, h, out)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return true
}

// bridgeTrace takes the NDJSON lines rpc's tracer writes for the proxy's own HTTP requests and
// puts them in the proxy's record, with the peer "proxy" and the host they were made for.
type bridgeTrace struct {
	p    *Proxy
	host string
}

func (t *bridgeTrace) Write(b []byte) (int, error) {
	var l wirelog.Line
	if json.Unmarshal(b, &l) != nil {
		return len(b), nil
	}
	l.Peer = "proxy"
	t.p.rec.line(l.Dir == wirelog.DirSend, t.host, &l)
	return len(b), nil
}
