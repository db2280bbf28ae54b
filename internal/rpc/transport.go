package rpc

import (
	"context"
	"io"
	"net/http"

	"github.com/mcptask/mcptask/internal/redact"
)

// Transport moves JSON-RPC messages between mcptask and one server. The two implementations
// are HTTPTransport (Streamable HTTP, JSON and SSE responses) and StdioTransport (a child
// process with newline-delimited JSON).
//
// Headers are an HTTP idea, but the Client computes them (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name, Mcp-Param-*) because they depend on the era and the method; the stdio transport
// ignores them.
type Transport interface {
	// RoundTrip sends the request req and returns its response. Server-to-client requests and
	// notifications that arrive before the response are passed to the Handler given to the
	// transport; for a request, the handler's answer is sent back to the server. A response
	// carrying a JSON-RPC error is returned as a *Message with Error set, not as a Go error:
	// Go errors are for transport failures.
	RoundTrip(ctx context.Context, req *Message, hdr http.Header) (*Message, error)
	// Send delivers a notification or a response for which no reply is expected.
	Send(ctx context.Context, msg *Message, hdr http.Header) error
	// SetHandler sets the function that receives server-to-client messages. It must be called
	// before the first RoundTrip.
	SetHandler(h Handler)
	// Close releases the connection pool or shuts the child process down (close stdin, wait,
	// SIGTERM, SIGKILL).
	Close() error
}

// Handler receives a message the server sent on its own initiative: a request (2025-11-25
// elicitation/create, roots/list, sampling/createMessage, ping) or a notification
// (notifications/progress, notifications/tasks/status, notifications/message).
//
// For a request the handler returns the response to send (Result or Error set; the transport
// fills in jsonrpc and id), or nil to leave the request unanswered (the client gave up on it:
// see NoResponse). For a notification it returns nil. It runs on the transport's
// reading goroutine, so it must not call RoundTrip on the same transport and wait for it.
type Handler func(ctx context.Context, msg *Message) *Message

// SessionHolder is implemented by transports that carry a 2025-11-25 MCP-Session-Id. The
// Client reads it to store with a task and sets it when resuming a task whose server ties
// tasks to the session that created them.
type SessionHolder interface {
	SessionID() string
	SetSessionID(id string)
}

// TraceOptions controls --trace: a human-readable log of every HTTP exchange and JSON-RPC
// frame. Everything in it is redacted by internal/redact: the values of the headers named in
// Secret (and of Authorization, cookies and API key headers, always), credential members of
// JSON and form bodies, credential parameters of URLs, and every value Redact knows.
type TraceOptions struct {
	W      io.Writer
	Secret []string
	// Redact, when set, is the run's redactor (it knows the user's secret values and learns
	// the ones sent); else one is made from Secret.
	Redact *redact.Redactor
	// Record, when set, receives the same stream as NDJSON (--record): one line per HTTP
	// request and response, stdio frame and SSE event, with redacted headers.
	Record io.Writer
}
