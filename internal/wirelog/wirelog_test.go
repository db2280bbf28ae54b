package wirelog

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
)

var stamp = time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))

const stampText = "2026-07-28T10:00:00.123456789Z"

// TestEveryKind writes one line of each kind, as the client or the proxy builds it, and
// checks its JSON byte for byte against the untyped map the line replaced (so the keys, the
// members written empty and the order are those of earlier records) and its --trace text.
func TestEveryKind(t *testing.T) {
	hdr := http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s1"}}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-1"}}`)
	rpcErr := json.RawMessage(`{"code":-32602,"message":"no such task"}`)
	cases := []struct {
		name  string
		line  Line
		old   map[string]any // the map the line's writer built before, time excluded
		trace string
	}{{
		name: "client http-request with a body",
		line: Line{Kind: KindHTTPRequest, Dir: DirSend, HTTPMethod: "POST", URL: "http://127.0.0.1/mcp", Headers: hdr,
			Body: Body(body), TaskID: new(TaskIDOf(body)), Method: new("")},
		old: map[string]any{"kind": "http-request", "dir": "send", "httpMethod": "POST", "url": "http://127.0.0.1/mcp", "headers": hdr,
			"body": json.RawMessage(body), "taskId": "t-1", "method": ""},
		trace: "> POST http://127.0.0.1/mcp\n> Content-Type: application/json\n> Mcp-Session-Id: s1\n> " + string(body) + "\n",
	}, {
		name: "proxy http-request without a body",
		line: Line{Kind: KindHTTPRequest, Dir: DirSend, Direction: "host-to-server", Peer: "host", Host: "h1", HTTPMethod: "GET",
			URL: "http://127.0.0.1/mcp", Headers: http.Header{}},
		old: map[string]any{"kind": "http-request", "dir": "send", "direction": "host-to-server", "peer": "host", "host": "h1",
			"httpMethod": "GET", "url": "http://127.0.0.1/mcp", "headers": http.Header{}},
		trace: "> [h1] GET http://127.0.0.1/mcp\n",
	}, {
		name: "http-response",
		line: Line{Kind: KindHTTPResponse, Dir: DirRecv, Proto: "HTTP/1.1", Status: new(202), LatencyMs: Latency(1234567 * time.Nanosecond),
			Headers: http.Header{"Date": {"today"}}, ContentType: new("")},
		old: map[string]any{"kind": "http-response", "dir": "recv", "status": 202, "latencyMs": 1.234,
			"headers": http.Header{"Date": {"today"}}, "contentType": ""},
		trace: "< HTTP/1.1 202 Accepted (1.234ms)\n< Date: today\n",
	}, {
		name: "client http-exchange that failed",
		line: Line{Kind: KindHTTPExchange, Method: new("notifications/initialized"), ID: ID(nil), Status: new(0),
			LatencyMs: Latency(0), Error: "connection refused"},
		old: map[string]any{"kind": "http-exchange", "method": "notifications/initialized", "id": json.RawMessage(nil), "status": 0,
			"latencyMs": 0.0, "error": "connection refused"},
	}, {
		name: "proxy http-exchange with an error",
		line: Line{Kind: KindHTTPExchange, Dir: DirSend, Direction: "host-to-server", Peer: "host", HTTPMethod: "POST",
			Status: new(200), LatencyMs: Latency(2 * time.Millisecond), Method: new("tasks/get"), ID: ID(json.RawMessage(`7`)),
			TaskID: new("t-1"), TaskCreated: true, RPCError: rpcErr},
		old: map[string]any{"kind": "http-exchange", "dir": "send", "direction": "host-to-server", "peer": "host", "httpMethod": "POST",
			"status": 200, "latencyMs": 2.0, "method": "tasks/get", "id": json.RawMessage(`7`), "taskId": "t-1", "taskCreated": true,
			"rpcError": rpcErr},
	}, {
		name:  "frame that is not JSON",
		line:  Line{Kind: KindFrame, Dir: DirRecv, Body: Body([]byte("not json")), TaskID: new("")},
		old:   map[string]any{"kind": "frame", "dir": "recv", "body": "not json", "taskId": ""},
		trace: "< not json\n",
	}, {
		name: "proxy frame of its own",
		line: Line{Kind: KindFrame, Dir: DirSend, Direction: "host-to-server", Peer: "proxy", Host: "h2", Body: Body(body), TaskID: new("t-1")},
		old: map[string]any{"kind": "frame", "dir": "send", "direction": "host-to-server", "peer": "proxy", "host": "h2",
			"body": json.RawMessage(body), "taskId": "t-1"},
		trace: "> [h2] " + string(body) + "\n",
	}, {
		name:  "sse-event",
		line:  Line{Kind: KindSSEEvent, Dir: DirRecv, SSE: "sse id=4", Body: Body([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)), TaskID: new("")},
		old:   map[string]any{"kind": "sse-event", "dir": "recv", "sse": "sse id=4", "body": json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`), "taskId": ""},
		trace: `< [sse id=4] {"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
	}, {
		name: "auth-request",
		line: Line{Kind: KindAuthRequest, Dir: DirSend, HTTPMethod: "POST", URL: "http://127.0.0.1/token",
			Headers: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: TextBody("grant_type=authorization_code")},
		old: map[string]any{"kind": "auth-request", "dir": "send", "httpMethod": "POST", "url": "http://127.0.0.1/token",
			"headers": http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "body": "grant_type=authorization_code"},
		trace: "> [auth] POST http://127.0.0.1/token\n> Content-Type: application/x-www-form-urlencoded\n> grant_type=authorization_code\n",
	}, {
		name: "auth-response",
		line: Line{Kind: KindAuthResponse, Dir: DirRecv, Status: new(200), LatencyMs: Latency(5 * time.Millisecond),
			Headers: http.Header{}, Body: TextBody(`{"issuer":"x"}`)},
		old: map[string]any{"kind": "auth-response", "dir": "recv", "status": 200, "latencyMs": 5.0, "headers": http.Header{},
			"body": `{"issuer":"x"}`},
		trace: "< [auth] HTTP 200 OK (5ms)\n< {\"issuer\":\"x\"}\n",
	}, {
		name:  "note",
		line:  Line{Kind: KindNote, Note: "no registration endpoint; using the client id given"},
		old:   map[string]any{"kind": "note", "note": "no registration endpoint; using the client id given"},
		trace: "! no registration endpoint; using the client id given\n",
	}, {
		name:  "client violation",
		line:  Line{Kind: KindViolation, Rule: "A3", Section: "§Tasks", TaskID: new(""), Seen: "resultType task on tools/list"},
		old:   map[string]any{"kind": "violation", "rule": "A3", "section": "§Tasks", "taskId": "", "seen": "resultType task on tools/list"},
		trace: "! the server broke rule A3: resultType task on tools/list\n",
	}, {
		name: "proxy violation by a host",
		line: Line{Kind: KindViolation, Dir: DirSend, Direction: "host-to-server", Peer: "host", Host: "h1", Rule: "malformed",
			Section: "JSON-RPC 2.0", Seen: "not JSON-RPC"},
		old: map[string]any{"kind": "violation", "dir": "send", "direction": "host-to-server", "peer": "host", "host": "h1",
			"rule": "malformed", "section": "JSON-RPC 2.0", "seen": "not JSON-RPC"},
		trace: "! [h1] the host broke rule malformed: not JSON-RPC\n",
	}, {
		name: "proxy-notice",
		line: Line{Kind: KindProxyNotice, Dir: DirRecv, Direction: "server-to-host", Peer: "proxy", Message: "an answer was forwarded uninspected"},
		old: map[string]any{"kind": "proxy-notice", "dir": "recv", "direction": "server-to-host", "peer": "proxy",
			"message": "an answer was forwarded uninspected"},
		trace: "! an answer was forwarded uninspected\n",
	}}
	kinds := map[Kind]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kinds[c.line.Kind] = true
			var rec, trace bytes.Buffer
			log := &Log{Record: &rec, Trace: &trace, Redact: redact.New(nil), Now: func() time.Time { return stamp }}
			line := c.line
			log.Write(&line)
			c.old["time"] = stampText
			want, err := json.Marshal(c.old)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(rec.String(), "\n"); got != string(want) {
				t.Errorf("record line\n got %s\nwant %s", got, want)
			}
			if trace.String() != c.trace {
				t.Errorf("trace\n got %q\nwant %q", trace.String(), c.trace)
			}
			var back Line
			if err := json.Unmarshal(rec.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(&back)
			if string(again) != string(want) {
				t.Errorf("a line read back and written again changed:\n got %s\nwant %s", again, want)
			}
		})
	}
	for _, k := range []Kind{KindHTTPRequest, KindHTTPResponse, KindHTTPExchange, KindFrame, KindSSEEvent, KindAuthRequest,
		KindAuthResponse, KindNote, KindViolation, KindProxyNotice} {
		if !kinds[k] {
			t.Errorf("no case of kind %s", k)
		}
	}
}

// TestFieldOrder keeps Line's fields in the alphabetical order of their JSON names, the order
// of the records written before it was typed.
func TestFieldOrder(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[Line]().Fields() {
		if name := strings.Split(f.Tag.Get("json"), ",")[0]; name != "-" {
			names = append(names, name)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("Line's JSON names are not in order: %v", names)
	}
}

// TestRedactEveryField puts a known secret into every field a peer can fill and checks that
// neither stream shows it: a field added to Line without redaction fails here.
func TestRedactEveryField(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	var l Line
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "Kind" || name == "Dir" || name == "Direction":
			// mcptask's own words, set from constants
		case f.Kind() == reflect.String:
			f.SetString("x " + secret)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
			s := "x " + secret
			f.Set(reflect.ValueOf(&s))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(`{"note":"` + secret + `"}`)))
		case f.Type() == reflect.TypeFor[http.Header]():
			f.Set(reflect.ValueOf(http.Header{"X-Echo": {secret}, "Authorization": {"Bearer other-credential-value"}}))
		}
	}
	for _, kind := range []Kind{KindHTTPRequest, KindHTTPResponse, KindFrame, KindViolation, KindProxyNotice, KindNote} {
		var rec, trace bytes.Buffer
		line := l
		line.Kind = kind
		line.Headers = l.Headers.Clone()
		(&Log{Record: &rec, Trace: &trace, Redact: redact.New(nil, secret)}).Write(&line)
		for what, s := range map[string]string{"record": rec.String(), "trace": trace.String()} {
			if strings.Contains(s, secret) || strings.Contains(s, "other-credential-value") {
				t.Errorf("%s %s shows a secret: %s", kind, what, s)
			}
		}
		if !strings.Contains(rec.String(), redact.Mark) {
			t.Errorf("%s: nothing was marked redacted: %s", kind, rec.String())
		}
	}
	// a text body is redacted as text, and stays a string
	line := Line{Kind: KindFrame, Body: TextBody("Bearer " + secret)}
	line.Redact(redact.New(nil, secret))
	var s string
	if err := json.Unmarshal(line.Body, &s); err != nil || strings.Contains(s, secret) {
		t.Errorf("text body after redaction: %s (%v)", line.Body, err)
	}
}

// TestTraceIsTerminalSafe: what a peer sent cannot move the cursor or reorder the text.
func TestTraceIsTerminalSafe(t *testing.T) {
	l := &Line{Kind: KindHTTPRequest, Dir: DirSend, Host: "h\x1b[2J", HTTPMethod: "GET", URL: "http://127.0.0.1/\u202e",
		Headers: http.Header{"X-\x1b]0;t\x07": {"v\x9b1m"}}, Body: TextBody("a\nb\x1b[1A")}
	s := Trace(l)
	for _, bad := range []string{"\x1b", "\x07", "\x9b", "\u202e"} {
		if strings.Contains(s, bad) {
			t.Errorf("trace holds %q: %q", bad, s)
		}
	}
	if n := strings.Count(s, "\n"); n != 3 {
		t.Errorf("trace has %d lines, want 3 (request, header, body): %q", n, s)
	}
	if Trace(&Line{Kind: KindHTTPExchange}) != "" {
		t.Error("an exchange summary shows in the trace")
	}
}

func TestTaskIDOf(t *testing.T) {
	for in, want := range map[string]string{
		`{"params":{"taskId":"p"}}`:                         "p",
		`{"result":{"taskId":"r"}}`:                         "r",
		`{"result":{"task":{"taskId":"c"}}}`:                "c",
		`{"params":{"taskId":"p"},"result":{"taskId":"r"}}`: "p",
		`[1,2]`:    "",
		`not json`: "",
	} {
		if got := TaskIDOf([]byte(in)); got != want {
			t.Errorf("TaskIDOf(%s) = %q, want %q", in, got, want)
		}
	}
}
