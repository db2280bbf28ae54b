package proxy

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// HTTPOptions configure the Streamable HTTP front of the proxy.
type HTTPOptions struct {
	// Upstream is the server's MCP endpoint.
	Upstream string
	// Header is added to a request that lacks it: the headers of a server named in a config
	// file. The values are secrets: redacted in the record, never stored.
	Header http.Header
	// Insecure turns TLS verification off towards the server (--insecure).
	Insecure bool
	// Transport replaces the connection pool to the server (tests).
	Transport http.RoundTripper

	// AllowedHosts are Host values accepted besides the loopback names and the address a
	// connection came in on (--allowed-host): "name" (any port) or "name:port".
	AllowedHosts []string
	// AllowedOrigins are Origin values accepted besides loopback origins (--allowed-origin).
	AllowedOrigins []string
	// MaxBody caps a host's request body (DefaultMaxBody); a larger one is refused with 413.
	MaxBody int
	// BodyTimeout is how long a host has to send a request's body (DefaultBodyTimeout).
	BodyTimeout time.Duration
	// WriteStall is how long a host may leave a write of the proxy unread before the proxy gives
	// up on it (DefaultWriteStall).
	WriteStall time.Duration
}

const (
	// DefaultMaxBody caps a request body: the inspection cap, so that every request a host
	// sends through the proxy is also one it looked at. MCP messages are JSON-RPC requests;
	// the TypeScript SDK's servers refuse anything over 4 MB.
	DefaultMaxBody = DefaultMaxInspect
	// DefaultBodyTimeout bounds the time to send a body: a host sends a JSON message at once,
	// and a slowloris host that trickles bytes would otherwise hold a goroutine and a buffer.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteStall bounds how long a write to a host may wait for it to read: an event
	// stream may be idle for hours, but a host that stops reading while the proxy has bytes
	// for it is gone or hostile.
	DefaultWriteStall = time.Minute
	// DefaultReadHeaderTimeout and DefaultIdleTimeout bound a host's silence before its
	// request's headers are complete, and between two requests on a kept-alive connection.
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	// maxHeaderBytes caps a request's headers; a bearer token or a long cookie fits.
	maxHeaderBytes = 256 << 10
)

// ServerOptions tune the proxy's http.Server; zero values take the defaults above.
type ServerOptions struct {
	ReadHeaderTimeout, IdleTimeout time.Duration
}

// NewServer returns the http.Server that serves h to hosts, with the time bounds a server
// facing untrusted peers needs. It sets no ReadTimeout or WriteTimeout: those would cut the
// long-lived event streams of MCP; the handler bounds each body and each write instead.
func NewServer(h http.Handler, o ServerOptions) *http.Server {
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeaderTimeout, IdleTimeout: o.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: log.New(io.Discard, "", 0)}
}

type ctxKey struct{}

// httpFront serves the MCP endpoint to hosts and forwards every request to the server with
// net/http/httputil's ReverseProxy, which already does what a faithful HTTP proxy must: drop
// hop-by-hop headers and nothing else, stream bodies, flush each write of an event stream at
// once, and abort the host's connection when the server's breaks, so that a server dying
// mid-stream looks the same through the proxy as without it.
type httpFront struct {
	p     *Proxy
	up    *url.URL
	rp    *httputil.ReverseProxy
	extra http.Header

	guard       *guard
	refused     refusals
	maxBody     int
	bodyTimeout time.Duration
	writeStall  time.Duration
}

// Handler returns the handler of the proxy's MCP endpoint. It first checks that the request
// comes from a host and not from a web page (guard.go), then routes it: "/", "/mcp" and the
// server's own path go to the server's endpoint, the OAuth metadata documents a host reads go
// to the server's origin, and any other path is answered 404 without being forwarded.
func (p *Proxy) Handler(opts HTTPOptions) (http.Handler, error) {
	up, err := url.Parse(opts.Upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return nil, fmt.Errorf("invalid server URL %q", redact.URL(opts.Upstream))
	}
	g, err := newGuard(opts.AllowedHosts, opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	f := &httpFront{p: p, up: up, extra: opts.Header.Clone(), guard: g, maxBody: opts.MaxBody,
		bodyTimeout: opts.BodyTimeout, writeStall: opts.WriteStall}
	if f.maxBody <= 0 {
		f.maxBody = DefaultMaxBody
	}
	if f.bodyTimeout <= 0 {
		f.bodyTimeout = DefaultBodyTimeout
	}
	if f.writeStall <= 0 {
		f.writeStall = DefaultWriteStall
	}
	tr := opts.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// No cap on connections: hosts hold long-lived streams (GET, subscriptions/listen)
		// and a cap would make every other request wait behind them.
		t.MaxConnsPerHost = 0
		t.MaxIdleConnsPerHost = 64
		t.IdleConnTimeout = 90 * time.Second
		t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		// The host's Accept-Encoding goes through as the host sent it (filtered, see
		// rewrite); net/http must not add its own and decompress behind the host's back.
		t.DisableCompression = true
		if opts.Insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for --insecure
		}
		tr = t
	}
	f.rp = &httputil.ReverseProxy{
		Rewrite:   f.rewrite,
		Transport: tr,
		// Event streams and bodies of unknown length are flushed at every write whatever this
		// says; a JSON answer of known length goes out whole when the handler ends.
		FlushInterval:  0,
		BufferPool:     copyBuffers{},
		ModifyResponse: f.modifyResponse,
		ErrorHandler:   f.errorHandler,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	return f, nil
}

