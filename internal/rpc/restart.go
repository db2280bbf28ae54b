package rpc

import (
	"context"
	"fmt"
	"net/http"
	"sync"
)

// Restarter is implemented by transports that can bring a dead server back: a stdio server
// is restarted with the same command (C26-STDIO: if the server dies the client SHOULD restart
// it; in-flight requests are lost).
type Restarter interface {
	Restart(ctx context.Context) error
}

// RestartingStdio is a stdio transport that starts its server again when it has died. Only
// tasks the server itself persisted survive that; the Client reports the restart.
type RestartingStdio struct {
	opts StdioOptions

	mu      sync.Mutex
	cur     *StdioTransport
	handler Handler
	// Restarts counts how often the server was started again.
	restarts int
}

// NewRestartingStdio starts the server.
func NewRestartingStdio(ctx context.Context, opts StdioOptions) (*RestartingStdio, error) {
	st, err := NewStdioTransport(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &RestartingStdio{opts: opts, cur: st}, nil
}

func (r *RestartingStdio) current() *StdioTransport { r.mu.Lock(); defer r.mu.Unlock(); return r.cur }

// RoundTrip implements Transport.
func (r *RestartingStdio) RoundTrip(ctx context.Context, req *Message, hdr http.Header) (*Message, error) {
	return r.current().RoundTrip(ctx, req, hdr)
}

// Send implements Transport.
func (r *RestartingStdio) Send(ctx context.Context, msg *Message, hdr http.Header) error {
	return r.current().Send(ctx, msg, hdr)
}

// SetHandler implements Transport.
func (r *RestartingStdio) SetHandler(h Handler) {
	r.mu.Lock()
	r.handler = h
	cur := r.cur
	r.mu.Unlock()
	cur.SetHandler(h)
}

// Close implements Transport.
func (r *RestartingStdio) Close() error { return r.current().Close() }

// Notef writes one explanatory line to the --trace log, when there is one.
func (r *RestartingStdio) Notef(format string, args ...any) { r.current().Notef(format, args...) }

// Restart starts the server again if it has exited; it does nothing while it runs.
func (r *RestartingStdio) Restart(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.cur.Done():
	default:
		return nil
	}
	st, err := NewStdioTransport(ctx, r.opts)
	if err != nil {
		return fmt.Errorf("restart %s: %w", r.opts.Argv[0], err)
	}
	if r.handler != nil {
		st.SetHandler(r.handler)
	}
	r.cur = st
	r.restarts++
	return nil
}

// Restarts reports how often the server was started again.
func (r *RestartingStdio) Restarts() int { r.mu.Lock(); defer r.mu.Unlock(); return r.restarts }
