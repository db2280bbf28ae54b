package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Size caps that keep a hostile or broken server from exhausting mcptask's memory.
const (
	DefaultMaxBodyBytes = 32 << 20
	DefaultMaxLineBytes = 16 << 20
	// DefaultMaxConnsPerHost bounds the connections to one server, however many tasks are
	// polled at once.
	DefaultMaxConnsPerHost = 8
)

// HTTPOptions configures an HTTPTransport.
type HTTPOptions struct {
	// Header is sent on every request: the user's --header values and the bearer token. These
	// are secrets; traces redact them and nothing stores them.
	Header http.Header
	// Insecure turns TLS certificate verification off (--insecure).
	Insecure bool
	// Trace, when set, receives the human-readable --trace log.
	Trace *TraceOptions
	// MaxBodyBytes caps a JSON response body and a single SSE event (default 32 MiB).
	MaxBodyBytes int64
	// MaxLineBytes caps one SSE line (default 16 MiB).
	MaxLineBytes int
	// MaxConnsPerHost caps connections to the server (default 8).
	MaxConnsPerHost int
	// HTTPClient replaces the client mcptask builds; for sharing one pool between transports.
	// Its redirect policy is replaced by CheckRedirect whatever it was.
	HTTPClient *http.Client
}

// HTTPTransport speaks Streamable HTTP (C25-TRANS §Streamable HTTP, C26-HTTP) to one MCP
// endpoint over one keep-alive connection pool. It handles JSON and SSE responses, carries the
// 2025-11-25 MCP-Session-Id, delivers server-to-client requests met on SSE streams to the
// Handler and POSTs the answers back, and resumes a 2025-11-25 stream that broke after event ids
// were seen.
type HTTPTransport struct {
	url    string
	client *http.Client
	own    bool
	hdr    http.Header
	trace  *tracer
	maxB   int64
	maxL   int

	mu      sync.Mutex
	session string
	version string // last MCP-Protocol-Version sent, for the DELETE and stream reconnection
	handler Handler
	keep    bool
	closed  bool
	gs      *getStream // the 2025-11-25 standalone GET stream (getstream.go)
}

// NewHTTPTransport checks rawURL and builds a transport for it. No connection is opened until
// the first request.
func NewHTTPTransport(rawURL string, opts HTTPOptions) (*HTTPTransport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("invalid server URL %q: %v", redact.URL(rawURL), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid server URL %q: scheme must be http or https", redact.URL(rawURL))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid server URL %q: no host", redact.URL(rawURL))
	}
	t := &HTTPTransport{
		url:   rawURL,
		hdr:   opts.Header.Clone(),
		trace: newTracer(opts.Trace),
		maxB:  opts.MaxBodyBytes,
		maxL:  opts.MaxLineBytes,
	}
	if t.maxB <= 0 {
		t.maxB = DefaultMaxBodyBytes
	}
	if t.maxL <= 0 {
		t.maxL = DefaultMaxLineBytes
	}
	if opts.HTTPClient != nil {
		// A copy shares the pool (its Transport) and gets the one redirect policy: a client
		// built elsewhere cannot lose it.
		c := *opts.HTTPClient
		c.CheckRedirect = CheckRedirect
		c.Jar = nil
		t.client = &c
	} else {
		t.client = NewHTTPClient(NewPool(opts.Insecure, opts.MaxConnsPerHost))
		t.own = true
	}
	return t, nil
}

// NewPool returns an http.RoundTripper with mcptask's pool settings: keep-alive, at most
// maxConns connections per host (DefaultMaxConnsPerHost when 0), proxy from the environment,
// and TLS verification unless insecure.
func NewPool(insecure bool, maxConns int) *http.Transport {
	if maxConns <= 0 {
		maxConns = DefaultMaxConnsPerHost
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost = maxConns
	tr.MaxIdleConnsPerHost = maxConns
	tr.IdleConnTimeout = 90 * time.Second
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for --insecure
	}
	return tr
}

// URL returns the endpoint.
func (t *HTTPTransport) URL() string { return t.url }