func (f *httpFront) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	p := f.p
	start := p.opts.Now()
	rc := http.NewResponseController(rw)
	w := &stallWriter{ResponseWriter: rw, rc: rc, d: f.writeStall}
	// The last bytes (the end of a chunked body) are written after the handler returns.
	defer func() { _ = rc.SetWriteDeadline(time.Now().Add(f.writeStall)) }()
	// Nothing is read, looked at or forwarded before the request is known to come from a host.
	if !f.admit(w, r) {
		return
	}
	body, held, ok := f.readBody(w, rc, r)
	defer p.mem.give(held)
	if !ok {
		return
	}
	x, answered := f.inspect(w, r, body, start)
	if answered {
		return
	}
	x.httpMethod = r.Method
	// Deferred, so that it happens also when the reverse proxy aborts a broken stream (by
	// panicking with http.ErrAbortHandler, which net/http expects and handles).
	defer f.settle(x, r, start)
	f.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, x)))
}

// admit refuses a request that does not come from a host the proxy serves (its Host and
// Origin headers), is not for the MCP endpoint, or says its body is too large; true when it
// may go on.
func (f *httpFront) admit(w http.ResponseWriter, r *http.Request) bool {
	if why := f.guard.checkHost(r); why != "" {
		f.refuse(w, r, http.StatusForbidden, "host", why)
		return false
	}
	if why := f.guard.checkOrigin(r); why != "" {
		f.refuse(w, r, http.StatusForbidden, "origin", why)
		return false
	}
	endpoint, ok := f.route(r.URL)
	if !ok {
		f.refuse(w, r, http.StatusNotFound, "path", fmt.Sprintf("%s is not the MCP endpoint (give the host the URL the proxy printed, ending in /mcp)", clip(r.URL.Path)))
		return false
	}
	if endpoint && r.Method == http.MethodGet && !streamGET(r) {
		// A page may send a GET anywhere without asking (no Origin in no-cors mode), and the
		// proxy would add the user's credentials to it. A host's GET opens the event stream
		// (C25-TRANS §Listening for Messages from the Server): it accepts text/event-stream
		// and carries the session or protocol version header, which a page cannot set
		// without the browser's CORS preflight, which the Origin check then refuses.
		f.refuse(w, r, http.StatusMethodNotAllowed, "get", "a GET of the MCP endpoint opens its event stream: it needs Accept: text/event-stream and the Mcp-Session-Id or MCP-Protocol-Version header")
		return false
	}
	if r.ContentLength > int64(f.maxBody) {
		f.refuse(w, r, http.StatusRequestEntityTooLarge, "size", fmt.Sprintf("the request body of %d bytes is larger than the proxy's limit of %d", r.ContentLength, f.maxBody))
		return false
	}
	return true
}

// streamGET reports whether a GET is a host's request for the server's event stream.
func streamGET(r *http.Request) bool {
	accepts := false
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			accepts = true
		}
	}
	return accepts && (r.Header.Get("Mcp-Session-Id") != "" || r.Header.Get("MCP-Protocol-Version") != "")
}

