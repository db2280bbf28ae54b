package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/spf13/cobra"
)

// DemoOptions are the inputs of `mcptask demo` and `mcptask demo serve`.
type DemoOptions struct {
	f            *Factory
	Addr         string
	Stdio        bool
	Store        string
	Step         time.Duration
	PollInterval time.Duration
	Protocol     string
	Seconds      int
	// ExitAfter (hidden --exit-after) stops a stdio server after that many requests.
	ExitAfter int
	// Conformance offers the official conformance suite's fixture tools.
	Conformance bool
	// AllowRemote lets the demo listen on an address other than loopback.
	AllowRemote bool
}

// NewCmdDemo returns `mcptask demo`, which shows mcptask at work against its built-in
// reference server, and `mcptask demo serve`, which runs that server for other clients.
func NewCmdDemo(f *Factory) *cobra.Command {
	opts := &DemoOptions{f: f}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Watch a real task run against the built-in demo server",
		Long: `Start the built-in demo MCP server on a free loopback port and run
'mcptask call sleep' against it, so you can see a task being created, polled and
finished without setting anything up. On a terminal it ends with commands to try
next, against 'mcptask demo serve' on the same address.

The demo server speaks both MCP 2026-07-28 (with the tasks extension) and MCP
2025-11-25 (core tasks) on one endpoint; --protocol picks which one the demo uses.
Run it on its own with 'mcptask demo serve'.`,
		Example: `  mcptask demo
  mcptask demo --protocol 2025-11-25 --seconds 5`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runDemo(c.Context(), opts)
		},
	}
	c.Flags().IntVar(&opts.Seconds, "seconds", 3, "how long the demo task runs")
	c.AddCommand(newCmdDemoServe(f))
	return c
}

func runDemo(ctx context.Context, opts *DemoOptions) error {
	f := opts.f
	if opts.Seconds < 1 || opts.Seconds > 3600 {
		return flagErrorf("--seconds must be between 1 and 3600")
	}
	if f.Global.Server != "" || f.Global.Stdio != "" {
		return flagErrorf("mcptask demo starts its own server; drop --server/--stdio (or use 'mcptask call' against yours)")
	}
	url, stop, err := demo.StartLoopback(demo.Options{PollInterval: 500 * time.Millisecond})
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(f.IO.ErrOut, "Demo MCP server listening on %s\n", url)
	fmt.Fprintf(f.IO.ErrOut, "Running: mcptask call sleep --arg seconds=%d --server %s\n\n", opts.Seconds, url)
	err = runCall(ctx, &CallOptions{f: f, server: url, Tool: "sleep", Arg: []string{fmt.Sprintf("seconds=%d", opts.Seconds)}})
	if err == nil && f.IO.CanPrompt(f.Getenv) && f.IO.IsStderrTTY() {
		// A person ran the demo: say what to try next. On a pipe the output stays the call's.
		fmt.Fprint(f.IO.ErrOut, demoNext(url))
	}
	return err
}

// demoNext is what to try after the demo, against a demo server on the address the demo used,
// so that every command shown works as it is once that server runs.
func demoNext(serverURL string) string {
	addr := "127.0.0.1:8080"
	if u, err := url.Parse(serverURL); err == nil && u.Host != "" {
		addr = u.Host
	}
	s := "--server " + serverURL
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe demo server has stopped. To try more, run it in another terminal:\n")
	fmt.Fprintf(&b, "  mcptask demo serve --addr %s\n", addr)
	fmt.Fprintf(&b, "then:\n")
	for _, c := range [][2]string{
		{"its tools:", "mcptask tools " + s},
		{"a task that asks:", "mcptask call ask " + s},
		{"start one, leave it:", "mcptask call forever --detach " + s},
		{"your tasks:", "mcptask list"},
		{"follow them live:", "mcptask resume"},
	} {
		fmt.Fprintf(&b, "  %-21s %s\n", c[0], c[1])
	}
	return b.String()
}

func newCmdDemoServe(f *Factory) *cobra.Command {
	opts := &DemoOptions{f: f}
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:PORT | --stdio] [--store FILE]",
		Short: "Run the built-in demo MCP task server",
		Long: `Run the demo MCP server: a reference task server that speaks MCP 2026-07-28
with the io.modelcontextprotocol/tasks extension and MCP 2025-11-25 core tasks on one
endpoint, and follows the server rules of both.

Tools: echo (immediate), sleep (a task with a status message per second), fail (a
JSON-RPC error), tool_error (an isError result), ask (needs input through an
elicitation form), confirm (2026-07-28 multi-round-trip input before the task),
forever (runs until cancelled), deploy (asks to confirm under a key made up at run
time, confirm-<8 hex digits>, one question per --arg targets=N), progress (counts
--arg steps=N seconds inside the call, with notifications/progress n of N; never a
task).

The demo has no authentication: anyone who can reach its port can run its tools. It
listens on loopback only; an --addr that is not a loopback address is refused unless
--allow-remote says that is meant, and even then a warning is printed.

With --store FILE the server keeps its tasks in FILE and picks them up again after a
restart, which is what resume tests need.

With --conformance the server also offers the fixture tools the official MCP
conformance suite (@modelcontextprotocol/conformance) calls by name (greet,
slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input,
test_tool_with_task and the diagnostic tools of server-stateless) and an empty prompt
and resource catalogue, so that the suite's server scenarios can run against it.`,
		Example: `  mcptask demo serve --addr 127.0.0.1:8080
  mcptask call sleep --arg seconds=10 --stdio 'mcptask demo serve --stdio'
  mcptask demo serve --conformance --addr 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runDemoServe(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "loopback `host:port` to listen on")
	c.Flags().BoolVar(&opts.AllowRemote, "allow-remote", false, "listen on a non-loopback --addr too (the demo has no authentication)")
	c.Flags().BoolVar(&opts.Stdio, "stdio", false, "serve one client on stdin/stdout instead of HTTP")
	c.Flags().StringVar(&opts.Store, "store", "", "keep tasks in this `FILE` across restarts")
	c.Flags().DurationVar(&opts.Step, "step", time.Second, "length of one step of the sleep and forever tools")
	c.Flags().DurationVar(&opts.PollInterval, "poll-interval", time.Second, "poll interval the server suggests on every task")
	c.Flags().BoolVar(&opts.Conformance, "conformance", false, "also offer the fixture tools of the official MCP conformance suite")
	c.Flags().IntVar(&opts.ExitAfter, "exit-after", 0, "with --stdio, stop after reading `N` requests (fault injection for tests)")
	_ = c.Flags().MarkHidden("exit-after")
	return c
}

func runDemoServe(ctx context.Context, opts *DemoOptions) error {
	f := opts.f
	logf := func(format string, args ...any) { fmt.Fprintf(f.IO.ErrOut, "demo: "+format+"\n", args...) }
	err := demo.Serve(ctx, demo.Options{Store: opts.Store, StepDelay: opts.Step, PollInterval: opts.PollInterval, Logf: logf, Conformance: opts.Conformance},
		demo.ServeOptions{Addr: opts.Addr, AllowRemote: opts.AllowRemote, Stdio: opts.Stdio, ExitAfter: opts.ExitAfter, In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut})
	if re := (*demo.RemoteError)(nil); errors.As(err, &re) {
		return &FlagError{Err: err}
	}
	return err
}
