package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcptask/mcptask/internal/bridge"
	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/iostreams"
	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/mcptask/mcptask/internal/tui"
	"github.com/spf13/cobra"
)

// ProxyOptions are the inputs of `mcptask proxy`.
type ProxyOptions struct {
	f           *Factory
	Listen      string
	NoLedger    bool
	PrintConfig string
	// AllowedHosts and AllowedOrigins widen the proxy's DNS-rebinding protection.
	AllowedHosts   []string
	AllowedOrigins []string
	// Bridge runs the calls of hosts that do not speak Tasks as tasks (proxy_bridge.go).
	Bridge bridge.Flags
	// HostStdio serves the host over stdio while the server is reached over HTTP.
	HostStdio bool
}

// NewCmdProxy returns `mcptask proxy`.
func NewCmdProxy(f *Factory, runF func(context.Context, *ProxyOptions) error) *cobra.Command {
	opts := &ProxyOptions{f: f}
	c := &cobra.Command{
		Use:     "proxy (--server URL|NAME [--listen ADDR] | --stdio 'command args' | --print-config NAME)",
		Short:   "Stand between an MCP host and a server: record, lint and keep every task the host creates",
		Long:    proxyLong,
		Example: proxyExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runProxy(c.Context(), opts, c)
		},
	}
	opts.addFlags(c)
	return c
}

// addFlags defines the proxy's flags on c, the bridge's among them (proxy_bridge.go).
func (opts *ProxyOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&opts.Listen, "listen", "", "address `HOST:PORT` to serve the HTTP endpoint on (default 127.0.0.1 and a free port)")
	c.Flags().BoolVar(&opts.NoLedger, "no-ledger", false, "do not write the hosts' tasks to the ledger")
	c.Flags().StringArrayVar(&opts.AllowedHosts, "allowed-host", nil, "also accept requests whose Host is `NAME[:PORT]` (repeatable; default: loopback names and the listening address)")
	c.Flags().StringArrayVar(&opts.AllowedOrigins, "allowed-origin", nil, "also accept requests from the browser origin `URL`, such as http://app.example:8080 (repeatable; default: loopback origins)")
	addBridgeFlags(c, opts)
	c.Flags().StringVar(&opts.PrintConfig, "print-config", "", "print the config entry of server `NAME` rewritten to go through the proxy, and exit")
}

// proxyLong is the proxy's help; addBridgeFlags adds the bridge's part.
const proxyLong = `Put mcptask between any MCP host (an editor, a desktop app, an agent framework) and
any server. The traffic is forwarded unchanged, both ways: same status codes, headers and
bytes (hop-by-hop headers aside), SSE events as they arrive, malformed messages as they are
(reported, never repaired). On the way:

- every task the host creates is written to the mcptask ledger before the host learns of
  it, with the server, era, negotiated version and 2025-11-25 session, marked "via proxy";
  status changes the proxy sees update it. 'mcptask list', 'watch', 'result' and 'resume'
  then follow or recover the host's tasks, even after the host died. --no-ledger turns
  this off.
- --record FILE writes the traffic as NDJSON, like the client's recorder, with a direction
  and a peer (host or server) on every line; Authorization and cookie values are redacted.
- both sides are linted live: the server rules of --record, and the host's side (tasks/get
  for an unknown id, polling faster than the poll interval, tasks/result or tasks/list in
  2026-07-28, a missing Mcp-Name on tasks/*, a capability used that was not declared).
  Each violation is one line on stderr, and a line in the record. --trace prints the
  same stream in human form on stderr (secrets redacted; no live view then).

HTTP: --server URL (or the name of a server in an MCP config file) is the real endpoint;
the proxy serves it on --listen (default 127.0.0.1 on a free port, printed at start) and
passes every header through, Mcp-Session-Id, Mcp-* and Authorization included (--header,
--bearer-env and a named server's headers are added to requests that lack them). Point the
host at the printed URL instead of the server's.

The HTTP proxy serves MCP hosts, not web pages, which can reach a loopback port too (DNS
rebinding, forms). Every request is checked before anything is forwarded: its Host must be a
loopback name or address, or the address the proxy listens on, with the proxy's port, and its
Origin, if it has one, a loopback origin; anything else gets 403 and a line on stderr
(--allowed-host and --allowed-origin accept more). Only the MCP endpoint (/mcp, /, the
server's own path) and the OAuth metadata a host reads (/.well-known/oauth-protected-resource,
/.well-known/oauth-authorization-server, /.well-known/openid-configuration) are forwarded;
other paths get 404. --header, --bearer-env and a named server's headers are added to MCP
endpoint requests only. A request body over 32 MiB gets 413; a host has 10 s to send its
headers, 30 s for its body and a minute to read each write of the proxy.

stdio: --stdio 'command args' makes the proxy a stdio server that starts the real one and
relays its frames; in the host's config, "command": "server", "args": [...] becomes
"command": "mcptask", "args": ["proxy", "--stdio", "server ..."]. --print-config NAME
prints that rewritten entry for a server named in a config file.

On a terminal the proxy shows a live view of the tasks passing through (tool, status,
message, age, who polls them and how often) and a count of violations per rule; elsewhere
(and always over stdio, whose stdout belongs to the host) it prints one line per task event
and violation on stderr. Neither ever holds up the traffic: when the terminal (or stderr)
cannot keep up, events are skipped and their count shown; the ledger and --record miss
nothing. It runs until interrupted (exit 0); a stdio proxy ends with its server and exits
with the server's exit code.`

