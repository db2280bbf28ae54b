package cmd

import (
	"errors"
	"io"
	"strings"

	"github.com/mcptask/mcptask/internal/bridge"
	"github.com/mcptask/mcptask/internal/exitcode"
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
	c.Flags().BoolVar(&opts.Bridge.On, "bridge-tasks", false, "run the tool calls of hosts that do not speak Tasks as tasks: followed by mcptask, kept in the ledger, answered as one ordinary call")
	c.Flags().StringVar(&opts.Bridge.OnInput, "on-input", "", "with --bridge-tasks, `MODE` for a task's question the host cannot take: fail (the default: the call fails naming 'mcptask update' and the task), decline, or exec:CMD")
	c.Flags().BoolVar(&opts.HostStdio, "host-stdio", false, "serve the host over stdio while reaching the --server URL over Streamable HTTP (what mcp-remote does; OAuth is mcptask's own)")
	c.Flags().DurationVar(&opts.Bridge.ProgressEvery, "bridge-progress", proxy.DefaultProgressEvery, "with --bridge-tasks, how often a host that sent a progressToken hears that its task still runs")
}

// bridgeOptions reads the bridge flags (bridge.ProxyOptions); nil when --bridge-tasks is off.
func bridgeOptions(opts *ProxyOptions, stderr io.Writer) (*proxy.BridgeOptions, error) {
	b, err := bridge.ProxyOptions(opts.Bridge, func(mode string) (follow.Answerer, error) {
		// The proxy's stdin may be the host's stream: nothing is read from it.
		return (&AnswerFlags{OnInput: mode}).parse(strings.NewReader(""), stderr)
	})
	if ue := (*exitcode.UsageError)(nil); errors.As(err, &ue) {
		return nil, &FlagError{Err: ue.Err}
	}
	return b, err
}
