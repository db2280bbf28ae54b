package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// Redacted replaces a secret in traces.
const Redacted = "[redacted]"

// alwaysSecret are header names whose values are credentials on every server.
var alwaysSecret = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key"}

// RedactHeader returns a copy of h in which the values of Authorization, cookies and the headers
// named in secret are replaced by "[redacted]". Header names compare case-insensitively.
func RedactHeader(h http.Header, secret []string) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if isSecretHeader(k, secret) {
			red := make([]string, len(v))
			for i := range red {
				red[i] = Redacted
			}
			out[k] = red
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

func isSecretHeader(name string, secret []string) bool {
	for _, s := range alwaysSecret {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	for _, s := range secret {
		if strings.EqualFold(name, strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

// RedactURL hides a password in the userinfo of u, so that a URL such as
// https://user:token@host/mcp never reaches a trace or an error message.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	return p.String()
}

// tracer writes the --trace log: one line per HTTP request and response line, header and
// JSON-RPC frame, each prefixed by its direction. Every byte that came from the server goes
// through termsafe first, since the trace is read on a terminal.
type tracer struct {
	mu     sync.Mutex
	w      io.Writer
	rec    io.Writer
	secret []string
}

func newTracer(o *TraceOptions) *tracer {
	if o == nil || (o.W == nil && o.Record == nil) {
		return nil
	}
	return &tracer{w: o.W, rec: o.Record, secret: o.Secret}
}

// record writes one NDJSON line of the --record stream.
func (t *tracer) record(line map[string]any) {
	if t == nil || t.rec == nil {
		return
	}
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
	return t.headersOf(prefix, RedactHeader(h, t.secret))
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
	line := map[string]any{"kind": "http-request", "dir": "send", "httpMethod": req.Method, "url": RedactURL(req.URL.String()),
		"headers": RedactHeader(req.Header, t.secret)}
	if len(data) > 0 {
		line["body"], line["taskId"] = body(data)
		line["method"] = req.Header.Get("Mcp-Method")
	}
	t.record(line)
	body := data
	s := fmt.Sprintf("> %s %s\n", req.Method, termsafe.Line(RedactURL(req.URL.String()))) + t.headers(">", req.Header)
	if len(body) > 0 {
		s += "> " + termsafe.Line(string(body)) + "\n"
	}
	t.printf("%s", s)
}

// response logs the status line and headers of an HTTP response.
func (t *tracer) response(resp *http.Response, took time.Duration) {
	if t == nil {
		return
	}
	t.record(map[string]any{"kind": "http-response", "dir": "recv", "status": resp.StatusCode, "latencyMs": float64(took.Microseconds()) / 1000,
		"headers": RedactHeader(resp.Header, t.secret), "contentType": resp.Header.Get("Content-Type")})
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
	if what != "" {
		t.printf("%s [%s] %s\n", dir, termsafe.Line(what), termsafe.Line(string(data)))
		return
	}
	t.printf("%s %s\n", dir, termsafe.Line(string(data)))
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
		line["rpcError"] = resp.Error
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

// oauthSecrets are the OAuth parameters and JSON members whose values are credentials: they
// are redacted wherever they appear in a traced URL, form body, JSON body or Location header.
var oauthSecrets = []string{"code", "code_verifier", "refresh_token", "client_secret", "client_assertion",
	"access_token", "id_token", "assertion", "subject_token", "actor_token", "device_code",
	"token"} // RFC 7009 revocation (auth logout)

func isOAuthSecret(name string) bool {
	for _, s := range oauthSecrets {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// RedactOAuthURL hides the values of OAuth secrets in u's query (an authorization response
// redirect carries the code there) and a password in its userinfo.
func RedactOAuthURL(u string) string {
	p, err := url.Parse(RedactURL(u))
	if err != nil || p.RawQuery == "" {
		return RedactURL(u)
	}
	q := p.Query()
	changed := false
	for k := range q {
		if isOAuthSecret(k) {
			q[k] = []string{Redacted}
			changed = true
		}
	}
	if changed {
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// RedactOAuthBody hides OAuth secrets in a form-encoded or JSON body. Any other body (an
// HTML page, which may quote a redirect URL with its code) is left out of the trace
// altogether: nil.
func RedactOAuthBody(contentType string, data []byte) []byte {
	if len(data) == 0 {
		return nil
	}
	switch mediaType(contentType) {
	case "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(data))
		if err != nil {
			return []byte(Redacted)
		}
		for k := range q {
			if isOAuthSecret(k) {
				q[k] = []string{Redacted}
			}
		}
		return []byte(q.Encode())
	case "application/json", "":
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			if json.Valid(data) && !bytes.ContainsAny(data, "{") {
				return data // a bare JSON value holds no named secret
			}
			return nil
		}
		red, _ := json.Marshal(Redacted)
		changed := false
		for k := range m {
			if isOAuthSecret(k) {
				m[k] = red
				changed = true
			}
		}
		if !changed {
			return data
		}
		out, err := json.Marshal(m)
		if err != nil {
			return []byte(Redacted)
		}
		return out
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
	body = RedactOAuthBody(req.Header.Get("Content-Type"), body)
	u := RedactOAuthURL(req.URL.String())
	line := map[string]any{"kind": "auth-request", "dir": "send", "httpMethod": req.Method, "url": u, "headers": RedactHeader(req.Header, tt.t.secret)}
	if len(body) > 0 {
		line["body"] = string(body)
	}
	tt.t.record(line)
	s := fmt.Sprintf("> [auth] %s %s\n", req.Method, termsafe.Line(u)) + tt.t.headers(">", req.Header)
	if len(body) > 0 {
		s += "> " + termsafe.Line(string(body)) + "\n"
	}
	tt.t.printf("%s", s)
	start := time.Now()
	resp, err := tt.base.RoundTrip(req)
	if err != nil {
		tt.t.printf("! [auth] %s %s: %s\n", req.Method, termsafe.Line(u), termsafe.Line(RedactOAuthURL(err.Error())))
		return nil, err
	}
	took := time.Since(start)
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), rest), rest}
	hdr := RedactHeader(resp.Header, tt.t.secret)
	if loc := hdr.Get("Location"); loc != "" {
		hdr.Set("Location", RedactOAuthURL(loc))
	}
	shown := RedactOAuthBody(resp.Header.Get("Content-Type"), data)
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
	t.record(map[string]any{"kind": "note", "note": msg})
	t.printf("! %s\n", termsafe.Line(msg))
}
