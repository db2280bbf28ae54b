// Package cmd holds mcptask's commands: one file per verb, each with an options struct, a
// NewCmdX constructor and a runX function. Main builds the root command, runs it, and maps
// whatever error comes back to one of the exit codes in exitcodes.go.
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/spf13/cobra"
)

// Factory carries what commands need from the outside world, so that tests can replace it.
type Factory struct {
	IO     *IOStreams
	Global *GlobalOptions
	Now    func() time.Time
	Getenv func(string) string

	// Workflow holds the flags of the commands that follow tasks (--on-complete, --notify);
	// wf is this run's CI log, summary, hooks and notifications (setupWorkflow).
	Workflow WorkflowOptions
	wf       *workflow

	recOnce sync.Once
	rec     *recording
	recErr  error

	poolMu sync.Mutex
	pools  map[string]*http.Client

	keysOnce sync.Once
	keys     *state.Keyring
	keysErr  error

	authMu       sync.Mutex
	authSessions map[string]*auth.Session
	authEnv      *auth.Env
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
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	f.closeRecorder()
	f.finishWorkflow()
	code := exitCode(ctx, err)
	if err != nil {
		reportError(f, code, err)
	}
	if f.wf != nil {
		f.wf.flush()
	}
	return code
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
		Version:       readBuildInfo().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	f.Global.AddFlags(root.PersistentFlags(), f.Getenv)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		fs := c.Flags()
		f.Global.ServerSet = fs.Changed("server") || fs.Changed("stdio")
		// Precedence: flag > MCPTASK_* environment > config file.
		if err := f.applyEnv(fs); err != nil {
			return err
		}
		if err := f.setupWorkflow(c); err != nil {
			return err
		}
		return f.applyNamedServer()
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &FlagError{Err: err}
	})

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
		NewCmdDocs(f, func() *cobra.Command { return NewCmdRoot(f) }),
		NewCmdDemo(f),
		NewCmdAuth(f),
		NewCmdVersion(f),
	)
	// `mcptask help exit-codes` (and `mcptask exit-codes`) prints the table.
	root.AddCommand(&cobra.Command{
		Use:   "exit-codes",
		Short: "Show the exit codes mcptask returns",
		Long:  exitCodesHelp(),
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.Global.JSON {
				codes := make([]map[string]any, 0, len(exitCodeTable))
				for _, e := range exitCodeTable {
					codes = append(codes, map[string]any{"code": e.Code, "name": e.Name, "meaning": e.Desc})
				}
				return writeJSON(c.OutOrStdout(), map[string]any{"type": "exit-codes", "codes": codes})
			}
			fmt.Fprint(c.OutOrStdout(), exitCodesHelp())
			return nil
		},
	})
	return root
}

// FlagError is a usage error: a bad flag, argument or input. It exits 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// flagErrorf returns a usage error.
func flagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError carries a chosen exit code. With Silent set, the output has already explained
// the failure and Main prints nothing more.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return exitName(e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// exitCode maps an error to the exit-code table.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		return ExitUsage
	}
	if errors.Is(err, errTimeout) {
		return ExitTimeout
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if errors.Is(err, rpc.ErrAuth) {
		return ExitAuth
	}
	// cobra's own argument errors ("accepts 1 arg(s)", "unknown command") are usage errors.
	if isCobraUsage(err) {
		return ExitUsage
	}
	return ExitFailure
}

var errTimeout = errors.New("timeout reached")

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// reportError prints err once: a line on stderr, and with --json also a JSON object there.
func reportError(f *Factory, code int, err error) {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Silent {
		return
	}
	if f.Global.JSON {
		obj := map[string]any{"type": "error", "code": code, "error": exitName(code), "message": err.Error()}
		defer func() {
			if f.Global.JSONL {
				_ = writeJSON(f.IO.Out, obj) // the error event of the stream
			}
		}()
		if r := authReason(err); r != "" {
			obj["reason"] = r
		}
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			obj["rpcCode"] = rerr.Code
			if len(rerr.Data) > 0 {
				obj["rpcData"] = rerr.Data
			}
		}
		b, _ := json.Marshal(obj)
		fmt.Fprintln(f.IO.ErrOut, string(b))
		return
	}
	fmt.Fprintf(f.IO.ErrOut, "mcptask: %s\n", err)
	var fe *FlagError
	if errors.As(err, &fe) {
		fmt.Fprintln(f.IO.ErrOut, "Run 'mcptask --help' for usage.")
	}
}