const proxyExample = `  # HTTP: serve the real server on a local port, then point the host at it
  mcptask proxy --server https://mcp.example.com/mcp --listen 127.0.0.1:7070 --record host.ndjson

  # stdio: the entry of a host's .mcp.json, rewritten
  mcptask proxy --print-config builds
  mcptask proxy --stdio 'npx -y @modelcontextprotocol/server-everything stdio'

  # Recover the tasks of a host that crashed
  mcptask list
  mcptask resume`

// runProxy checks the flags, opens the ledger and the record, and runs the proxy
// (proxy.Run); a stdio server's exit code is the command's.
func runProxy(ctx context.Context, opts *ProxyOptions, c *cobra.Command) error {
	f := opts.f
	if opts.PrintConfig != "" {
		return printProxyConfig(f, opts, c)
	}
	ref, hdr, err := f.serverRef()
	if err != nil {
		return err
	}
	if ref.URL == "" && opts.Listen == "" && len(opts.AllowedHosts)+len(opts.AllowedOrigins) > 0 {
		return flagErrorf("--allowed-host and --allowed-origin guard the HTTP proxy; a stdio proxy without --listen has no web page to fear (drop them)")
	}
	if f.Global.Protocol != "auto" {
		return flagErrorf("--protocol does not apply to the proxy: the host and the server negotiate, the proxy only watches")
	}
	// The proxy's lines, the server's stderr and the record come from several goroutines.
	errOut := iostreams.NewLocked(f.IO.ErrOut)
	popts := proxy.Options{Server: toServer(ref), Secret: ref.HeaderNames, Redact: f.redactor()}
	run := proxy.RunOptions{URL: ref.URL, Argv: ref.Argv, Dir: ref.Dir, Header: hdr, Insecure: f.Global.Insecure,
		Listen: opts.Listen, AllowedHosts: opts.AllowedHosts, AllowedOrigins: opts.AllowedOrigins,
		HostStdio: opts.HostStdio, In: f.IO.In, Out: f.IO.Out, Stderr: errOut}
	if !opts.NoLedger {
		if run.Ledger, err = f.ledger(); err != nil {
			return err
		}
		run.Sign = f.connector().Sign
	}
	if f.Global.Record != "" {
		file, err := os.OpenFile(f.Global.Record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return flagErrorf("--record %s: %v", f.Global.Record, err)
		}
		defer func() { _ = file.Sync(); _ = file.Close() }()
		popts.Record = iostreams.NewLocked(file)
	}
	if f.Global.Trace {
		popts.Trace = errOut
	}
	if popts.Bridge, err = bridgeOptions(opts, errOut); err != nil {
		return err
	}
	if ref.URL == "" {
		run.Env = f.connector().StdioEnv(ref)
	} else if opts.HostStdio {
		f.authBrowser = true // a desktop host has no terminal, but its user has a browser
		run.HTTP = f.connector().HTTPOptions(&ref, hdr, nil)
	}
	if f.useTUI() && !f.Global.Trace { // --trace writes to the terminal too: no live view then
		run.View = proxyView(f.IO, f.Getenv("NO_COLOR") != "")
	}
	code, err := proxy.Run(ctx, popts, run) // its usage errors are exitcode.UsageErrors: exit 2
	if err == nil && code != 0 {
		err = &ExitError{Code: code, Err: fmt.Errorf("the server exited with code %d", code), Silent: true}
	}
	return err
}

