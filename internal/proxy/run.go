package proxy

// Run is the proxy's one use case, as `mcptask proxy` calls it: it picks the shape (an HTTP
// proxy, a stdio proxy, a stdio host to an HTTP server, HTTP hosts to a stdio server), listens,
// serves, shows the events, and shuts down. The command layer reads flags and opens files;
// everything between that and the exit code is here.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/shellquote"
	"github.com/mcptask/mcptask/internal/state"
)

// RunOptions say which proxy Run serves and where its output goes.
type RunOptions struct {
	// URL is the server's MCP endpoint; when it is "", the server is the stdio command Argv,
	// started in Dir with Env added to the environment.
	URL  string
	Argv []string
	Dir  string
	Env  []string
	// Header is added to the host's requests that lack it (HTTPOptions.Header); Insecure turns
	// TLS verification off towards the server.
	Header   http.Header
	Insecure bool

	// Listen serves hosts over HTTP on HOST:PORT ("" with a URL: 127.0.0.1 and a free port;
	// "" with a stdio server: the proxy is itself a stdio server). AllowedHosts and
	// AllowedOrigins widen the HTTP front's DNS-rebinding protection.
	Listen                       string
	AllowedHosts, AllowedOrigins []string

	// HostStdio serves the host over In and Out and reaches the URL over Streamable HTTP with
	// the transport options HTTP (OAuth, TLS): what mcp-remote does.
	HostStdio bool
	HTTP      rpc.HTTPOptions

	// In and Out are the host's stream of a stdio proxy (and the live view's terminal); Stderr
	// gets the proxy's lines and a stdio server's stderr, from several goroutines.
	In     io.Reader
	Out    io.Writer
	Stderr io.Writer

	// Ledger is the ledger the hosts' tasks go to (Options.Ledger is made of it, Sign signing
	// each record); nil leaves Options.Ledger as it is.
	Ledger *state.Store
	Sign   func(*state.Record)

	// View, when set, shows the HTTP proxy's events (the live view of a terminal) until the
	// user quits or ctx ends; the proxy then stops. Without it, and always over stdio, the
	// events are plain lines on Stderr (PlainEvents).
	View func(ctx context.Context, v ViewInfo, events *EventQueue) error
}

// ViewInfo is what the live view shows in its header.
type ViewInfo struct {
	// Endpoint is the URL hosts reach the proxy at, Upstream the server's, Ledger the ledger
	// file ("" with the ledger off).
	Endpoint, Upstream, Ledger string
}

// stdioBackendURL names the in-process backend of a stdio server served over HTTP in the
// record; nothing dials it.
const stdioBackendURL = "http://stdio-server/mcp"

// Run serves the proxy described by r, with the bookkeeping o, until ctx ends (an HTTP proxy,
// or the user quits its view), or the host or the server ends a stdio one. code is the exit
// code of a stdio server (0 otherwise). o.OnEvent is set by Run. Problems with the flags come
// back as exitcode.UsageError.
func Run(ctx context.Context, o Options, r RunOptions) (code int, err error) {
	switch {
	case r.HostStdio && r.Listen != "":
		return 0, exitcode.Usagef("--host-stdio serves the host on stdin and stdout: drop --listen")
	case r.HostStdio && r.URL == "":
		return 0, exitcode.Usagef("--host-stdio reaches an HTTP server: give --server URL (or the name of an HTTP server in a config file)")
	}
	if r.Ledger != nil {
		o.Ledger = ledger.New(r.Ledger, ledger.Options{Sign: r.Sign}) // its failures become notices
	}
	switch {
	case r.HostStdio:
		return 0, runHostStdio(ctx, o, r)
	case r.URL == "" && r.Listen != "":
		return 0, serveStdioOverHTTP(ctx, o, r)
	case r.URL == "":
		return runStdio(ctx, o, r)
	}
	return 0, serveHTTP(ctx, o, r, nil)
}

// runStdio is the stdio proxy: the host starts it as its server, and it starts the real one.
func runStdio(ctx context.Context, o Options, r RunOptions) (int, error) {
	var flush func()
	o.OnEvent, flush = PlainEvents(r.Stderr, o.redactor())
	defer flush()
	p := New(o)
	defer p.Close()
	code, err := p.RunStdio(ctx, StdioOptions{Argv: r.Argv, Dir: r.Dir, Env: r.Env, In: r.In, Out: r.Out, Stderr: r.Stderr})
	if err != nil {
		return 0, fmt.Errorf("proxy: %w", err)
	}
	return code, nil
}

