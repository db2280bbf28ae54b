package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/mcptask/mcptask/internal/tui"
	"github.com/spf13/cobra"

	tea "charm.land/bubbletea/v2"
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
	// BridgeTasks runs the calls of hosts that do not speak Tasks as tasks (proxy_bridge.go).
	BridgeTasks    bool
	OnInput        string
	BridgeProgress time.Duration
	// HostStdio serves the host over stdio while the server is reached over HTTP.
	HostStdio bool
	// upstream reaches the server in process instead of over the network (--stdio --listen).
	upstream http.RoundTripper
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
	errOut := &lockedWriter{w: f.IO.ErrOut}
	popts := proxy.Options{Server: toServer(ref), Secret: ref.HeaderNames, Redact: f.redactor()}
	if !opts.NoLedger {
		st, err := f.ledger()
		if err != nil {
			return err
		}
		popts.Ledger = ledger.New(st, ledger.Options{Sign: f.connector().Sign}) // failures become notices of the proxy
	}
	if f.Global.Record != "" {
		file, err := os.OpenFile(f.Global.Record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return flagErrorf("--record %s: %v", f.Global.Record, err)
		}
		defer func() { _ = file.Sync(); _ = file.Close() }()
		popts.Record = &lockedWriter{w: file}
	}
	if f.Global.Trace {
		popts.Trace = errOut
	}
	if popts.Bridge, err = bridgeOptions(opts, errOut); err != nil {
		return err
	}
	if opts.HostStdio {
		if opts.Listen != "" {
			return flagErrorf("--host-stdio serves the host on stdin and stdout: drop --listen")
		}
		return runHostStdioProxy(ctx, f, ref, hdr, popts, errOut)
	}
	if ref.URL == "" && opts.Listen != "" {
		return runStdioListenProxy(ctx, f, opts, ref, hdr, popts, errOut)
	}
	if ref.URL == "" {
		return runStdioProxy(ctx, f, ref, popts, errOut)
	}
	return runHTTPProxy(ctx, f, opts, ref, hdr, popts, errOut)
}

func runStdioProxy(ctx context.Context, f *Factory, ref ServerRef, popts proxy.Options, errOut io.Writer) error {
	var flush func()
	popts.OnEvent, flush = plainEvents(errOut, f.redactor())
	defer flush()
	p := proxy.New(popts)
	defer p.Close()
	code, err := p.RunStdio(ctx, proxy.StdioOptions{Argv: ref.Argv, Dir: ref.Dir, Env: f.connector().StdioEnv(ref), In: f.IO.In, Out: f.IO.Out, Stderr: errOut})
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if code != 0 {
		return &ExitError{Code: code, Err: fmt.Errorf("the server exited with code %d", code), Silent: true}
	}
	return nil
}

