package rpc

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// tracer writes the --trace log and the --record stream: one wirelog.Line per HTTP request
// and response, JSON-RPC frame and SSE event, redacted and made safe for a terminal by
// internal/wirelog, and lines of commentary of its own.
type tracer struct {
	log *wirelog.Log
	red *redact.Redactor
}

func newTracer(o *TraceOptions) *tracer {
	if o == nil || (o.W == nil && o.Record == nil) {
		return nil
	}
	red := o.Redact
	if red == nil {
		red = redact.New(o.Secret)
	}
	return &tracer{log: &wirelog.Log{Record: o.Record, Trace: o.W, Redact: red}, red: red}
}

func (t *tracer) write(l *wirelog.Line) {
	if t != nil {
		t.log.Write(l)
	}
}

func (t *tracer) printf(format string, args ...any) {
	if t != nil {
		t.log.Tracef(format, args...)
	}
}

// request logs an outgoing HTTP request with its body.
func (t *tracer) request(req *http.Request, data []byte) {
	if t == nil {
		return
	}
	l := &wirelog.Line{Kind: wirelog.KindHTTPRequest, Dir: wirelog.DirSend, HTTPMethod: req.Method, URL: req.URL.String(), Headers: headersOf(req.Header)}
	if len(data) > 0 {
		l.Body, l.TaskID, l.Method = wirelog.Body(data), new(wirelog.TaskIDOf(data)), new(req.Header.Get("Mcp-Method"))
	}
	t.write(l)
}

// response logs the status line and headers of an HTTP response.
func (t *tracer) response(resp *http.Response, took time.Duration) {
	if t == nil {
		return
	}
	t.write(&wirelog.Line{Kind: wirelog.KindHTTPResponse, Dir: wirelog.DirRecv, Proto: resp.Proto, Status: new(resp.StatusCode), LatencyMs: wirelog.Latency(took),
		Headers: headersOf(resp.Header), ContentType: new(resp.Header.Get("Content-Type"))})
}

// headersOf is h for a line, where nil headers are written as {}.
func headersOf(h http.Header) http.Header {
	if h == nil {
		return http.Header{}
	}
	return h
}

// frame logs one JSON-RPC frame or SSE event; dir is ">" (sent) or "<" (received), what
// names the event.
func (t *tracer) frame(dir, what string, data []byte) {
	if t == nil {
		return
	}
	l := &wirelog.Line{Kind: wirelog.KindFrame, Dir: map[string]string{">": wirelog.DirSend, "<": wirelog.DirRecv}[dir]}
	if what != "" {
		l.Kind, l.SSE = wirelog.KindSSEEvent, what
	}
	l.Body, l.TaskID = wirelog.Body(data), new(wirelog.TaskIDOf(data))
	t.write(l)
}

// exchange writes the --record summary of one request/response exchange: the JSON-RPC method,
// the task it concerns, the HTTP status, the latency from request to response (for a stream,
// to its last event), and the outcome.
func (t *tracer) exchange(req *Message, reqBody []byte, status int, took time.Duration, resp *Message, err error) {
	if t == nil || t.log.Record == nil {
		return
	}
	l := &wirelog.Line{Kind: wirelog.KindHTTPExchange, Method: new(req.Method), ID: wirelog.ID(req.ID), Status: new(status),
		LatencyMs: wirelog.Latency(took)}
	task := wirelog.TaskIDOf(reqBody)
	switch {
	case err != nil:
		l.Error = err.Error()
	case resp != nil && resp.Error != nil:
		l.RPCError, _ = json.Marshal(resp.Error) // redacted whole, data included
	}
	if resp != nil && task == "" {
		if raw, err := json.Marshal(resp); err == nil {
			task = wirelog.TaskIDOf(raw)
		}
	}
	if task != "" {
		l.TaskID = &task
	}
	t.write(l)
}

// authBody is what the trace shows of an OAuth body: a form or JSON body redacted, and no
// other body at all (an HTML page may quote a redirect URL with its code in a way no rule
// can see).
func (t *tracer) authBody(contentType string, data []byte) []byte {
	if len(data) == 0 {
		return nil
	}
	mt := mediaType(contentType)
	switch mt {
	case "application/x-www-form-urlencoded":
		return t.red.Form(data)
	case "application/json", "":
		if !json.Valid(data) {
			return nil
		}
		return t.red.JSON(data)
	}
	if strings.HasSuffix(mt, "+json") && json.Valid(data) {
		return t.red.JSON(data)
	}
	return nil
}

// NewTraceTransport wraps base so that the exchanges it carries (mcptask's OAuth traffic:
// metadata, registration, authorization and token requests) appear in the --trace log and
// the --record file, with Authorization headers and OAuth secrets redacted. It returns base
// when o traces nothing.
func NewTraceTransport(base http.RoundTripper, o *TraceOptions) http.RoundTripper {
	t := newTracer(o)
	if t == nil {
		return base
	}
	return &traceTransport{base: base, t: t}
}

type traceTransport struct {
	base http.RoundTripper
	t    *tracer
}

func (tt *traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(io.LimitReader(rc, 64<<10))
			rc.Close()
		}
	}
	red := tt.t.red
	hdrs := red.Headers(req.Header) // learns the credentials this request carries
	body = tt.t.authBody(req.Header.Get("Content-Type"), body)
	l := &wirelog.Line{Kind: wirelog.KindAuthRequest, Dir: wirelog.DirSend, HTTPMethod: req.Method, URL: req.URL.String(), Headers: hdrs}
	if len(body) > 0 {
		l.Body = wirelog.TextBody(string(body))
	}
	tt.t.write(l)
	start := time.Now()
	resp, err := tt.base.RoundTrip(req)
	if err != nil {
		tt.t.printf("! [auth] %s %s: %s\n", termsafe.Line(req.Method), termsafe.Line(l.URL), termsafe.Line(red.Text(err.Error())))
		return nil, err
	}
	took := time.Since(start)
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), rest), rest}
	hdr := red.Headers(resp.Header)
	if loc := hdr.Get("Location"); loc != "" {
		hdr.Set("Location", red.URL(loc)) // a relative redirect with its code
	}
	rl := &wirelog.Line{Kind: wirelog.KindAuthResponse, Dir: wirelog.DirRecv, Proto: resp.Proto, Status: new(resp.StatusCode), LatencyMs: wirelog.Latency(took), Headers: hdr}
	if shown := tt.t.authBody(resp.Header.Get("Content-Type"), data); len(shown) > 0 && rerr == nil {
		rl.Body = wirelog.TextBody(string(shown))
	}
	tt.t.write(rl)
	return resp, nil
}

// Note writes one line of commentary to the --trace log and the --record file (kind
// "note"): what the OAuth client decided and why.
func Note(o *TraceOptions, msg string) {
	t := newTracer(o)
	if t == nil {
		return
	}
	t.write(&wirelog.Line{Kind: wirelog.KindNote, Note: msg})
}