// SetHandler implements Transport.
func (t *HTTPTransport) SetHandler(h Handler) { t.mu.Lock(); t.handler = h; t.mu.Unlock() }

// SessionID implements SessionHolder.
func (t *HTTPTransport) SessionID() string { t.mu.Lock(); defer t.mu.Unlock(); return t.session }

// SetSessionID implements SessionHolder; "" forgets the session.
func (t *HTTPTransport) SetSessionID(id string) { t.mu.Lock(); t.session = id; t.mu.Unlock() }

// KeepSession(true) makes Close leave the 2025-11-25 session open (no DELETE), because a task
// that is still running is bound to it and a later `mcptask get` or `resume` will reuse its
// id. KeepSession(false) restores the DELETE.
func (t *HTTPTransport) KeepSession(keep bool) { t.mu.Lock(); t.keep = keep; t.mu.Unlock() }

// Close ends the session with DELETE (C25-TRANS §Session Management: clients that no longer
// need a session SHOULD send DELETE), unless KeepSession was called, and releases the pool.
func (t *HTTPTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	sid, keep, version := t.session, t.keep, t.version
	t.mu.Unlock()
	t.stopStandalone()
	if sid != "" && !keep {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.url, nil)
		if err == nil {
			t.setCommon(req.Header, nil)
			req.Header.Set("Mcp-Session-Id", sid)
			if version != "" {
				req.Header.Set("Mcp-Protocol-Version", version)
			}
			t.trace.request(req, nil)
			start := time.Now()
			if resp, err := t.client.Do(req); err == nil {
				t.trace.response(resp, time.Since(start))
				drain(resp.Body)
			}
		}
		cancel()
	}
	if t.own {
		t.client.CloseIdleConnections()
	}
	return nil
}

// setCommon puts the user's headers on h, then the request headers the client computed. The
// value slices are shared, not copied: net/http only reads them, and this runs on every poll.
func (t *HTTPTransport) setCommon(h http.Header, extra http.Header) {
	for k, v := range t.hdr {
		h[k] = v
	}
	for k, v := range extra {
		h[http.CanonicalHeaderKey(k)] = v
	}
}

var (
	contentTypeJSON = []string{"application/json"}
	acceptBoth      = []string{"application/json, text/event-stream"}
)

// post sends body as one POST and returns the response with its body still open.
func (t *HTTPTransport) post(ctx context.Context, body []byte, hdr http.Header) (*http.Response, bool, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, false, ErrClosed
	}
	sid := t.session
	if v := hdr.Get("Mcp-Protocol-Version"); v != "" {
		t.version = v
	}
	t.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrTransport, err)
	}
	t.setCommon(req.Header, hdr)
	req.Header["Content-Type"] = contentTypeJSON
	// C25-TRANS / C26-HTTP §Sending Messages: the client MUST include an Accept header listing
	// both application/json and text/event-stream.
	req.Header["Accept"] = acceptBoth
	if sid != "" {
		// C25-TRANS §Session Management: MUST include it in all subsequent HTTP requests.
		req.Header["Mcp-Session-Id"] = []string{sid}
	}
	t.trace.request(req, body)
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			if ae := authFailure(err); ae != nil {
				// The context ended during OAuth (metadata discovery, registration, a
				// refresh): say so, or the wait would seem to be the MCP server's.
				return nil, false, fmt.Errorf("%w (during OAuth: %s)", ctx.Err(), termsafe.Line(ae.Error()))
			}
			return nil, false, ctx.Err()
		}
		if ae := authFailure(err); ae != nil {
			return nil, false, ae
		}
		var re *RedirectError
		if errors.As(err, &re) {
			return nil, false, re
		}
		if ue := unreachable(err); ue != nil {
			return nil, false, ue
		}
		return nil, false, fmt.Errorf("%w: %s", ErrTransport, termsafe.Line(redact.Text(err.Error())))
	}
	t.trace.response(resp, time.Since(start))
	return resp, sid != "", nil
}

