package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/bridge"
	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/spf13/cobra"
)

// The flags of `mcptask proxy --bridge-tasks` (issue 22): kept apart from proxy.go so that the
// bridge and the proxy's other flags change without touching each other.

// bridgeHelp is the part of the proxy's help about bridging what a host lacks.
const bridgeHelp = `

Bridging what a host lacks (see docs/bridging-hosts.md):

- --bridge-tasks gives Tasks to hosts that do not speak them (a 2025-11-25 tools/call
  without params.task; a 2026-07-28 request that does not declare the tasks extension).
  Such a host sees every tool as callable; the proxy makes its call as a task, writes the
  task to the ledger first, follows it, and answers the host's request with the result or
  the error: one ordinary call. While the task runs the host gets notifications/progress
  (when it sent a progressToken) every --bridge-progress, so a timeout that resets on
  progress never runs out. A question the task asks goes to the host when it declared the
  capability it needs (2025-11-25: as elicitation/create or sampling/createMessage;
  2026-07-28: as an input_required round its tools/call retries), else --on-input decides
  (exec:CMD answers, decline declines, fail fails the call naming 'mcptask update' and the
  task). The host cancelling its request cancels the task; the host going away leaves the
  task running and in the ledger ('mcptask result ID' gets it). Hosts that speak Tasks are
  forwarded unchanged.
- --host-stdio --server URL: the host starts mcptask as its stdio server and mcptask
  speaks Streamable HTTP to the server (what mcp-remote does), with mcptask's own OAuth:
  stored credentials, refresh, and the browser login when the server answers 401. Nothing
  but the host's JSON-RPC is written to stdout. --print-config NAME --host-stdio prints the
  entry for a stdio-only host.
- --stdio 'command args' --listen ADDR: HTTP hosts reach a stdio server (what mcp-proxy
  and supergateway do): one server process per 2025-11-25 session, one shared by
  2026-07-28 hosts, behind the same listener as an HTTP server.`

const bridgeExamples = `

  # A desktop host that does not speak Tasks, to a server whose tools need them
  mcptask proxy --bridge-tasks --stdio 'npx -y @modelcontextprotocol/server-everything stdio'

  # A stdio-only host to a remote server that requires OAuth
  mcptask proxy --host-stdio --bridge-tasks --server https://mcp.example.com/mcp

  # HTTP hosts to a stdio server
  mcptask proxy --stdio 'npx -y @acme/builds-mcp' --listen 127.0.0.1:7070`

func addBridgeFlags(c *cobra.Command, opts *ProxyOptions) {
	c.Use = "proxy (--server URL|NAME [--listen ADDR | --host-stdio] | --stdio 'command args' [--listen ADDR] | --print-config NAME) [--bridge-tasks]"
	c.Long += bridgeHelp
	c.Example += bridgeExamples
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
	var onInput follow.Answerer
	switch {
	case opts.OnInput == "" || opts.OnInput == "fail":
	case opts.OnInput == "decline" || strings.HasPrefix(opts.OnInput, execPrefix):
		// The proxy's stdin may be the host's stream: nothing is read from it.
		a := &AnswerFlags{OnInput: opts.OnInput}
		ans, err := a.parse(strings.NewReader(""), stderr)
		if err != nil {
			return nil, err
		}
		onInput = ans
	default:
		return nil, flagErrorf("--on-input %q: want fail, decline or exec:CMD (the proxy has no terminal to prompt on)", opts.OnInput)
	}
	return &proxy.BridgeOptions{ProgressEvery: opts.BridgeProgress, Follow: bridge.New(onInput)}, nil
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
	var flush func()
	popts.OnEvent, flush = plainEvents(errOut, f.redactor())
	defer flush()
	p := proxy.New(popts)
	defer p.Close()
	o := f.connector().HTTPOptions(&ref, hdr, nil)
	if err := p.RunHostStdio(ctx, proxy.HostStdioOptions{Upstream: ref.URL, HTTP: o, In: f.IO.In, Out: f.IO.Out}); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// printHostStdioConfig prints the entry of HTTP server name rewritten so that a stdio-only host
// starts `mcptask proxy --host-stdio` for it.
func printHostStdioConfig(f *Factory, opts *ProxyOptions, name string, src *config.Server, entry map[string]any, extra []string) error {
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
// mcp-proxy and supergateway do. The stdio processes sit behind a Streamable HTTP backend that
// the ordinary HTTP proxy reaches in process (no second port), so the hosts go through the
// same listener and its checks, and the ledger records the stdio command (resume starts it
// again).
func runStdioListenProxy(ctx context.Context, f *Factory, opts *ProxyOptions, ref ServerRef, hdr http.Header, popts proxy.Options, errOut io.Writer) error {
	backend := proxy.NewStdioBackend(proxy.StdioBackendOptions{Argv: ref.Argv, Dir: ref.Dir, Env: f.connector().StdioEnv(ref)})
	defer backend.Close()
	fmt.Fprintf(errOut, "mcptask: serving the stdio server %s over HTTP (one process per 2025-11-25 session, one shared by 2026-07-28 hosts)\n", strings.Join(quoteAll(ref.Argv), " "))
	inner := ref
	inner.URL = stdioBackendURL
	opts.upstream = backend.Transport()
	return runHTTPProxy(ctx, f, opts, inner, hdr, popts, errOut)
}

// stdioBackendURL names the in-process backend of --stdio --listen in the record; nothing
// dials it.
const stdioBackendURL = "http://stdio-server/mcp"
