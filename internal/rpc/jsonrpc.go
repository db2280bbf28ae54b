// Package rpc is mcptask's only door to an MCP server: JSON-RPC 2.0 framing, the Streamable
// HTTP and stdio transports, detection of the protocol era a server speaks, and one task model
// over both task generations (MCP 2025-11-25 core tasks and MCP 2026-07-28 with the
// io.modelcontextprotocol/tasks extension).
//
// The package is layered. A Transport moves Messages (http.go, sse.go, stdio.go). A Client
// (client.go) sits on a Transport, negotiates the era, and turns spec methods into Go calls
// that return era-neutral values (Task, ToolResult, CallResult) while keeping the raw wire
// objects for --json output.
package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// Message is one JSON-RPC 2.0 message: a request, a notification or a response. Which one it
// is follows from which fields are set (see IsRequest, IsNotification, IsResponse).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	// wire is the encoded message when the Client built it (see Encode); ID and Params are
	// then views into it.
	wire []byte
}

// Encode returns the message as JSON: the bytes the Client built it with, or json.Marshal's.
// A Message the Client built must not be changed afterwards.
func (m *Message) Encode() ([]byte, error) {
	if m.wire != nil {
		return m.wire, nil
	}
	return json.Marshal(m)
}

// newRequest encodes a request in one allocation. params must be valid, compact JSON (the
// Client's own encoding).
func newRequest(id int64, method string, params []byte) *Message {
	const head = `{"jsonrpc":"2.0","id":`
	b := make([]byte, 0, len(head)+20+len(`,"method":"`)+len(method)+len(`","params":`)+len(params)+1)
	b = append(b, head...)
	idStart := len(b)
	b = strconv.AppendInt(b, id, 10)
	idEnd := len(b)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	b = append(b, `,"params":`...)
	pStart := len(b)
	b = append(b, params...)
	pEnd := len(b)
	b = append(b, '}')
	return &Message{JSONRPC: "2.0", Method: method, ID: b[idStart:idEnd:idEnd], Params: b[pStart:pEnd:pEnd], wire: b}
}

// IsRequest reports whether m is a request: it has a method and an id.
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && !isJSONNull(m.ID) }

// IsNotification reports whether m is a notification: a method and no id.
func (m *Message) IsNotification() bool {
	return m.Method != "" && (len(m.ID) == 0 || isJSONNull(m.ID))
}

// IsResponse reports whether m is a response: no method, and a result or an error.
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// IDKey returns a canonical string for m's id so that responses can be matched to requests
// whatever spacing or quoting the peer used ("7" and 7 stay distinct, as JSON-RPC requires).
func (m *Message) IDKey() string { return idKey(m.ID) }

func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return ""
	}
	if plainInt(id) {
		return "n:" + string(id) // the ids mcptask sends: no decoding needed
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	var n json.Number
	if json.Unmarshal(id, &n) == nil {
		return "n:" + n.String()
	}
	return "r:" + string(id)
}

func isJSONNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

// IntID encodes a numeric request id.
func IntID(n int64) json.RawMessage { return json.RawMessage(strconv.FormatInt(n, 10)) }

// DecodeMessage parses one JSON-RPC message and checks the envelope. It rejects anything that
// is not a JSON object with "jsonrpc":"2.0", so garbage from a server surfaces as a clear
// protocol error instead of a zero-valued message.
func DecodeMessage(data []byte) (*Message, error) {
	return decodeMessage(data, false)
}

// decodeMessage is DecodeMessage. When owned is true the caller gives data away (a response
// body read for this message alone), and the raw fields of the Message share its memory
// instead of being copied.
func decodeMessage(data []byte, owned bool) (*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object: %s", ErrMalformed, snippet(data))
	}
	var m *Message
	// json.Valid reuses a pooled scanner; the fast path then walks the envelope once.
	if json.Valid(data) {
		if !owned {
			data = bytes.Clone(data)
		}
		if fm, ok := decodeMessageFast(data); ok {
			m = fm
		}
	}
	if m == nil {
		m = new(Message)
		if err := json.Unmarshal(data, m); err != nil {
			return nil, fmt.Errorf("%w: %v: %s", ErrMalformed, err, snippet(data))
		}
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("%w: jsonrpc is %q, want \"2.0\"", errNotJSONRPC, m.JSONRPC)
	}
	if !m.IsRequest() && !m.IsNotification() && !m.IsResponse() {
		return nil, fmt.Errorf("%w: neither request, notification nor response: %s", ErrMalformed, snippet(data))
	}
	return m, nil
}

// snippet shortens server-supplied bytes for an error message.
func snippet(b []byte) string {
	const max = 200
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}

// Error is a JSON-RPC error object as the server sent it. It keeps the code and data so that
// callers can map it to an exit code and print rpcCode/rpcData in --json mode.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// HTTPStatus is the HTTP status the error arrived with, 0 on stdio.
	HTTPStatus int `json:"-"`
}