// printProxyConfig prints the config entry of a named server rewritten to go through the
// proxy (config.Set.ProxyEntry), with the proxy flags given beside --print-config.
func printProxyConfig(f *Factory, opts *ProxyOptions, c *cobra.Command) error {
	set, err := f.servers()
	if err != nil {
		return err
	}
	var args []string
	if opts.NoLedger {
		args = append(args, "--no-ledger")
	}
	if opts.Bridge.On {
		args = append(args, "--bridge-tasks")
	}
	for i, name := range []string{"on-input", "bridge-progress", "record", "state", "config"} {
		if fl := c.Flags().Lookup(name); fl != nil && fl.Changed {
			v := fl.Value.String()
			if abs, err := filepath.Abs(v); err == nil && i >= 2 {
				v = abs // a file: the host starts mcptask in a directory of its own
			}
			args = append(args, "--"+name, v)
		}
	}
	entry, err := set.ProxyEntry(opts.PrintConfig, config.ProxyEntryOptions{Listen: opts.Listen, HostStdio: opts.HostStdio, Args: args, Self: config.SelfCommand()})
	if err != nil {
		return connErr(err)
	}
	for _, note := range entry.Notes {
		fmt.Fprintf(f.IO.ErrOut, "mcptask: %s\n", termsafe.String(note)) // it names the file's URL
	}
	return writeJSON(f.IO.Out, entry.Doc)
}

// proxyView is the HTTP proxy's live view on the terminal of ios, fed from the proxy's
// EventQueue so that a slow or stuck terminal never holds up the traffic.
func proxyView(ios *IOStreams, noColor bool) func(context.Context, proxy.ViewInfo, *proxy.EventQueue) error {
	return func(ctx context.Context, v proxy.ViewInfo, q *proxy.EventQueue) error {
		defer q.Close(time.Second) // the view has ended: its sends return at once
		w, h := ios.Size()
		return tui.RunProxy(ctx, tui.ProxyOptions{Listen: v.Endpoint, Upstream: v.Upstream, Ledger: v.Ledger, NoColor: noColor},
			tui.ProxyScreen{In: ios.In, Out: ios.Out, Width: w, Height: h}, func(send func(tui.ProxyEvent)) {
				q.Run(func(ev proxy.Event) {
					t := ev.Task
					send(tui.ProxyEvent{Kind: string(ev.Kind), Time: ev.Time, Host: ev.Host, TaskID: t.ID, Tool: t.Tool, Status: t.Status,
						Message: t.Message, Version: t.Version, PollInterval: t.PollInterval, CreatedAt: t.CreatedAt, OnHost: t.OnHost,
						Push: ev.Via == "push", Rule: ev.Violation.Rule, Section: ev.Violation.Section, Peer: ev.Violation.Peer,
						Seen: ev.Violation.Seen, Text: ev.Text})
				})
			})
	}
}
