package hostile

// Class 2 of the threat model (SECURITY.md): the terminal. These modes put escape sequences,
// C1 controls, a forged line and the format characters that reorder or hide text into every
// kind of string a server sends; a test runs mcptask against them and asserts that none of it
// reaches stdout or stderr in text mode.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// TerminalPayload is what the terminal modes write into server strings: OSC title and OSC 52
// clipboard writes, clear screen and cursor home, a C1 CSI (U+009B), a carriage return and a
// newline that forge an "mcptask:" line, a right-to-left override that turns "exe.png" into
// what looks like "gnp.exe", isolates, direction marks, the Arabic letter mark, invisible
// characters (ZWSP, BOM, a tag) and a line separator.
const TerminalPayload = "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\u009b31m\r\nmcptask: all good " +
	"\u202egnp.exe\u202c\u2066x\u2069\u2067y\u2069\u200e\u200f\u061c\u200b\ufeff\U000E0041\u2028\x1bP1$r\x1b\\"

// TerminalForbidden reports the first rune of s that must never reach a terminal from a
// server: ESC and the other C0 controls but newline and tab, C1 controls, the bidirectional
// controls, the invisible format characters TerminalPayload carries and the line separator.
// It returns -1 when s is clean.
func TerminalForbidden(s string) rune {
	for _, r := range s {
		switch {
		case r < 0x20 && r != '\n' && r != '\t',
			r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x200e, r == 0x200f, r == 0x061c, r == 0x200b, r == 0xfeff,
			r >= 0xe0000 && r <= 0xe007f, r == 0x2028, r == 0x2029:
			return r
		}
	}
	return -1
}

// terminalTextKeys are the object keys whose string values a server writes for people: status
// messages, error and elicitation messages, tool output, descriptions and titles.
var terminalTextKeys = map[string]bool{"statusMessage": true, "message": true, "text": true, "description": true, "title": true}

func init() {
	Register(Mode{Name: "terminal-escapes", Class: 2,
		Doc: "puts TerminalPayload around every status message, error message (JSON-RPC and a failed task's), elicitation prompt, result text, description and title the demo sends",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return EditMessages(next, func(_ string, m map[string]any) {
				EditStrings(m, terminalTextKeys, func(s string) string { return TerminalPayload + s + TerminalPayload })
			})
		}})
	Register(Mode{Name: "terminal-escapes-in-tool-names", Class: 2,
		Doc: "lists tools whose names (and titles and descriptions) carry TerminalPayload",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return EditMessages(next, func(method string, m map[string]any) {
				if method == "tools/list" {
					EditStrings(m, map[string]bool{"name": true, "title": true, "description": true},
						func(s string) string { return TerminalPayload + s })
				}
			})
		}})
	Register(Mode{Name: "terminal-escapes-in-versions", Class: 2,
		Doc: "answers server/discover with a supportedVersions list of TerminalPayload versions only, which mcptask must refuse in an error that quotes them",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return EditMessages(next, func(method string, m map[string]any) {
				if res, ok := m["result"].(map[string]any); ok && method == "server/discover" {
					res["supportedVersions"] = []any{TerminalPayload + "2099-01-01", "9999" + TerminalPayload}
				}
			})
		}})
	Register(Mode{Name: "terminal-escapes-in-rpc-error", Class: 2,
		Doc: "answers every tools/call with a JSON-RPC error whose message and data carry TerminalPayload; the message also says \"unknown flag\", which must not make it a usage error",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method, id := termRequestMethod(r)
				if method != "tools/call" {
					next.ServeHTTP(w, r)
					return
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
					"code": -32603, "message": "boom: unknown flag --x " + TerminalPayload, "data": map[string]any{"detail": TerminalPayload}}})
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(b)
			})
		}})
}

// termRequestMethod reads the JSON-RPC method and id of r's body and leaves the body readable.
func termRequestMethod(r *http.Request) (string, json.RawMessage) {
	if r.Body == nil {
		return "", nil
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Method, m.ID
}

// EditStrings walks a decoded JSON value and replaces every string value held under one of
// keys (at any depth) with edit's answer.
func EditStrings(v any, keys map[string]bool, edit func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && keys[k] {
				v[k] = edit(s)
				continue
			}
			EditStrings(x, keys, edit)
		}
	case []any:
		for _, x := range v {
			EditStrings(x, keys, edit)
		}
	}
}

// EditMessages answers POST requests through next and hands every JSON-RPC message of the
// answer to edit, with the method of the request it answers, before it is sent on. It works
// on a JSON body (buffered) and on an SSE stream (event by event, as it is written, so a
// stream that stays open keeps flowing). Other requests pass through untouched.
func EditMessages(next http.Handler, edit func(method string, m map[string]any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		method, _ := termRequestMethod(r)
		ew := &termEditingWriter{w: w, edit: func(b []byte) []byte {
			var m map[string]any
			if json.Unmarshal(b, &m) != nil {
				return b
			}
			edit(method, m)
			out, err := json.Marshal(m)
			if err != nil {
				return b
			}
			return out
		}}
		next.ServeHTTP(ew, r)
		ew.finish()
	})
}

// termEditingWriter is the ResponseWriter of EditMessages.
type termEditingWriter struct {
	w      http.ResponseWriter
	edit   func([]byte) []byte
	code   int
	sse    bool
	header bool
	buf    []byte
}

func (e *termEditingWriter) Header() http.Header { return e.w.Header() }

func (e *termEditingWriter) WriteHeader(code int) {
	if e.header {
		return
	}
	e.header, e.code = true, code
	if strings.HasPrefix(e.w.Header().Get("Content-Type"), "text/event-stream") {
		e.sse = true
		e.w.Header().Del("Content-Length")
		e.w.WriteHeader(code)
	}
}

func (e *termEditingWriter) Write(p []byte) (int, error) {
	if !e.header {
		e.WriteHeader(http.StatusOK)
	}
	e.buf = append(e.buf, p...)
	if e.sse {
		for {
			i := bytes.IndexByte(e.buf, '\n')
			if i < 0 {
				break
			}
			line := e.buf[:i+1]
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				line = append(append([]byte("data: "), e.edit(bytes.TrimSpace(data))...), '\n')
			}
			if _, err := e.w.Write(line); err != nil {
				return 0, err
			}
			e.buf = e.buf[i+1:]
		}
	}
	return len(p), nil
}

// Flush sends on what the SSE stream has so far; the demo flushes after every event.
func (e *termEditingWriter) Flush() {
	if e.sse {
		if f, ok := e.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (e *termEditingWriter) finish() {
	if e.sse {
		if len(e.buf) > 0 {
			_, _ = e.w.Write(e.buf)
		}
		return
	}
	if !e.header {
		e.code = http.StatusOK
	}
	body := e.buf
	if len(bytes.TrimSpace(body)) > 0 {
		body = append(e.edit(bytes.TrimSpace(body)), '\n')
	}
	e.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	e.w.WriteHeader(e.code)
	_, _ = e.w.Write(body)
}