// readBody reads the request's body whole, so that it can be inspected and forwarded, and puts
// it back in r. held is what it holds of the proxy's memory budget (given back when the
// request is over); false when the request was refused or broke off, and has been answered.
func (f *httpFront) readBody(w http.ResponseWriter, rc *http.ResponseController, r *http.Request) (body []byte, held int64, ok bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, 0, true
	}
	p := f.p
	// A body must arrive in time (a slowloris host trickling bytes is cut) and within the
	// size cap, whatever its method.
	_ = rc.SetReadDeadline(time.Now().Add(f.bodyTimeout))
	b, held, err := p.readHeld(r.Body, f.maxBody)
	switch {
	case errors.Is(err, errTooLarge):
		f.refuse(w, r, http.StatusRequestEntityTooLarge, "size", fmt.Sprintf("the request body is larger than the proxy's limit of %d bytes", f.maxBody))
		return nil, held, false
	case errors.Is(err, errOverBudget):
		f.refuse(w, r, http.StatusServiceUnavailable, "memory", fmt.Sprintf("the proxy holds %d bytes of messages already, its limit; retry", p.mem.max))
		return nil, held, false
	case err != nil:
		// The host went away while sending, or its body broke off or came too slowly:
		// nothing to forward.
		p.notice(nil, "a request body from %s could not be read: %v", remoteIP(r), err)
		w.Header().Set("Connection", "close")
		_ = rc.SetReadDeadline(time.Now())
		http.Error(w, "mcptask proxy: the request body could not be read", http.StatusBadRequest)
		return nil, held, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.TransferEncoding = nil
	return b, held, true
}

// inspect looks at the host's request (a POST's JSON-RPC message), records it and returns its
// exchange; answered is set when the bridge answered it itself (bridge_http.go).
func (f *httpFront) inspect(w http.ResponseWriter, r *http.Request, body []byte, start time.Time) (x *exchange, answered bool) {
	p := f.p
	if r.Method != http.MethodPost {
		h := f.hostOf(r, reqParams{})
		if p.rec != nil {
			p.rec.line(true, h.label(), f.requestLine(r, body, nil))
		}
		return &exchange{h: h, start: start}, false
	}
	m, params, err := decodeHostMessage(body)
	h := f.hostOf(r, params)
	if p.rec != nil {
		p.rec.line(true, h.label(), f.requestLine(r, body, m))
	}
	switch {
	case err != nil:
		p.malformed(true, h, body, err)
	case p.bridge != nil && p.bridge.serveHTTP(f, w, r, h, m, params):
		return nil, true
	default:
		x = p.hostMessage(h, m, params, r.Header)
	}
	if x == nil {
		x = &exchange{h: h, start: start}
	}
	return x, false
}

// settle ends the host's request: its exchange settled, its memory given back, its summary
// recorded, and the host dropped when it ended its session.
func (f *httpFront) settle(x *exchange, r *http.Request, start time.Time) {
	p := f.p
	x.mu.Lock()
	if x.err == "" && r.Context().Err() != nil {
		x.err = "the host went away before the answer was complete"
	}
	status, held := x.status, x.held
	x.held = 0
	x.mu.Unlock()
	p.mem.give(held)
	p.settle(x)
	if p.rec != nil {
		p.rec.line(true, x.h.label(), x.summary(p.opts.Now().Sub(start)))
	}
	if r.Method == http.MethodDelete && status/100 == 2 && r.Header.Get("Mcp-Session-Id") != "" {
		p.dropHost(x.h) // C25-TRANS §Session Management: the session is over
	}
}

// stallWriter gives every write to the host WriteStall to complete: a host that stops reading
// is cut off instead of holding the proxy's goroutine, its buffers and the server's stream.
// The deadline is set before each write, so an event stream may stay idle as long as it likes.
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (s *stallWriter) Write(b []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d))
	return s.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController (and so the reverse proxy) calls to flush.
func (s *stallWriter) FlushError() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d))
	return s.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (f *httpFront) requestLine(r *http.Request, body []byte, m *rpc.Message) *wirelog.Line {
	line := &wirelog.Line{Kind: wirelog.KindHTTPRequest, HTTPMethod: r.Method, URL: redact.URL(f.target(r.URL).String()),
		Headers: r.Header}
	if len(body) > 0 {
		line.Body, line.TaskID = wirelog.Body(body), new(wirelog.TaskIDOf(body))
		if m != nil {
			line.Method = new(m.Method)
		}
	}
	return line
}

// summary is the record's http-exchange line for x.
func (x *exchange) summary(took time.Duration) *wirelog.Line {
	x.mu.Lock()
	defer x.mu.Unlock()
	line := &wirelog.Line{Kind: wirelog.KindHTTPExchange, HTTPMethod: x.httpMethod, Status: new(x.status),
		LatencyMs: wirelog.Latency(took), TaskCreated: x.created}
	if x.msg != nil {
		line.Method, line.ID = new(x.msg.Method), wirelog.ID(x.msg.ID)
	}
	switch {
	case x.taskID != "":
		line.TaskID = new(x.taskID)
	case x.params.TaskID != "":
		line.TaskID = new(x.params.TaskID)
	}
	switch {
	case x.err != "":
		line.Error = x.err
	case x.rpcErr != nil:
		line.RPCError, _ = json.Marshal(x.rpcErr)
	}
	return line
}

