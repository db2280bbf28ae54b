// Package wirelog holds one idea: a line of mcptask's wire log. The same typed Line is a
// --record NDJSON line and, rendered by Trace, a --trace line, whether the client
// (internal/rpc, internal/connect) or the proxy (internal/proxy) wrote it; Redact is its
// redaction, in one place. It is a package of its own, below internal/rpc, because the line is
// not JSON-RPC: it also carries the OAuth client's exchanges, the live linter's violations and
// the proxy's notices, and the client and the proxy would otherwise each keep a copy of it.
package wirelog

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Kind says what a line records.
type Kind string

// The kinds of line.
const (
	// KindHTTPRequest is an HTTP request with its headers and, when it has one, its body.
	KindHTTPRequest Kind = "http-request"
	// KindHTTPResponse is the status and headers of an HTTP response.
	KindHTTPResponse Kind = "http-response"
	// KindHTTPExchange sums up one request/response exchange when it is over (record only).
	KindHTTPExchange Kind = "http-exchange"
	// KindFrame is one JSON-RPC message: a stdio line, or a JSON answer to a POST.
	KindFrame Kind = "frame"
	// KindSSEEvent is one message of an event stream.
	KindSSEEvent Kind = "sse-event"
	// KindAuthRequest and KindAuthResponse are the OAuth client's own HTTP traffic.
	KindAuthRequest  Kind = "auth-request"
	KindAuthResponse Kind = "auth-response"
	// KindNote is what the OAuth client decided and why.
	KindNote Kind = "note"
	// KindViolation is a rule a peer broke, found by the live linter.
	KindViolation Kind = "violation"
	// KindProxyNotice is something the proxy saw that is not a rule.
	KindProxyNotice Kind = "proxy-notice"
)

// The values of Line.Dir: which way a message went, as a recording of the host would say it.
const (
	DirSend = "send" // towards the server
	DirRecv = "recv" // from the server
)

// Line is one line of the wire log. Its fields are in the alphabetical order of their JSON
// names, the order in which the untyped maps it replaced were written, so records of old and
// new versions compare byte for byte (TestFieldOrder keeps it so). A member is left out when
// it is zero, except those that are pointers: they are written whenever they are set, empty
// or not (a frame's taskId is "" when the message names no task; an exchange's status is 0
// when no answer came).
type Line struct {
	// Body is the message body: JSON as it came, any other body as a JSON string (see Body
	// and TextBody).
	Body        json.RawMessage `json:"body,omitempty"`
	ContentType *string         `json:"contentType,omitempty"`
	// Dir is DirSend or DirRecv.
	Dir string `json:"dir,omitempty"`
	// Direction is the proxy's name of the way: "host-to-server" or "server-to-host".
	Direction string `json:"direction,omitempty"`
	// Error is why an exchange failed.
	Error string `json:"error,omitempty"`
	// Headers are HTTP headers; nil leaves them out, an empty set is written as {}.
	Headers    http.Header `json:"headers,omitzero"`
	Host       string      `json:"host,omitempty"`
	HTTPMethod string      `json:"httpMethod,omitempty"`
	// ID is the JSON-RPC id of an exchange (see ID).
	ID        json.RawMessage `json:"id,omitempty"`
	Kind      Kind            `json:"kind"`
	LatencyMs *float64        `json:"latencyMs,omitempty"`
	// Message is a proxy notice's text.
	Message string `json:"message,omitempty"`
	// Method is the JSON-RPC method.
	Method *string `json:"method,omitempty"`
	Note   string  `json:"note,omitempty"`
	// Peer is who sent the message ("host", "server", "proxy") or broke the rule.
	Peer string `json:"peer,omitempty"`
	// Proto is a response's HTTP version ("HTTP/1.1"), for the trace only: the record has
	// never carried it.
	Proto string `json:"-"`
	// RPCError is the JSON-RPC error an exchange ended with.
	RPCError    json.RawMessage `json:"rpcError,omitempty"`
	Rule        string          `json:"rule,omitempty"`
	Section     string          `json:"section,omitempty"`
	Seen        string          `json:"seen,omitempty"`
	SSE         string          `json:"sse,omitempty"`
	Status      *int            `json:"status,omitempty"`
	TaskCreated bool            `json:"taskCreated,omitempty"`
	TaskID      *string         `json:"taskId,omitempty"`
	Time        time.Time       `json:"time"`
	URL         string          `json:"url,omitempty"`
}

// Body is data as a line embeds it: JSON as JSON, anything else as a JSON string.
func Body(data []byte) json.RawMessage {
	if json.Valid(data) {
		return json.RawMessage(data)
	}
	return TextBody(string(data))
}

