package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
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
// the host. Header values of Authorization, cookies and the secret headers are redacted.
type recorder struct {
	mu     sync.Mutex
	w      io.Writer
	secret []string
	now    func() time.Time
}

func newRecorder(w io.Writer, secret []string, now func() time.Time) *recorder {
	if w == nil {
		return nil
	}
	return &recorder{w: w, secret: secret, now: now}
}

// line writes one record line. toServer says which way the message went.
func (r *recorder) line(toServer bool, host string, fields map[string]any) {
	if r == nil {
		return
	}
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
	b, err := json.Marshal(fields)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.w.Write(append(b, '\n'))
}

// headers redacts h for the record.
func (r *recorder) headers(h http.Header) http.Header { return rpc.RedactHeader(h, r.secret) }

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