// hostOf tells which host sent r: its 2025-11-25 session when it has one, else its clientInfo
// (2026-07-28 requests carry it) and address, else its address.
func (f *httpFront) hostOf(r *http.Request, params reqParams) *host {
	ip := remoteIP(r)
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		// Also a session whose initialize the proxy never saw (it started later): its
		// tasks are still recorded with the session they belong to.
		h := f.p.hostFor("s:"+sid, "session "+short(sid)+" @"+ip)
		f.p.mu.Lock()
		h.session = sid
		f.p.mu.Unlock()
		return h
	}
	if info := params.Meta.Info.String(); info != "" {
		return f.p.hostFor("m:"+ip+"|"+info, info+" @"+ip)
	}
	if info := params.ClientInfo.String(); info != "" {
		return f.p.hostFor("a:"+ip+"|"+info, info+" @"+ip)
	}
	return f.p.hostFor("a:"+ip, ip)
}

// session moves x to the host of the 2025-11-25 session its initialize opened.
func (p *Proxy) session(x *exchange, sid string) {
	label := "session " + short(sid)
	if info := x.params.ClientInfo.String(); info != "" {
		label = info + " (" + label + ")"
	}
	h := p.hostFor("s:"+sid, label)
	p.mu.Lock()
	h.session = sid
	if old := x.h; old != h && old.pending[x.msg.IDKey()] == x {
		delete(old.pending, x.msg.IDKey())
		h.pending[x.msg.IDKey()] = x
	}
	p.mu.Unlock()
	x.h = h
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// target is the server URL a request to path u goes to.
func (f *httpFront) target(u *url.URL) *url.URL {
	t := *f.up
	switch u.Path {
	case "", "/", "/mcp", "/mcp/", f.up.Path:
	case prmPath + "/mcp", prmPath + "/mcp/":
		// The host derived the metadata's path from the proxy's endpoint (/mcp); the server's
		// document is under its own endpoint's path (RFC 9728 §3.1).
		t.Path, t.RawPath = prmPath+strings.TrimSuffix(f.up.Path, "/"), ""
		t.RawQuery = ""
	default:
		t.Path, t.RawPath = u.Path, u.RawPath
		t.RawQuery = ""
	}
	if u.RawQuery != "" {
		if t.RawQuery != "" {
			t.RawQuery += "&"
		}
		t.RawQuery += u.RawQuery
	}
	return &t
}

// prmPath is where RFC 9728 protected resource metadata lives.
const prmPath = "/.well-known/oauth-protected-resource"

func (f *httpFront) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL = f.target(pr.In.URL)
	pr.Out.Host = ""
	// The user's credentials go to the MCP endpoint only: a metadata document is public, and
	// ServeHTTP has refused every request that is not a host's before this point.
	if endpoint, _ := f.route(pr.In.URL); endpoint {
		for k, v := range f.extra {
			if len(pr.Out.Header.Values(k)) == 0 {
				pr.Out.Header[http.CanonicalHeaderKey(k)] = v
			}
		}
	}
	// The proxy reads what it forwards, so it can only accept encodings it can decode; the
	// others are dropped from Accept-Encoding (the server then sends something readable).
	if ae := pr.Out.Header.Values("Accept-Encoding"); len(ae) > 0 {
		var keep []string
		for _, v := range ae {
			for _, tok := range strings.Split(v, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(tok), ";")
				switch strings.ToLower(strings.TrimSpace(name)) {
				case "gzip", "x-gzip", "deflate", "identity":
					keep = append(keep, strings.TrimSpace(tok))
				}
			}
		}
		if len(keep) == 0 {
			pr.Out.Header.Del("Accept-Encoding")
		} else {
			pr.Out.Header.Set("Accept-Encoding", strings.Join(keep, ", "))
		}
	}
}

