package cmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/spf13/cobra"
)

// The flags of `mcptask proxy --bridge-tasks` (issue 22): kept apart from proxy.go so that the
// bridge and the proxy's other flags change without touching each other.

func addBridgeFlags(c *cobra.Command, opts *ProxyOptions) {
	c.Flags().BoolVar(&opts.BridgeTasks, "bridge-tasks", false, "run the tool calls of hosts that do not speak Tasks as tasks: followed by mcptask, kept in the ledger, answered as one ordinary call")
	c.Flags().StringVar(&opts.OnInput, "on-input", "", "with --bridge-tasks, `MODE` for a task's question the host cannot take: fail (the default: the call fails naming 'mcptask update' and the task), decline, or exec:CMD")
	c.Flags().BoolVar(&opts.HostStdio, "host-stdio", false, "serve the host over stdio while reaching the --server URL over Streamable HTTP (what mcp-remote does; OAuth is mcptask's own)")
	c.Flags().DurationVar(&opts.BridgeProgress, "bridge-progress", proxy.DefaultProgressEvery, "with --bridge-tasks, how often a host that sent a progressToken hears that its task still runs")
}

// bridgeOptions reads the bridge flags; nil when --bridge-tasks is off.
func bridgeOptions(opts *ProxyOptions, stderr io.Writer) (*proxy.BridgeOptions, error) {
	if !opts.BridgeTasks {
		if opts.OnInput != "" {
			return nil, flagErrorf("--on-input applies to --bridge-tasks only: without it the host answers its own tasks' questions")
		}
		return nil, nil
	}
	if opts.BridgeProgress < 100*time.Millisecond {
		return nil, flagErrorf("--bridge-progress %s: want at least 100ms", opts.BridgeProgress)
	}
	bo := &proxy.BridgeOptions{ProgressEvery: opts.BridgeProgress}
	switch {
	case opts.OnInput == "" || opts.OnInput == "fail":
	case opts.OnInput == "decline" || strings.HasPrefix(opts.OnInput, execPrefix):
		// The proxy's stdin may be the host's stream: nothing is read from it.
		a := &AnswerFlags{OnInput: opts.OnInput}
		ans, err := a.parse(strings.NewReader(""), stderr)
		if err != nil {
			return nil, err
		}
		bo.Answerer = ans
	default:
		return nil, flagErrorf("--on-input %q: want fail, decline or exec:CMD (the proxy has no terminal to prompt on)", opts.OnInput)
	}
	return bo, nil
}

// bridgeArgs are the bridge flags given with --print-config, carried into the printed entry.
func bridgeArgs(opts *ProxyOptions, c *cobra.Command) []string {
	var out []string
	if opts.BridgeTasks {
		out = append(out, "--bridge-tasks")
	}
	for _, name := range []string{"on-input", "bridge-progress"} {
		if fl := c.Flags().Lookup(name); fl != nil && fl.Changed {
			out = append(out, "--"+name, fl.Value.String())
		}
	}
	return out
}

// runHostStdioProxy serves the host over stdio and reaches the server over Streamable HTTP
// (--host-stdio): what mcp-remote does, with mcptask's own OAuth (stored credentials, refresh,
// and the browser login when the server answers 401). stdout is the host's: every line of the
// proxy's goes to stderr.
func runHostStdioProxy(ctx context.Context, f *Factory, ref ServerRef, hdr http.Header, popts proxy.Options, errOut io.Writer) error {
	if ref.URL == "" {
		return flagErrorf("--host-stdio reaches an HTTP server: give --server URL (or the name of an HTTP server in a config file)")
	}
	f.authBrowser = true
	popts.OnEvent = plainEvents(errOut)
	p := proxy.New(popts)
	defer p.Close()
	o := f.httpOptions(&ref, hdr, nil)
	if err := p.RunHostStdio(ctx, proxy.HostStdioOptions{Upstream: ref.URL, HTTP: o, In: f.IO.In, Out: f.IO.Out}); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// printHostStdioConfig prints the entry of HTTP server name rewritten so that a stdio-only host
// starts `mcptask proxy --host-stdio` for it.
func printHostStdioConfig(f *Factory, opts *ProxyOptions, name string, src *namedServer, entry map[string]any, extra []string) error {
	if _, ok := entry["headers"]; ok {
		fmt.Fprintf(f.IO.ErrOut, "mcptask: the headers of %q are not copied into the entry (they may hold secrets): give a token with --bearer-env VAR, or let mcptask log in with OAuth (mcptask auth login --server %s)\n", name, src.URL)
	}
	for _, k := range []string{"url", "headers", "serverUrl"} {
		delete(entry, k)
	}
	if _, ok := entry["type"]; ok {
		entry["type"] = "stdio"
	}
	entry["command"] = selfCommand()
	entry["args"] = append(append([]string{"proxy", "--host-stdio"}, extra...), "--server", src.URL)
	return writeJSON(f.IO.Out, map[string]any{"mcpServers": map[string]any{name: entry}})
}

// runStdioListenProxy serves a stdio server to HTTP hosts (--stdio 'cmd' --listen ADDR): what
// mcp-proxy and supergateway do. The stdio processes sit behind a Streamable HTTP backend on a
// private loopback port, and the ordinary HTTP proxy serves that on --listen, so the hosts go
// through the same listener and its checks, and the ledger records the stdio command (resume
// starts it again).
func runStdioListenProxy(ctx context.Context, f *Factory, opts *ProxyOptions, ref ServerRef, hdr http.Header, popts proxy.Options, errOut io.Writer) error {
	token := proxy.NewToken()
	backend := proxy.NewStdioBackend(proxy.StdioBackendOptions{Argv: ref.Argv, Dir: ref.Dir, Env: f.stdioEnv(ref), Token: token})
	defer backend.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	srv := &http.Server{Handler: backend, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(errOut, "mcptask: serving the stdio server %s over HTTP (one process per 2025-11-25 session, one shared by 2026-07-28 hosts)\n", strings.Join(quoteAll(ref.Argv), " "))
	inner := ref
	inner.URL = "http://" + ln.Addr().String() + "/mcp"
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr = hdr.Clone()
	hdr.Set(proxy.BackendTokenHeader, token)
	popts.Secret = append(popts.Secret, proxy.BackendTokenHeader) // redacted in the record
	return runHTTPProxy(ctx, f, opts, inner, hdr, popts, errOut)
}