// unreachable is err as an UnreachableError when nothing answered at all: the connection was
// refused, or the host name is unknown; nil otherwise.
func unreachable(err error) error {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return &UnreachableError{Addr: termsafe.Line(dns.Name)}
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) && op.Addr != nil {
		return &UnreachableError{Addr: op.Addr.String(), Refused: true}
	}
	return nil
}

// authFailure returns the error an authorizing http.RoundTripper (internal/auth) gave up
// with, unwrapped from net/http's *url.Error so that its type and reason survive; nil for
// any other failure.
func authFailure(err error) error {
	if !errors.Is(err, ErrAuth) {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Notef writes one explanatory line to the --trace log (the Client's era choice, a cache
// hit), when there is one.
func (t *HTTPTransport) Notef(format string, args ...any) {
	t.trace.printf("# "+format+"\n", args...)
}

// validSessionID checks the C25-TRANS rule: only visible ASCII (0x21 to 0x7E).
func validSessionID(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return len(s) <= 1024
}

// RoundTrip implements Transport.
func (t *HTTPTransport) RoundTrip(ctx context.Context, req *Message, hdr http.Header) (out *Message, err error) {
	body, err := req.Encode()
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", req.Method, err)
	}
	start, status := time.Now(), 0
	if t.trace != nil {
		// --record: one summary line per exchange, after its request, response and events.
		defer func() { t.trace.exchange(req, body, status, time.Since(start), out, err) }()
	}
	resp, hadSession, err := t.post(ctx, body, hdr)
	if err != nil {
		return nil, err
	}
	status = resp.StatusCode
	defer drain(resp.Body)
	// C25-TRANS §Session Management: a server MAY assign a session ID "in an Mcp-Session-Id
	// header on the HTTP response containing the InitializeResult"; on any other response
	// the header means nothing (some servers echo it everywhere, 2026-07-28 ones included).
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && req.Method == "initialize" && resp.StatusCode/100 == 2 && validSessionID(id) {
		t.mu.Lock()
		t.session = id
		t.mu.Unlock()
	}
	if resp.StatusCode/100 != 2 {
		err := t.statusError(resp, hadSession, req)
		var sm *statusMessage
		if errors.As(err, &sm) {
			return sm.m, nil
		}
		return nil, err
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return nil, fmt.Errorf("%w: server answered %d with no body to the %s request", ErrMalformed, resp.StatusCode, req.Method)
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		return t.readStream(ctx, resp.Body, req, hdr)
	case "application/json", "":
		data, err := readCapped(resp.Body, t.maxB)
		if err != nil {
			return nil, err
		}
		t.trace.frame("<", "", data)
		return t.matchJSON(ctx, data, req, hdr)
	case "text/html", "application/xhtml+xml", "text/plain":
		// A web server, not an MCP endpoint: say so, and never show its page.
		return nil, &NotMCPError{What: mediaType(resp.Header.Get("Content-Type"))}
	default:
		return nil, fmt.Errorf("%w: unexpected Content-Type %q for %s", ErrMalformed, termsafe.Line(resp.Header.Get("Content-Type")), req.Method)
	}
}

// matchJSON decodes a JSON response body. A server could put a server-to-client request or a
// notification in a JSON body (it should not); those go to the handler and the wait continues
// only if the body held nothing else.
func (t *HTTPTransport) matchJSON(ctx context.Context, data []byte, req *Message, hdr http.Header) (*Message, error) {
	m, err := decodeMessage(data, true) // data is this response's own body
	if errors.Is(err, errNotJSONRPC) {
		return nil, &NotMCPError{What: "JSON that is not JSON-RPC"}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Method, err)
	}
	if m.IsResponse() {
		if !sameID(m.ID, req.ID) && !isJSONNull(m.ID) {
			return nil, fmt.Errorf("%w: response id %s does not match request id %s", ErrMalformed, snippet(m.ID), snippet(req.ID))
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w: %s answered with a %s instead of a response", ErrMalformed, req.Method, termsafe.Line(m.Method))
}

// statusError turns a non-2xx answer into the error the Client acts on.
func (t *HTTPTransport) statusError(resp *http.Response, hadSession bool, req *Message) error {
	data, _ := readCapped(resp.Body, 64<<10)
	if len(data) > 0 {
		t.trace.frame("<", "", data)
	}
	body := bodySnippet(data)
	if mt := mediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/xhtml+xml" {
		body = "(a web page, not shown)" // a whole page is no message
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &HTTPError{Status: resp.StatusCode, Body: body, WWWAuthenticate: termsafe.Line(resp.Header.Get("Www-Authenticate"))}
	}
	// C25-TRANS §Session Management: a 404 to a request carrying a session id means the
	// session ended; the client MUST start a new one.
	if resp.StatusCode == http.StatusNotFound && hadSession {
		return fmt.Errorf("%w (HTTP 404 to session %s)", ErrSessionExpired, termsafe.Line(t.SessionID()))
	}
	// C26-HTTP: the status of most JSON-RPC errors is unspecified, so always parse the body.
	// A body with id null (a server that rejected the request before reading its id) counts
	// too: it is how a legacy server answers the server/discover probe.
	if m, err := DecodeMessage(data); err == nil && m.IsResponse() && m.Error != nil &&
		(sameID(m.ID, req.ID) || isJSONNull(m.ID) || len(m.ID) == 0) {
		m.Error.HTTPStatus = resp.StatusCode
		return &statusMessage{m}
	}
	he := &HTTPError{Status: resp.StatusCode, Body: body}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		he.RetryAfter = parseRetryAfter(ra, time.Now())
	}
	return he
}

// statusMessage carries a JSON-RPC error response that arrived with a non-2xx status; RoundTrip
// returns it as a message, per the Transport contract.
type statusMessage struct{ m *Message }

func (s *statusMessage) Error() string { return s.m.Error.Error() }

// readStream reads an SSE response until the response to req arrives. Server requests and
// notifications met on the way go to the handler. When the stream breaks after event ids were
// seen (2025-11-25 resumability) it reconnects with GET and Last-Event-ID; otherwise the request
// is lost (ErrStreamBroken) and the Client decides whether to re-issue it.
func (t *HTTPTransport) readStream(ctx context.Context, body io.ReadCloser, req *Message, hdr http.Header) (*Message, error) {
	const maxReconnects = 5
	reconnects := 0
	lastID, retry, hasRetry := "", time.Duration(0), false
	for {
		sr := newSSEReader(body, t.maxL, int(min(t.maxB, int64(^uint(0)>>1))))
		sr.lastID, sr.sawID = lastID, lastID != ""
		sr.retry, sr.hasRetry = retry, hasRetry
		m, err := t.consume(ctx, sr, req, hdr)
		if m != nil || err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isConnReset(err) {
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return m, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The stream ended without the response. 2026-07-28 streams carry no event ids, so
		// they always end here: the request is lost (C26-CHLOG major item 9).
		lastID, retry, hasRetry = sr.lastID, sr.retry, sr.hasRetry
		if lastID == "" || reconnects >= maxReconnects {
			return nil, fmt.Errorf("%w (%s)", ErrStreamBroken, req.Method)
		}
		reconnects++
		wait := time.Second
		if hasRetry {
			wait = retry
		}
		// C25-TRANS §Resumability and Redelivery: wait the retry delay, then GET with
		// Last-Event-ID.
		timer := time.NewTimer(min(wait, 30*time.Second))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		nb, err := t.reconnect(ctx, lastID, hdr)
		if err != nil {
			return nil, fmt.Errorf("%w (%s): resuming the stream failed: %v", ErrStreamBroken, req.Method, err)
		}
		body.Close()
		body = nb
		defer nb.Close()
	}
}

func isConnReset(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || strings.Contains(err.Error(), "connection reset")
}

// consume reads events until the response to req, an error, or the end of the stream (io.EOF).
func (t *HTTPTransport) consume(ctx context.Context, sr *sseReader, req *Message, hdr http.Header) (*Message, error) {
	for {
		ev, err := sr.Next()
		if err != nil {
			return nil, err
		}
		if ev.Event != "" && ev.Event != "message" {
			t.trace.frame("<", "event "+ev.Event, ev.Data)
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		t.trace.frame("<", "sse id="+ev.ID, ev.Data)
		m, err := DecodeMessage(ev.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: SSE event: %w", req.Method, err)
		}
		switch {
		case m.IsResponse():
			if sameID(m.ID, req.ID) {
				return m, nil
			}
			// A response to some other request: not ours to handle; ignore it.
		case m.IsRequest():
			t.answer(ctx, m, hdr)
		default:
			if h := t.getHandler(); h != nil {
				h(ctx, m)
			}
		}
	}
}

func (t *HTTPTransport) getHandler() Handler { t.mu.Lock(); defer t.mu.Unlock(); return t.handler }

// answer runs the handler for a server-to-client request and POSTs the response back
// (C25-TRANS: each client-to-server message, including a response, is its own POST).
func (t *HTTPTransport) answer(ctx context.Context, m *Message, hdr http.Header) {
	resp := &Message{Error: &Error{Code: CodeMethodNotFound, Message: "mcptask does not handle " + m.Method}}
	if h := t.getHandler(); h != nil {
		if resp = h(ctx, m); resp == nil {
			return // left unanswered (NoResponse)
		}
	}
	resp.JSONRPC = "2.0"
	resp.ID = m.ID
	resp.Method = ""
	h := http.Header{}
	if v := hdr.Get("Mcp-Protocol-Version"); v != "" {
		h.Set("Mcp-Protocol-Version", v)
	}
	if err := t.Send(ctx, resp, h); err != nil {
		t.trace.printf("! answering %s failed: %s\n", termsafe.Line(m.Method), termsafe.Line(err.Error()))
	}
}

// reconnect opens the GET stream that resumes after lastID.
func (t *HTTPTransport) reconnect(ctx context.Context, lastID string, hdr http.Header) (io.ReadCloser, error) {
	resp, err := t.getSSE(ctx, lastID, hdr.Get("Mcp-Protocol-Version"))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		drain(resp.Body)
		return nil, fmt.Errorf("GET with Last-Event-ID answered HTTP %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// getSSE sends a GET for an SSE stream of the session: a resumption after lastID, or the
// standalone stream when lastID is "". It returns the response with its body open.
func (t *HTTPTransport) getSSE(ctx context.Context, lastID, version string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, err
	}
	t.setCommon(req.Header, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-Id", lastID)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if sid := t.SessionID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	t.trace.request(req, nil)
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	t.trace.response(resp, time.Since(start))
	return resp, nil
}

// Send implements Transport: a notification or a response, answered by 202 (or any 2xx).
func (t *HTTPTransport) Send(ctx context.Context, msg *Message, hdr http.Header) error {
	body, err := msg.Encode()
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	resp, hadSession, err := t.post(ctx, body, hdr)
	if err != nil {
		return err
	}
	defer drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		err := t.statusError(resp, hadSession, msg)
		var sm *statusMessage
		if errors.As(err, &sm) {
			return sm.m.Error
		}
		return err
	}
	return nil
}

// HTTPError extras live here so that jsonrpc.go stays about JSON-RPC.

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// mediaType returns the lower-case type/subtype of a Content-Type value, without its
// parameters (written out because mime.ParseMediaType builds a map on every response).
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// readCapped reads all of r, failing with ErrTooLarge past max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	data := make([]byte, 0, 1024)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > max {
			return nil, fmt.Errorf("%w: response body larger than %d bytes", ErrTooLarge, max)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: reading response: %v", ErrTransport, err)
		}
	}
}

// drain reads a little of what is left so the connection can be reused, then closes.
func drain(rc io.ReadCloser) {
	buf := drainBufs.Get().(*[512]byte)
	for range 128 { // at most 64 KiB
		if _, err := rc.Read(buf[:]); err != nil {
			break
		}
	}
	drainBufs.Put(buf)
	_ = rc.Close()
}

var drainBufs = sync.Pool{New: func() any { return new([512]byte) }}

func bodySnippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return termsafe.Line(s)
}
