// Package cmd holds mcptask's commands: one file per verb, each with an options struct, a
// NewCmdX constructor and a runX function. Main builds the root command, runs it, and maps
// whatever error comes back to an exit code (internal/output, internal/exitcode).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/mcptask/mcptask/internal/buildinfo"
	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/globalflags"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/spf13/cobra"
)

// Factory carries what commands need from the outside world, so that tests can replace it.
type Factory struct {
	IO     *IOStreams
	Global *GlobalOptions
	Now    func() time.Time
	Getenv func(string) string

	// Workflow holds the flags of the commands that follow tasks (--on-complete, --notify);
	// wf is this run's CI writers, log and summary, hooks and notifications (workflow.go).
	Workflow WorkflowOptions
	wf       *workflow

	// cfg is this run's config files of named servers, read once (servers).
	cfgOnce sync.Once
	cfg     *config.Set
	cfgErr  error

	// conn is this run's connector (connector): pools, OAuth sessions, trace, record, keyring.
	connOnce sync.Once
	conn     *connect.Connector

	// red is this run's redactor (redactor): it knows the user's secrets; redOuts are the
	// writers that hide them in stdout and stderr (redactStreams).
	redOnce sync.Once
	red     *redact.Redactor
	redOuts []*redact.Writer

	// started is when the command started: its --timeout counts from here (deadline).
	started time.Time

	// authBrowser lets the login flow open the browser without a terminal: a desktop host
	// runs `proxy --host-stdio` with pipes only (issue 22).
	authBrowser bool
}

// NewFactory returns a Factory on io with the real clock and environment.
func NewFactory(io *IOStreams) *Factory {
	return &Factory{IO: io, Global: &GlobalOptions{}, Now: time.Now, Getenv: os.Getenv}
}

// Main runs mcptask with os.Args and returns the exit code. Only main calls os.Exit.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// MCPTASK_CPUPROFILE=FILE writes a CPU profile of the run, for the scale benchmarks.
	if p := os.Getenv("MCPTASK_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile() // runs before the Close above
			}
		}
	}
	return Run(ctx, NewFactory(SystemIO()), os.Args[1:])
}

// Run executes one mcptask command line against f and returns the exit code.
func Run(ctx context.Context, f *Factory, args []string) int {
	f.started = time.Now()
	root := NewCmdRoot(f)
	err := execute(ctx, f, root, args)
	if f.conn != nil {
		f.conn.Close() // what the run's connections shared: the --record file
	}
	f.finishWorkflow()
	code := exitCode(ctx, err)
	if err != nil {
		output.ReportError(f.printer(), f.IO.ErrOut, f.redactor(), code, err, authReason(err), helpCommand(root, args))
	}
	f.flushRedacted()
	if f.wf != nil {
		f.wf.flush()
	}
	return code
}