func runHTTPProxy(ctx context.Context, f *Factory, opts *ProxyOptions, ref ServerRef, hdr http.Header, popts proxy.Options, errOut io.Writer) error {
	ln, err := listenProxy(opts.Listen, errOut)
	if err != nil {
		return err
	}
	defer ln.Close()
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	view, flush := httpProxyEvents(f, &popts, endpoint, ref.URL, errOut)
	defer flush()
	p := proxy.New(popts)
	defer p.Close()
	handler, err := p.Handler(proxy.HTTPOptions{Upstream: ref.URL, Header: hdr, Insecure: f.Global.Insecure,
		AllowedHosts: opts.AllowedHosts, AllowedOrigins: opts.AllowedOrigins, Transport: opts.upstream})
	if err != nil {
		return flagErrorf("%v", err)
	}
	srv := proxy.NewServer(handler, proxy.ServerOptions{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(errOut, "mcptask: proxying %s -> %s\n", endpoint, ref)
	if popts.Ledger != nil {
		fmt.Fprintf(errOut, "mcptask: the hosts' tasks go to the ledger %s\n", popts.Ledger.Store().Path())
	}
	if view != nil {
		err = view.run(ctx)
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

// listenProxy listens on --listen (default 127.0.0.1 and a free port), warning when that is
// not a loopback address.
func listenProxy(listen string, errOut io.Writer) (net.Listener, error) {
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, flagErrorf("--listen %q: want HOST:PORT, such as 127.0.0.1:7070", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(errOut, "mcptask: warning: listening on %s, not on loopback: whoever can reach it can use the server through it, with the credentials of the hosts that pass\n", ln.Addr())
	}
	return ln, nil
}

// httpProxyEvents chooses where the HTTP proxy's events go: the live view on a terminal (not
// with --trace, which writes there too), else plain lines on errOut, flushed by the returned
// func.
func httpProxyEvents(f *Factory, popts *proxy.Options, endpoint, upstream string, errOut io.Writer) (*proxyView, func()) {
	if !f.useTUI() || f.Global.Trace {
		var flush func()
		popts.OnEvent, flush = plainEvents(errOut, f.redactor())
		return nil, flush
	}
	ledger := ""
	if popts.Ledger != nil {
		ledger = popts.Ledger.Store().Path()
	}
	view := newProxyView(f, endpoint, upstream, ledger)
	popts.OnEvent = view.send
	return view, func() {}
}

// plainEvents prints one line per task event and violation: no view, no terminal. The lines go
// through an eventQueue, so that a stderr nobody reads (a host that never drains the stdio
// proxy's stderr, a terminal paused with ctrl+s) never holds up the traffic; the returned
// func writes what is still queued (waiting at most a second for a stuck stderr). The lines
// are a log (a CI job's, often), so they are redacted: a server may echo a credential.
func plainEvents(w io.Writer, red *redact.Redactor) (func(proxy.Event), func()) {
	q := newEventQueue(proxyViewBuffer)
	go q.run(func(ev proxy.Event) {
		if line := eventLine(ev); line != "" {
			fmt.Fprintln(w, red.Text(line))
		}
	})
	return q.push, func() { q.close(time.Second) }
}

// eventLine renders ev as the one-line form of the plain output, "" for events that have none
// (polls). Every string from a host or a server is made safe for a terminal.
func eventLine(ev proxy.Event) string {
	ts := ev.Time.UTC().Format(time.RFC3339)
	t := ev.Task
	switch ev.Kind {
	case proxy.EventCreated:
		where := ""
		if t.OnHost {
			where = " (a task on the host)"
		}
		s := fmt.Sprintf("%s %s created by %s: %s, MCP %s, %s", ts, termsafe.Line(t.ID), termsafe.Line(ev.Host), termsafe.Line(t.Tool), t.Version, termsafe.Line(t.Status))
		if t.Message != "" {
			s += " " + termsafe.Line(t.Message)
		}
		return s + where
	case proxy.EventStatus:
		s := fmt.Sprintf("%s %s %s", ts, termsafe.Line(t.ID), termsafe.Line(t.Status))
		if t.Message != "" {
			s += " " + termsafe.Line(t.Message)
		}
		if ev.Via == "push" {
			s += " (push)"
		}
		return s
	case proxy.EventViolation:
		v := ev.Violation
		who := "the server"
		if v.Peer == check.PeerHost {
			who = "the host " + termsafe.Line(v.Host)
		}
		return fmt.Sprintf("%s violation: %s broke rule %s (%s): %s", ts, who, v.Rule, v.Section, termsafe.Line(v.Seen))
	case proxy.EventNotice:
		return fmt.Sprintf("%s notice: %s", ts, termsafe.Line(ev.Text))
	}
	return ""
}

// printProxyConfig prints the config entry of a named server, rewritten to go through the
// proxy: a stdio entry runs `mcptask proxy --stdio`, an HTTP entry points at --listen.
func printProxyConfig(f *Factory, opts *ProxyOptions, c *cobra.Command) error {
	name := opts.PrintConfig
	set, err := f.servers()
	if err != nil {
		return err
	}
	src := set.Entry(name)
	if src == nil {
		return flagErrorf("--print-config %q: no server of that name in the config files; 'mcptask servers' lists them", name)
	}
	// The entry as the file has it, so that fields mcptask does not know (cwd, type, …) stay.
	var entry map[string]any
	if err := json.Unmarshal(src.Raw, &entry); err != nil || entry == nil {
		return fmt.Errorf("config file %s: server %q is not a JSON object", src.Source, name)
	}
	// Flags given with --print-config are carried into the proxy's command line.
	var extra []string
	if opts.NoLedger {
		extra = append(extra, "--no-ledger")
	}
	extra = append(extra, bridgeArgs(opts, c)...)
	for _, fl := range []string{"record", "state", "config"} {
		if fg := c.Flags().Lookup(fl); fg != nil && fg.Changed {
			v := fg.Value.String()
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
			extra = append(extra, "--"+fl, v)
		}
	}
	if src.URL != "" && opts.HostStdio {
		return printHostStdioConfig(f, opts, name, src, entry, extra)
	}
	if src.URL != "" {
		if opts.Listen == "" {
			return flagErrorf("server %q is an HTTP server: give --listen 127.0.0.1:PORT, the address the proxy will serve it on", name)
		}
		entry["url"] = "http://" + opts.Listen + "/mcp"
		// The host's headers pass through the proxy unchanged, so they stay in the entry.
		hint := append([]string{"mcptask", "proxy", "--server", name, "--listen", opts.Listen}, extra...)
		fmt.Fprintf(f.IO.ErrOut, "mcptask: run the proxy with: %s\n", strings.Join(quoteAll(hint), " "))
	} else {
		if src.Command == "" {
			return flagErrorf("server %q in %s has neither url nor command", name, src.Source)
		}
		entry["command"] = selfCommand()
		entry["args"] = append(append([]string{"proxy"}, extra...), "--stdio", strings.Join(quoteAll(append([]string{src.Command}, src.Args...)), " "))
	}
	return writeJSON(f.IO.Out, map[string]any{"mcpServers": map[string]any{name: entry}})
}

// selfCommand is how a host should start this mcptask: "mcptask" when that is what PATH finds,
// else the absolute path of the running binary (desktop apps often have a short PATH).
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "mcptask"
	}
	if p, err := exec.LookPath("mcptask"); err == nil {
		if a, err := filepath.EvalSymlinks(p); err == nil {
			if b, err := filepath.EvalSymlinks(self); err == nil && a == b {
				return "mcptask"
			}
		}
	}
	return self
}

// proxyViewBuffer is how many events wait for the live view or the plain lines before new ones
// are dropped: a few seconds of a busy proxy, a few MiB at most.
var proxyViewBuffer = 4096

// eventQueue carries the proxy's events to whatever shows them (the live view, the plain lines
// on stderr), which may be slow or stuck: a terminal paused with ctrl+s, a pipe nobody reads.
// push never blocks, because it runs on the relay's goroutines and the proxy's promise is that
// its display never holds up the traffic; when the queue is full, polls are dropped first,
// then everything, and the count of dropped events is shown once the consumer catches up.
// The ledger and --record do not go through it and miss nothing.
type eventQueue struct {
	ch      chan proxy.Event
	dropped atomic.Int64
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newEventQueue(size int) *eventQueue {
	return &eventQueue{ch: make(chan proxy.Event, size), stop: make(chan struct{}), done: make(chan struct{})}
}

// push queues ev, or drops it and counts it; it never blocks.
func (q *eventQueue) push(ev proxy.Event) {
	// Polls are the bulk and carry the least: leave the last quarter of the queue to the rest.
	if ev.Kind == proxy.EventPoll && len(q.ch) >= cap(q.ch)*3/4 {
		q.dropped.Add(1)
		return
	}
	select {
	case q.ch <- ev:
	default:
		q.dropped.Add(1)
	}
}

// run hands the queued events to consume, one at a time, until close; it reports what was
// dropped before the next event it hands on. Only run calls consume, so consume may block.
func (q *eventQueue) run(consume func(proxy.Event)) {
	defer close(q.done)
	give := func(ev proxy.Event) {
		if n := q.dropped.Swap(0); n > 0 {
			consume(proxy.Event{Kind: proxy.EventNotice, Time: ev.Time,
				Text: fmt.Sprintf("%d events were not shown: the display could not keep up (the ledger and --record have them all)", n)})
		}
		consume(ev)
	}
	for {
		select {
		case ev := <-q.ch:
			give(ev)
		case <-q.stop:
			for {
				select {
				case ev := <-q.ch:
					give(ev)
				default:
					return
				}
			}
		}
	}
}

// close stops run once it has handed on what is queued, waiting at most wait for a consumer
// that is stuck (the process is ending; a stuck terminal must not keep it alive).
func (q *eventQueue) close(wait time.Duration) {
	q.once.Do(func() { close(q.stop) })
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
}

// proxyView runs the live view of the proxy: the proxy's events reach the program through an
// eventQueue, so that a slow or stuck terminal never holds up the traffic.
type proxyView struct {
	f    *Factory
	opts tui.ProxyOptions
	q    *eventQueue
}

func newProxyView(f *Factory, endpoint, upstream, ledger string) *proxyView {
	return &proxyView{f: f, q: newEventQueue(proxyViewBuffer),
		opts: tui.ProxyOptions{Listen: endpoint, Upstream: upstream, Ledger: ledger, NoColor: f.Getenv("NO_COLOR") != ""}}
}

// send is the proxy's OnEvent: it never blocks.
func (v *proxyView) send(ev proxy.Event) { v.q.push(ev) }

// tuiEvent converts a proxy event for the view.
func tuiEvent(ev proxy.Event) tui.ProxyEvent {
	t := ev.Task
	return tui.ProxyEvent{Kind: string(ev.Kind), Time: ev.Time, Host: ev.Host, TaskID: t.ID, Tool: t.Tool, Status: t.Status,
		Message: t.Message, Version: t.Version, PollInterval: t.PollInterval, CreatedAt: t.CreatedAt, OnHost: t.OnHost,
		Push: ev.Via == "push", Rule: ev.Violation.Rule, Section: ev.Violation.Section, Peer: ev.Violation.Peer,
		Seen: ev.Violation.Seen, Text: ev.Text}
}

// run shows the view until the user quits or ctx ends.
func (v *proxyView) run(ctx context.Context) error {
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(v.f.IO.In), tea.WithOutput(v.f.IO.Out), tea.WithFPS(tui.FPS)}
	if w, h := v.f.IO.Size(); w > 0 && h > 0 {
		popts = append(popts, tea.WithWindowSize(w, h))
	}
	prog := tea.NewProgram(tui.NewProxyModel(v.opts), popts...)
	go v.q.run(func(ev proxy.Event) { prog.Send(tui.ProxyEventMsg(tuiEvent(ev))) })
	// prog.Send returns once the program has ended, so close does not wait for long.
	defer v.q.close(time.Second)
	_, err := prog.Run()
	if err != nil && ctx.Err() == nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("proxy view: %w", err)
	}
	return nil
}