// TextBody is s as a line's body, a JSON string whatever s holds.
func TextBody(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// ID is a JSON-RPC id as a line writes it: null when the message has none.
func ID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// Latency is a duration as a line's latencyMs: milliseconds, to the microsecond.
func Latency(d time.Duration) *float64 {
	return new(float64(d.Microseconds()) / 1000)
}

// TaskIDOf returns the task a message names: params.taskId, result.taskId or
// result.task.taskId, or "".
func TaskIDOf(data []byte) string {
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
	if json.Unmarshal(data, &probe) != nil {
		return ""
	}
	switch {
	case probe.Params.TaskID != "":
		return probe.Params.TaskID
	case probe.Result.TaskID != "":
		return probe.Result.TaskID
	}
	return probe.Result.Task.TaskID
}

// Redact redacts l in place with r: headers as redact.Headers, a JSON body, id and error as
// redact.JSON, a text body and every other string a peer could have put there as
// redact.Text, the URL as redact.URL. Every writer of a line calls it last (Log.Write does),
// so that a field added later must be added here to be written at all.
func (l *Line) Redact(r *redact.Redactor) {
	if l.Headers != nil {
		l.Headers = r.Headers(l.Headers)
	}
	l.Body = redactBody(r, l.Body)
	l.ID = redactJSON(r, l.ID)
	l.RPCError = redactJSON(r, l.RPCError)
	if l.URL != "" {
		l.URL = r.URL(l.URL)
	}
	for _, s := range []*string{&l.Error, &l.Host, &l.HTTPMethod, &l.Message, &l.Note, &l.Peer, &l.Proto,
		&l.Rule, &l.Section, &l.Seen, &l.SSE, l.ContentType, l.Method, l.TaskID} {
		if s != nil && *s != "" {
			*s = r.Text(*s)
		}
	}
}

func redactJSON(r *redact.Redactor, b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	return json.RawMessage(r.JSON(b))
}

// redactBody redacts a JSON body as JSON and a text body (a JSON string) as text.
func redactBody(r *redact.Redactor, b json.RawMessage) json.RawMessage {
	if len(b) == 0 || b[0] != '"' {
		return redactJSON(r, b)
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return redactJSON(r, b)
	}
	return TextBody(r.Text(s))
}

// text is a body as the trace shows it: JSON as it is, a text body as its text.
func (l *Line) text() string {
	if len(l.Body) > 0 && l.Body[0] == '"' {
		var s string
		if json.Unmarshal(l.Body, &s) == nil {
			return s
		}
	}
	return string(l.Body)
}

// Trace renders l, already redacted, as --trace text: one or more lines, each starting with
// the direction (">" towards the server, "<" from it, "!" for what mcptask has to say), the
// host in brackets when there is one. Every string goes through termsafe: the trace is read
// on a terminal. An exchange summary is for the record only, and renders as "".
func Trace(l *Line) string {
	arrow := "<"
	if l.Dir == DirSend {
		arrow = ">"
	}
	who := ""
	if l.Host != "" {
		who = "[" + termsafe.Line(l.Host) + "] "
	}
	if l.Kind == KindAuthRequest || l.Kind == KindAuthResponse {
		who += "[auth] "
	}
	var b strings.Builder
	switch l.Kind {
	case KindHTTPRequest, KindAuthRequest:
		fmt.Fprintf(&b, "%s %s%s %s\n", arrow, who, termsafe.Line(l.HTTPMethod), termsafe.Line(l.URL))
		b.WriteString(Headers(arrow, l.Headers))
		if len(l.Body) > 0 {
			fmt.Fprintf(&b, "%s %s\n", arrow, termsafe.Line(l.text()))
		}
	case KindHTTPResponse, KindAuthResponse:
		proto := "HTTP"
		if l.Proto != "" {
			proto = termsafe.Line(l.Proto)
		}
		fmt.Fprintf(&b, "%s %s%s %s (%s)\n", arrow, who, proto, status(l.Status), latency(l.LatencyMs))
		b.WriteString(Headers(arrow, l.Headers))
		if len(l.Body) > 0 {
			fmt.Fprintf(&b, "%s %s\n", arrow, termsafe.Line(l.text()))
		}
	case KindFrame, KindSSEEvent:
		if l.SSE != "" {
			who += "[" + termsafe.Line(l.SSE) + "] "
		}
		fmt.Fprintf(&b, "%s %s%s\n", arrow, who, termsafe.Line(l.text()))
	case KindViolation:
		peer := l.Peer
		if peer == "" {
			peer = "server"
		}
		fmt.Fprintf(&b, "! %sthe %s broke rule %s: %s\n", who, termsafe.Line(peer), termsafe.Line(l.Rule), termsafe.Line(l.Seen))
	case KindProxyNotice:
		fmt.Fprintf(&b, "! %s%s\n", who, termsafe.Line(l.Message))
	case KindNote:
		fmt.Fprintf(&b, "! %s%s\n", who, termsafe.Line(l.Note))
	}
	return b.String()
}

func status(code *int) string {
	if code == nil {
		return "?"
	}
	if text := http.StatusText(*code); text != "" {
		return strconv.Itoa(*code) + " " + text
	}
	return strconv.Itoa(*code)
}

func latency(ms *float64) string {
	if ms == nil {
		return "?"
	}
	return (time.Duration(math.Round(*ms*1000)) * time.Microsecond).String()
}

// Headers renders h as --trace lines, "prefix Name: value", sorted by name; names and values
// go through termsafe. h must already be redacted.
func Headers(prefix string, h http.Header) string {
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

// Log writes lines to the --record stream (NDJSON) and the --trace stream (text); either may
// be nil. A line is redacted, stamped and written under one lock, so lines never interleave.
type Log struct {
	Record io.Writer
	Trace  io.Writer
	Redact *redact.Redactor
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex
}

// Write redacts l, stamps its time and writes it to both streams.
func (g *Log) Write(l *Line) {
	if g == nil || (g.Record == nil && g.Trace == nil) {
		return
	}
	red := g.Redact
	if red == nil {
		red = redact.New(nil)
	}
	l.Redact(red)
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	l.Time = now().UTC()
	var rec []byte
	if g.Record != nil {
		b, err := json.Marshal(l)
		if err == nil {
			rec = append(b, '\n')
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Trace != nil {
		if s := Trace(l); s != "" {
			_, _ = io.WriteString(g.Trace, s)
		}
	}
	if rec != nil {
		_, _ = g.Record.Write(rec)
	}
}

// Tracef writes commentary that is no line of the record to the --trace stream, under the
// same lock as the lines.
func (g *Log) Tracef(format string, args ...any) {
	if g == nil || g.Trace == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(g.Trace, format, args...)
}