// Error shows the server's message made safe for a terminal and cut to termsafe.Limit: every
// error mcptask prints may carry one. Message itself keeps what the server sent.
func (e *Error) Error() string {
	msg := termsafe.Line(termsafe.Cut(e.Message))
	if e.HTTPStatus != 0 && e.HTTPStatus/100 != 2 {
		return fmt.Sprintf("server error %d (HTTP %d): %s", e.Code, e.HTTPStatus, msg)
	}
	return fmt.Sprintf("server error %d: %s", e.Code, msg)
}

// Is makes errors.Is compare JSON-RPC codes, so errors.Is(err, &rpc.Error{Code: CodeInvalidParams})
// matches any invalid-params error whatever its message.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// JSON-RPC and MCP error codes a client acts on.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch is 2026-07-28's HeaderMismatch (C26-HTTP §Server Validation).
	CodeHeaderMismatch = -32020
	// CodeMissingCapability is 2026-07-28's MissingRequiredClientCapability.
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion is 2026-07-28's UnsupportedProtocolVersion.
	CodeUnsupportedVersion = -32022
)

// Sentinel errors. Transports and the Client wrap them so that cmd can pick an exit code with
// errors.Is without parsing messages.
var (
	// ErrMalformed means the server sent bytes that are not a valid message of the expected shape.
	ErrMalformed = errors.New("malformed response from server")
	// ErrTransport means the server could not be reached or the connection broke.
	ErrTransport = errors.New("transport error")
	// ErrAuth means the server answered HTTP 401 or 403.
	ErrAuth = errors.New("authentication required or refused")
	// ErrSessionExpired means a 2025-11-25 server answered 404 to a request that carried a
	// session id: the session is gone and the client must initialize again.
	ErrSessionExpired = errors.New("session expired")
	// ErrStreamBroken means an SSE response stream ended before the response arrived and cannot
	// be resumed. 2026-07-28 says the request is then lost and is re-issued with a new id.
	ErrStreamBroken = errors.New("response stream ended before the response")
	// ErrTooLarge means a body, line or event exceeded the size cap.
	ErrTooLarge = errors.New("message exceeds size limit")
	// ErrClosed means the transport was closed.
	ErrClosed = errors.New("transport closed")
	// ErrServerExited means a stdio server process exited.
	ErrServerExited = errors.New("server process exited")
)

// HTTPError is a non-2xx HTTP answer whose body was not a JSON-RPC message.
// errNotJSONRPC is a JSON body that is not a JSON-RPC 2.0 message (no "jsonrpc": "2.0"): an
// HTTP endpoint answering with JSON of its own.
var errNotJSONRPC = fmt.Errorf("%w: not JSON-RPC", ErrMalformed)

// NotMCPError is an HTTP endpoint that answered a JSON-RPC request with something no MCP
// server sends: a web page, or JSON that is not JSON-RPC. What says what it answered; the
// body itself is never repeated (it may be a whole page). It is ErrMalformed.
type NotMCPError struct{ What string }

func (e *NotMCPError) Error() string {
	return "not an MCP server (it answered " + e.What + ")"
}
func (e *NotMCPError) Unwrap() error { return ErrMalformed }

// UnreachableError is an HTTP server nothing answered at: the connection was refused, or the
// host name is unknown. It is ErrTransport.
type UnreachableError struct {
	Addr string // host:port, or the host name that could not be found
	// Refused is set when the connection was refused (else the host was not found).
	Refused bool
}

func (e *UnreachableError) Error() string {
	if e.Refused {
		return "nothing is listening at " + e.Addr + " (connection refused); is the server running?"
	}
	return "cannot find the host " + e.Addr + " (no such host); check the URL"
}
func (e *UnreachableError) Unwrap() error { return ErrTransport }

type HTTPError struct {
	Status int
	Body   string // a short, escaped excerpt, safe to print
	// RetryAfter is the delay a 429 or 503 asked for (Retry-After), 0 when none was given.
	RetryAfter time.Duration
	// WWWAuthenticate is the challenge of a 401, escaped, for the error message.
	WWWAuthenticate string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("server answered HTTP %d", e.Status)
	if e.Body != "" {
		s += ": " + e.Body
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// Unwrap lets errors.Is(err, ErrAuth) match 401 and 403.
func (e *HTTPError) Unwrap() error {
	if e.Status == 401 || e.Status == 403 {
		return ErrAuth
	}
	return ErrTransport
}

// plainInt reports whether b is a canonical JSON integer (no sign, exponent or leading zero).
func plainInt(b []byte) bool {
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sameID reports whether two ids are the same JSON-RPC id.
func sameID(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	return idKey(a) == idKey(b)
}