// modifyResponse looks at the server's answer before the reverse proxy sends it on: an event
// stream is relayed through the proxy's reader, a JSON answer to a POST is read and inspected.
func (f *httpFront) modifyResponse(resp *http.Response) error {
	p := f.p
	x, _ := resp.Request.Context().Value(ctxKey{}).(*exchange)
	if x == nil {
		return nil
	}
	f.responseHead(x, resp)
	if resp.Body == nil || resp.Body == http.NoBody || resp.Request.Method == http.MethodHead {
		return nil
	}
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		if enc != "" && enc != "identity" {
			p.notice(x.h, "an event stream compressed with %q was forwarded without being inspected", enc)
			return nil
		}
		resp.Body = newSSERelay(resp.Body, p, x.h, x)
		return nil
	}
	if x.httpMethod != http.MethodPost {
		return nil
	}
	f.inspectAnswer(x, resp, enc)
	return nil
}

// responseHead takes the status and headers of the server's answer: the exchange's status, the
// session an initialize opened, the record's http-response line.
func (f *httpFront) responseHead(x *exchange, resp *http.Response) {
	p := f.p
	x.mu.Lock()
	x.status = resp.StatusCode
	x.mu.Unlock()
	if x.method() == "initialize" && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			p.session(x, sid)
		}
	}
	if p.rec != nil {
		p.rec.line(false, x.h.label(), &wirelog.Line{Kind: wirelog.KindHTTPResponse, Status: new(resp.StatusCode),
			LatencyMs: wirelog.Latency(p.opts.Now().Sub(x.start)),
			Headers:   resp.Header, ContentType: new(resp.Header.Get("Content-Type"))})
	}
}

// inspectAnswer reads one JSON answer (Content-Encoding enc) whole and looks at it (a
// CreateTaskResult goes to the ledger now), then puts the same bytes back for the reverse proxy
// to send. What is held counts against the proxy's memory budget until ServeHTTP ends; an
// answer too large to hold passes uninspected.
func (f *httpFront) inspectAnswer(x *exchange, resp *http.Response, enc string) {
	p := f.p
	data, held, err := p.readHeld(resp.Body, p.opts.MaxInspect)
	x.mu.Lock()
	x.held += held
	x.mu.Unlock()
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, errOverBudget):
		if errors.Is(err, errTooLarge) {
			p.notice(x.h, "an answer larger than %d bytes was forwarded without being inspected", p.opts.MaxInspect)
		} else {
			p.notice(x.h, "an answer was forwarded without being inspected: the proxy holds %d bytes of messages already, its limit", p.mem.max)
		}
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		return
	case err != nil:
		// The server broke off mid-answer: the host gets what came and the same break.
		x.mu.Lock()
		x.err = "the server's answer broke off: " + err.Error()
		x.mu.Unlock()
		p.notice(x.h, "the server's answer broke off: %v", err)
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), errReader{err}), resp.Body}
		return
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	plain := data
	if enc == "gzip" || enc == "x-gzip" || enc == "deflate" {
		if plain, err = decompress(enc, data); err != nil {
			p.notice(x.h, "an answer compressed with %q could not be decoded for inspection: %v", enc, err)
			return
		}
	}
	if len(bytes.TrimSpace(plain)) == 0 {
		return
	}
	if p.rec != nil {
		p.rec.line(false, x.h.label(), frameLine(plain))
	}
	p.fromServer(x.h, x, plain)
}

func (f *httpFront) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	x, _ := r.Context().Value(ctxKey{}).(*exchange)
	if r.Context().Err() != nil {
		if x != nil {
			x.mu.Lock()
			x.err = "the host went away"
			x.mu.Unlock()
		}
		return
	}
	var h *host
	if x != nil {
		h = x.h
		x.mu.Lock()
		x.status, x.err = http.StatusBadGateway, err.Error()
		x.mu.Unlock()
	}
	msg := fmt.Sprintf("the server %s could not be reached: %v", redact.URL(f.up.String()), redact.Text(err.Error()))
	f.p.notice(h, "%s", msg)
	http.Error(w, "mcptask proxy: "+msg, http.StatusBadGateway)
}

// copyBuffers lends the reverse proxy its copy buffers; without a pool it allocates (and
// zeroes) 32 KiB for every answer, which at a thousand polls a second is most of the garbage.
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

func (copyBuffers) Get() []byte  { return copyBufferPool.Get().(*[32 << 10]byte)[:] }
func (copyBuffers) Put(b []byte) { copyBufferPool.Put((*[32 << 10]byte)(b)) }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func decompress(enc string, data []byte) ([]byte, error) {
	var r io.ReadCloser
	var err error
	if enc == "deflate" {
		r, err = zlib.NewReader(bytes.NewReader(data))
	} else {
		r, err = gzip.NewReader(bytes.NewReader(data))
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, DefaultMaxInspect))
}

// mediaType returns the lower-case type/subtype of a Content-Type value.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
