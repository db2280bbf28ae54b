package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// How the demo is run for people: `mcptask demo` starts it on a free loopback port for one
// call, `mcptask demo serve` serves it on HTTP or stdio until stopped.

// StartLoopback starts a demo server made with opts on a free loopback port and returns its
// MCP endpoint and the function that stops it.
func StartLoopback(opts Options) (url string, stop func(), err error) {
	srv, err := New(opts)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return "", nil, fmt.Errorf("demo: listen on loopback: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { hs.Close(); srv.Close() }, nil
}

// ServeOptions say where `mcptask demo serve` serves.
type ServeOptions struct {
	// Addr is the HTTP listen address; AllowRemote lets it be other than loopback.
	Addr        string
	AllowRemote bool
	// Stdio serves one client on In and Out instead; ExitAfter > 0 ends In after that many
	// lines (fault injection for tests).
	Stdio     bool
	ExitAfter int
	In        io.Reader
	Out       io.Writer
	// ErrOut gets the listening line and warnings.
	ErrOut io.Writer
}

// RemoteError is an --addr beyond loopback without AllowRemote: a usage error.
type RemoteError struct{ Addr string }

func (e *RemoteError) Error() string {
	return fmt.Sprintf("demo serve: --addr %s is not a loopback address, and the demo has no authentication: anyone who can reach it could run its tools; use --addr 127.0.0.1:PORT, or pass --allow-remote if that is meant", e.Addr)
}

// Serve runs a demo server made with opts as so says until ctx ends (nil) or serving fails.
func Serve(ctx context.Context, opts Options, so ServeOptions) error {
	srv, err := New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	if so.Stdio {
		in := so.In
		if so.ExitAfter > 0 {
			in = &lineLimit{r: in, left: so.ExitAfter}
		}
		err := srv.ServeStdio(ctx, in, so.Out)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := listen(so)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(so.ErrOut, "Demo MCP server listening on http://%s/mcp (Ctrl+C to stop)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		fmt.Fprintln(os.Stderr, err)
		return err
	}
}

// lineLimit ends its input after a number of lines: the demo server's --exit-after, which lets
// tests make a stdio server die in the middle of a watch.
type lineLimit struct {
	r    io.Reader
	left int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.left--
			if l.left == 0 {
				return i + 1, nil // whatever follows the last allowed line is dropped
			}
		}
	}
	return n, err
}

// listen opens the demo's HTTP listener. The demo runs any of its tools for anyone who
// reaches it, so it listens on loopback unless the user says otherwise with AllowRemote
// (threat model, SECURITY.md class 11). The address is judged after binding, by the address the
// listener actually has, so that a host name resolving elsewhere, "0.0.0.0", "[::]" or an empty
// host are all caught.
func listen(so ServeOptions) (net.Listener, error) {
	ln, err := net.Listen("tcp", so.Addr)
	if err != nil {
		return nil, fmt.Errorf("demo serve: %w", err)
	}
	addr, _ := ln.Addr().(*net.TCPAddr)
	if addr != nil && addr.IP.IsLoopback() {
		return ln, nil
	}
	if !so.AllowRemote {
		_ = ln.Close()
		return nil, &RemoteError{Addr: so.Addr}
	}
	fmt.Fprintf(so.ErrOut, "Warning: the demo listens on %s, beyond loopback, without authentication: anyone who can reach it can run its tools.\n", ln.Addr())
	return ln, nil
}
