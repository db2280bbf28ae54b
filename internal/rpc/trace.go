package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// tracer writes the --trace log: one line per HTTP request and response line, header and
// JSON-RPC frame, each prefixed by its direction. Every byte that came from the server goes
// through termsafe first, since the trace is read on a terminal.
type tracer struct {
	mu  sync.Mutex
	w   io.Writer
	rec io.Writer
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
	return &tracer{w: o.W, rec: o.Record, red: red}
}

// record writes one NDJSON line of the --record stream.
func (t *tracer) record(line map[string]any) {
	if t == nil || t.rec == nil {
		return
	}
	t.red.Line(line)
	line["time"] = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec.Write(append(b, '\n'))
}

// body returns data as JSON when it is JSON, else as a string, and the task id it names.
func body(data []byte) (any, string) {
	if !json.Valid(data) {
		return string(data), ""
	}
	var probe struct {
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
		Result struct {
			TaskID string `json:"taskId"`
			Task   struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	_ = json.Unmarshal(data, &probe)
	id := probe.Params.TaskID
	if id == "" {
		id = probe.Result.TaskID
	}
	if id == "" {
		id = probe.Result.Task.TaskID
	}
	return json.RawMessage(data), id
}

func (t *tracer) printf(format string, args ...any) {
	if t == nil || t.w == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, format, args...)
}

func (t *tracer) headers(prefix string, h http.Header) string {
	return t.headersOf(prefix, t.red.Headers(h))
}

// headersOf renders already redacted headers.
func (t *tracer) headersOf(prefix string, h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(&b, "%s %s: %s\n", prefix, termsafe.Line(k), termsafe.Line(v))
		}
	}
	return b.String()
}

// request logs an outgoing HTTP request with its body.
func (t *tracer) request(req *http.Request, data []byte) {
	if t == nil {
		return
	}
	u := t.red.URL(req.URL.String())
	line := map[string]any{"kind": "http-request", "dir": "send", "httpMethod": req.Method, "url": u, "headers": req.Header}
	if len(data) > 0 {
		line["body"], line["taskId"] = body(data)
		line["method"] = req.Header.Get("Mcp-Method")
	}
	t.record(line)
	s := fmt.Sprintf("> %s %s\n", req.Method, termsafe.Line(u)) + t.headers(">", req.Header)
	if len(data) > 0 {
		s += "> " + termsafe.Line(string(t.red.JSON(data))) + "\n"
	}
	t.printf("%s", s)
}

// response logs the status line and headers of an HTTP response.
func (t *tracer) response(resp *http.Response, took time.Duration) {
	if t == nil {
		return
	}
	t.record(map[string]any{"kind": "http-response", "dir": "recv", "status": resp.StatusCode, "latencyMs": float64(took.Microseconds()) / 1000,
		"headers": resp.Header, "contentType": resp.Header.Get("Content-Type")})
	t.printf("< %s %s (%s)\n%s", termsafe.Line(resp.Proto), termsafe.Line(resp.Status), took.Round(time.Microsecond), t.headers("<", resp.Header))
}

// frame logs one JSON-RPC frame or SSE event; dir is ">" (sent) or "<" (received).
func (t *tracer) frame(dir, what string, data []byte) {
	if t == nil {
		return
	}
	line := map[string]any{"kind": "frame", "dir": map[string]string{">": "send", "<": "recv"}[dir]}
	if what != "" {
		line["kind"], line["sse"] = "sse-event", what
	}
	line["body"], line["taskId"] = body(data)
	t.record(line)
	if t.w == nil {
		return
	}
	shown := termsafe.Line(string(t.red.JSON(data)))
	if what != "" {
		t.printf("%s [%s] %s\n", dir, termsafe.Line(t.red.Text(what)), shown)
		return
	}
	t.printf("%s %s\n", dir, shown)
}

// exchange writes the --record summary of one request/response exchange: the JSON-RPC method,
// the task it concerns, the HTTP status, the latency from request to response (for a stream,
// to its last event), and the outcome.
func (t *tracer) exchange(req *Message, reqBody []byte, status int, took time.Duration, resp *Message, err error) {
	if t == nil || t.rec == nil {
		return
	}
	_, task := body(reqBody)
	line := map[string]any{"kind": "http-exchange", "method": req.Method, "id": req.ID, "status": status,
		"latencyMs": float64(took.Microseconds()) / 1000}
	if task != "" {
		line["taskId"] = task
	}
	switch {
	case err != nil:
		line["error"] = err.Error()
	case resp != nil && resp.Error != nil:
		line["rpcError"] = resp.Error // redacted whole by record, data included
	}
	if resp != nil && task == "" {
		if raw, err := json.Marshal(resp); err == nil {
			if _, id := body(raw); id != "" {
				line["taskId"] = id
			}
		}
	}
	t.record(line)
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
	u := red.URL(req.URL.String())
	line := map[string]any{"kind": "auth-request", "dir": "send", "httpMethod": req.Method, "url": u, "headers": hdrs}
	if len(body) > 0 {
		line["body"] = string(body)
	}
	tt.t.record(line)
	s := fmt.Sprintf("> [auth] %s %s\n", req.Method, termsafe.Line(u)) + tt.t.headersOf(">", hdrs)
	if len(body) > 0 {
		s += "> " + termsafe.Line(string(body)) + "\n"
	}
	tt.t.printf("%s", s)
	start := time.Now()
	resp, err := tt.base.RoundTrip(req)
	if err != nil {
		tt.t.printf("! [auth] %s %s: %s\n", req.Method, termsafe.Line(u), termsafe.Line(red.Text(err.Error())))
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
	shown := tt.t.authBody(resp.Header.Get("Content-Type"), data)
	rline := map[string]any{"kind": "auth-response", "dir": "recv", "status": resp.StatusCode, "latencyMs": float64(took.Microseconds()) / 1000, "headers": hdr}
	if len(shown) > 0 && rerr == nil {
		rline["body"] = string(shown)
	}
	tt.t.record(rline)
	s = fmt.Sprintf("< [auth] %s %s (%s)\n%s", termsafe.Line(resp.Proto), termsafe.Line(resp.Status), took.Round(time.Microsecond), tt.t.headersOf("<", hdr))
	if len(shown) > 0 {
		s += "< " + termsafe.Line(string(shown)) + "\n"
	}
	tt.t.printf("%s", s)
	return resp, nil
}

// Note writes one line of commentary to the --trace log and the --record file (kind
// "note"): what the OAuth client decided and why.
func Note(o *TraceOptions, msg string) {
	t := newTracer(o)
	if t == nil {
		return
	}
	msg = t.red.Text(msg)
	t.record(map[string]any{"kind": "note", "note": msg})
	t.printf("! %s\n", termsafe.Line(msg))
}
