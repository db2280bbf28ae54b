package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Directions of a proxied message, as --record writes them.
const (
	ToServer = "host-to-server"
	ToHost   = "server-to-host"
)

// recorder writes the --record NDJSON stream. Its lines are those of the client's recorder
// (internal/rpc: http-request, http-response, frame, sse-event, http-exchange, violation), with
// the same fields, where "dir" reads as in a recording of the host itself (send: towards the
// server, recv: from it); every line also says its direction and which peer sent it, and names
// the host. Every line is redacted by internal/redact before either stream sees it: the
// values of Authorization, cookies, API key headers and the secret headers, credential
// members of bodies, credential parameters of URLs, and the values those carried.
type recorder struct {
	mu    sync.Mutex
	w     io.Writer
	trace io.Writer
	red   *redact.Redactor
	now   func() time.Time
}

func newRecorder(w, trace io.Writer, red *redact.Redactor, secret []string, now func() time.Time) *recorder {
	if w == nil && trace == nil {
		return nil
	}
	if red == nil {
		red = redact.New(secret)
	}
	return &recorder{w: w, trace: trace, red: red, now: now}
}

// line writes one record line. toServer says which way the message went.
func (r *recorder) line(toServer bool, host string, fields map[string]any) {
	if r == nil {
		return
	}
	r.red.Line(fields)
	fields["time"] = r.now().UTC().Format(time.RFC3339Nano)
	dir, direction, peer := "recv", ToHost, "server"
	if toServer {
		dir, direction, peer = "send", ToServer, "host"
	}
	fields["dir"], fields["direction"] = dir, direction
	if _, ok := fields["peer"]; !ok {
		fields["peer"] = peer // a violation names the peer that broke the rule instead
	}
	if host != "" {
		fields["host"] = host
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trace != nil {
		r.traceLine(toServer, host, fields)
	}
	if r.w == nil {
		return
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return
	}
	_, _ = r.w.Write(append(b, '\n'))
}

// traceLine writes the --trace form of a record line: the client's trace, with the host named
// and the direction as an arrow (">" towards the server, "<" towards the host). Everything a
// peer sent goes through termsafe: the trace is read on a terminal.
func (r *recorder) traceLine(toServer bool, host string, f map[string]any) {
	dir := "<"
	if toServer {
		dir = ">"
	}
	who := ""
	if host != "" {
		who = "[" + termsafe.Line(host) + "] "
	}
	var b strings.Builder
	switch f["kind"] {
	case "http-request":
		fmt.Fprintf(&b, "%s %s%s %s\n", dir, who, f["httpMethod"], termsafe.Line(fmt.Sprint(f["url"])))
		b.WriteString(traceHeaders(dir, f["headers"]))
	case "http-response":
		fmt.Fprintf(&b, "%s %sHTTP %v (%vms)\n", dir, who, f["status"], f["latencyMs"])
		b.WriteString(traceHeaders(dir, f["headers"]))
	case "frame", "sse-event":
		what := ""
		if sse, ok := f["sse"].(string); ok {
			what = "[sse " + termsafe.Line(sse) + "] "
		}
		fmt.Fprintf(&b, "%s %s%s%s\n", dir, who, what, termsafe.Line(traceBody(f["body"])))
	case "violation":
		fmt.Fprintf(&b, "! %sthe %v broke rule %v: %s\n", who, f["peer"], f["rule"], termsafe.Line(fmt.Sprint(f["seen"])))
	case "proxy-notice":
		fmt.Fprintf(&b, "! %s%s\n", who, termsafe.Line(fmt.Sprint(f["message"])))
	default:
		return // the exchange summaries are for the record
	}
	_, _ = io.WriteString(r.trace, b.String())
}

func traceHeaders(dir string, h any) string {
	hdr, ok := h.(http.Header)
	if !ok {
		return ""
	}
	keys := make([]string, 0, len(hdr))
	for k := range hdr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range hdr[k] {
			fmt.Fprintf(&b, "%s   %s: %s\n", dir, termsafe.Line(k), termsafe.Line(v))
		}
	}
	return b.String()
}

func traceBody(v any) string {
	switch b := v.(type) {
	case json.RawMessage:
		return string(b)
	case string:
		return strconv.Quote(b)
	}
	return fmt.Sprint(v)
}

// headers redacts h for the record.
func (r *recorder) headers(h http.Header) http.Header { return r.red.Headers(h) }

// bodyValue is data as the record embeds it: JSON as JSON, anything else as a string.
func bodyValue(data []byte) any {
	if json.Valid(data) {
		return json.RawMessage(data)
	}
	return string(data)
}

// taskIDOf returns the task a message names (params.taskId, result.taskId or
// result.task.taskId), as the client's recorder does.
func taskIDOf(data []byte) string {
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