// execute runs args through the command tree root, with every error cobra returns before a
// command runs typed as a usage error.
func execute(ctx context.Context, f *Factory, root *cobra.Command, args []string) error {
	reached := typeArgErrors(root)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	// The CI and redacting writers wrap the streams once, here; cobra's own output (help)
	// stays outside them.
	f.wrapStreams()
	err := root.ExecuteContext(ctx)
	if err != nil && !reached() {
		// cobra failed before any command's arguments were checked: it could not find the
		// command ("unknown command") or parse its flags (already a FlagError). Nothing ran,
		// nothing was sent: a usage error.
		var fe *FlagError
		if !errors.As(err, &fe) {
			err = &FlagError{Err: err}
			if c, rest, ferr := root.Find(args); ferr != nil && c != nil && len(rest) > 0 {
				err = unknownCommand(c, rest[0]) // cobra's "unknown command", with what was meant
			}
		}
	}
	return err
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcptask <command> [flags]",
		Short: "Run, watch and debug MCP tasks from the terminal",
		Long: `mcptask is a command-line client for the Tasks feature of the Model Context Protocol.

It calls task-capable tools, polls the tasks a server hands back, fetches their
results and cancels them, against servers speaking MCP 2025-11-25 (core tasks) or
MCP 2026-07-28 with the io.modelcontextprotocol/tasks extension, over Streamable
HTTP or stdio. The protocol era is detected automatically.

Results go to stdout; progress, hints and errors go to stderr.`,
		Example: `  # Try it against the built-in demo server
  mcptask demo

  # Call a tool and wait for its task to finish
  mcptask call sleep --arg seconds=5 --server http://127.0.0.1:8080/mcp

  # Start a task in one CI step, wait for it in another
  id=$(mcptask call build --args @args.json --detach)
  mcptask result "$id"`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Read().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	f.Global.AddFlags(root.PersistentFlags(), f.Getenv)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return preRun(f, c) }
	root.SetFlagErrorFunc(flagError)

	root.AddCommand(
		NewCmdCall(f, nil),
		NewCmdGet(f, nil),
		NewCmdResult(f, nil),
		NewCmdCancel(f, nil),
		NewCmdTools(f, nil),
		NewCmdList(f, nil),
		NewCmdResume(f, nil),
		NewCmdWatch(f, nil),
		NewCmdUpdate(f, nil),
		NewCmdForget(f),
		NewCmdPrune(f),
		NewCmdAdopt(f),
		NewCmdServers(f),
		NewCmdCheck(f),
		NewCmdProxy(f, nil),
		NewCmdDemo(f),
		NewCmdAuth(f),
		NewCmdVersion(f),
	)
	root.AddCommand(newCmdExitCodes(f)) // `mcptask help exit-codes` (and `mcptask exit-codes`)
	layout := helpLayout
	layout.Width = f.IO.Width // the terminal's, or a fixed width for a pipe and the reference
	layout.Install(root)
	return root
}

// preRun settles what every command shares before it runs: which flags were given, the
// MCPTASK_* environment and the config file under them (precedence: flag > environment >
// config file), the run's CI log and hooks, and the redacting streams.
func preRun(f *Factory, c *cobra.Command) error {
	fs := c.Flags()
	f.Global.ServerSet = fs.Changed("server") || fs.Changed("stdio")
	// Precedence: flag > MCPTASK_* environment > config file.
	if err := globalflags.ApplyEnv(fs, f.Getenv); err != nil {
		return err
	}
	if err := f.setupWorkflow(c); err != nil {
		return err
	}
	return f.applyNamedServer()
}

// FlagError is a usage error: a bad flag, argument or input. It exits 2 (internal/exitcode).
type FlagError = exitcode.UsageError

// flagErrorf returns a usage error.
func flagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError carries a chosen exit code; with Silent set, the output has already explained
// the failure and Main prints nothing more (internal/exitcode).
type ExitError = exitcode.Error

var (
	// exitCode maps an error to the exit-code table; connErr gives the errors of
	// internal/connect and internal/config their exit codes (internal/output).
	exitCode   = output.ExitCode
	connErr    = output.Typed
	errTimeout = connect.ErrTimeout
)

// typeArgErrors makes cobra's argument errors ("accepts 1 arg(s)", "unknown command" for a
// command that takes none) FlagErrors, by wrapping every command's Args, so that no error's
// text decides an exit code: a server's message that happens to say "invalid argument" is the
// server's failure (exit 1), never a usage error. Flag errors already arrive typed through
// SetFlagErrorFunc. The root keeps cobra's own check, which finds unknown commands before
// any Args runs; reached reports whether one did, so that Run can type what comes before.
func typeArgErrors(root *cobra.Command) (reached func() bool) {
	ran := false
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			check := sub.Args
			if check == nil {
				check = cobra.ArbitraryArgs // what cobra does for a command below the root
			}
			sub.Args = func(c *cobra.Command, args []string) error {
				ran = true
				if err := check(c, args); err != nil {
					return argsError(c, args, err)
				}
				return nil
			}
			walk(sub)
		}
	}
	walk(root)
	return func() bool { return ran }
}

// errorText is err as a person reads it on stderr: safe for a terminal, bounded, redacted.
func (f *Factory) errorText(err error) string { return output.ErrorText(f.redactor(), err) }