// runHostStdio serves the host over stdio and reaches the server over Streamable HTTP: what
// mcp-remote does. stdout is the host's: every line of the proxy's goes to Stderr.
func runHostStdio(ctx context.Context, o Options, r RunOptions) error {
	var flush func()
	o.OnEvent, flush = PlainEvents(r.Stderr, o.redactor())
	defer flush()
	p := New(o)
	defer p.Close()
	if err := p.RunHostStdio(ctx, HostStdioOptions{Upstream: r.URL, HTTP: r.HTTP, In: r.In, Out: r.Out}); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// serveStdioOverHTTP serves a stdio server to HTTP hosts: what mcp-proxy and supergateway do.
// The stdio processes sit behind a Streamable HTTP backend that the ordinary HTTP proxy reaches
// in process (no second port), so the hosts go through the same listener and its checks, and
// the ledger records the stdio command (o.Server: resume starts it again).
func serveStdioOverHTTP(ctx context.Context, o Options, r RunOptions) error {
	backend := NewStdioBackend(StdioBackendOptions{Argv: r.Argv, Dir: r.Dir, Env: r.Env})
	defer backend.Close()
	fmt.Fprintf(r.Stderr, "mcptask: serving the stdio server %s over HTTP (one process per 2025-11-25 session, one shared by 2026-07-28 hosts)\n", shellquote.Join(r.Argv))
	r.URL = stdioBackendURL
	return serveHTTP(ctx, o, r, backend.Transport())
}

// serveHTTP is the HTTP proxy: it listens, serves the server at r.URL (through upstream when
// set, else over the network) until ctx ends or the view is quit, then shuts down, giving
// open requests two seconds.
func serveHTTP(ctx context.Context, o Options, r RunOptions, upstream http.RoundTripper) error {
	ln, err := Listen(r.Listen, r.Stderr)
	if err != nil {
		return err
	}
	defer ln.Close()
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	var view func(context.Context) error
	if r.View != nil {
		info := ViewInfo{Endpoint: endpoint, Upstream: r.URL}
		if o.Ledger != nil {
			info.Ledger = o.Ledger.Store().Path()
		}
		q := NewEventQueue(EventBuffer)
		o.OnEvent = q.Push
		view = func(ctx context.Context) error { return r.View(ctx, info, q) }
	} else {
		var flush func()
		o.OnEvent, flush = PlainEvents(r.Stderr, o.redactor())
		defer flush()
	}
	p := New(o)
	defer p.Close()
	handler, err := p.Handler(HTTPOptions{Upstream: r.URL, Header: r.Header, Insecure: r.Insecure,
		AllowedHosts: r.AllowedHosts, AllowedOrigins: r.AllowedOrigins, Transport: upstream})
	if err != nil {
		return &exitcode.UsageError{Err: err}
	}
	srv := NewServer(handler, ServerOptions{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(r.Stderr, "mcptask: proxying %s -> %s\n", endpoint, redact.URL(r.URL))
	if o.Ledger != nil {
		fmt.Fprintf(r.Stderr, "mcptask: the hosts' tasks go to the ledger %s\n", o.Ledger.Store().Path())
	}
	if view != nil {
		err = view(ctx)
	} else {
		select {
		case <-ctx.Done():
		case err = <-served:
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		_ = srv.Close() // streams still open: end them
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Listen listens on addr, HOST:PORT ("" is 127.0.0.1 and a free port), and warns on warn when
// that is not a loopback address.
func Listen(addr string, warn io.Writer) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, exitcode.Usagef("--listen %q: want HOST:PORT, such as 127.0.0.1:7070", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(warn, "mcptask: warning: listening on %s, not on loopback: whoever can reach it can use the server through it, with the credentials of the hosts that pass\n", ln.Addr())
	}
	return ln, nil
}

// redactor is the run's redactor, or one made from the secret header names.
func (o Options) redactor() *redact.Redactor {
	if o.Redact != nil {
		return o.Redact
	}
	return redact.New(o.Secret)
}
