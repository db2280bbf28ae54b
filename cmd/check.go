package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/mcptask/mcptask/internal/toolargs"
	"github.com/spf13/cobra"
)

// CheckOptions are the inputs of `mcptask check`.
type CheckOptions struct {
	f      *Factory
	Tools  []checkTool
	NoCall bool
	Budget time.Duration
	JUnit  string
	// Strict makes warnings and rules not judged fail the run (exit 3), for CI gates.
	Strict bool
	// All lists every rule and tool in the terminal report, not only the findings.
	All bool
}

// checkTool is one --tool NAME with the --args JSON that followed it, if any.
type checkTool struct {
	Name, Args string
	HasArgs    bool
}

// toolFlag and argsFlag share one list so that each --args belongs to the --tool before it:
// pflag sets values in command-line order.
type toolFlag struct{ list *[]checkTool }

func (f toolFlag) String() string { return "" }
func (f toolFlag) Type() string   { return "NAME" }
func (f toolFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("a tool name is needed")
	}
	*f.list = append(*f.list, checkTool{Name: v})
	return nil
}

type argsFlag struct{ list *[]checkTool }

func (f argsFlag) String() string { return "" }
func (f argsFlag) Type() string   { return "JSON" }
func (f argsFlag) Set(v string) error {
	l := *f.list
	if len(l) == 0 {
		return fmt.Errorf("--args must follow the --tool it belongs to")
	}
	if l[len(l)-1].HasArgs {
		return fmt.Errorf("--tool %s already has --args", l[len(l)-1].Name)
	}
	l[len(l)-1].Args, l[len(l)-1].HasArgs = v, true
	return nil
}

// NewCmdCheck returns `mcptask check`.
func NewCmdCheck(f *Factory) *cobra.Command {
	opts := &CheckOptions{f: f}
	c := &cobra.Command{
		Use:   "check [--tool NAME [--args JSON]]... [--no-call] [--budget DURATION]",
		Short: "Check a server's Tasks implementation against the spec, rule by rule",
		Long: `Exercise the server's Tasks implementation and report, rule by rule with the spec
section it comes from, what the server gets right and wrong, in every era it speaks
(2026-07-28 with the io.modelcontextprotocol/tasks extension, and 2025-11-25).

No flag is needed: check lists the server's tools and calls each one it can call
safely, with arguments built from its inputSchema (defaults, enums, the smallest
values the schema allows). A tool whose annotations say destructiveHint is only
called when named with --tool. What comes back says which tool completes a task,
which reports a tool error, which fails with a protocol error, which asks for input
(answered from its requestedSchema with a minimal valid answer, shown in the report)
and which runs long enough to be cancelled; each rule is judged on every tool that
shows the behaviour it needs. A rule that no tool can show is reported as not judged
(skip in --json and --junit) with the reason, never as passed.

Every response is also validated against the official JSON Schema of its era.

--tool NAME [--args JSON] (repeatable) adds a tool or forces one, with arguments of
your choice. --no-call checks only what needs no tool call. --budget bounds the whole
run; the report says what it cut. --strict makes warnings and rules not judged fail
the run, for CI gates.

On a terminal the report comes failures first, then warnings, each with its rule,
spec section, what was seen and what the spec says, then one line counting the
rules that passed or were not judged (--all lists them, and what was done with each
tool); a spinner says what check is doing meanwhile. Piped, it is the plain table.

The rules, with their sections and what each needs from the server's tools, are
listed in docs/guide/check.md ("Checking a server").

EXIT STATUS
  0 nothing failed (warnings allowed); 3 at least one check failed (with --strict, also
  a warning or a rule not judged); 1 the server could not be reached; 2 a usage error.`,
		Example: `  mcptask check --server http://127.0.0.1:8080/mcp
  mcptask check --stdio 'node dist/index.js stdio'
  mcptask check --server "$URL" --tool deploy --args '{"env":"staging"}'
  mcptask check --server "$URL" --json --junit check.xml --budget 2m
  mcptask check --server "$URL" --strict --junit check.xml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runCheck(c.Context(), opts) },
	}
	c.Flags().Var(toolFlag{&opts.Tools}, "tool", "also call tool `NAME` (repeatable), even if it is annotated destructiveHint")
	c.Flags().Var(argsFlag{&opts.Tools}, "args", "arguments of the --tool before it, as a JSON object or @file.json (default: built from its inputSchema)")
	c.Flags().BoolVar(&opts.NoCall, "no-call", false, "call no tool: check only discovery, headers, errors and the other rules that need no tool call")
	c.Flags().DurationVar(&opts.Budget, "budget", check.DefaultBudget, "time budget of the whole run")
	c.Flags().StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE` (for CI)")
	c.Flags().BoolVar(&opts.Strict, "strict", false, "fail (exit 3) on warnings and on rules not judged too, for CI gates")
	c.Flags().BoolVar(&opts.All, "all", false, "on a terminal, list every rule (passed and not judged too) and every tool")
	c.Flags().BoolVar(&opts.All, "verbose", false, "the same as --all")
	return c
}

// writeJUnit writes the --junit report, if one is asked for.
func (opts *CheckOptions) writeJUnit(server string, rep *check.Report) error {
	if opts.JUnit == "" {
		return nil
	}
	b, err := output.JUnit(server, rep)
	if err != nil {
		return err
	}
	return os.WriteFile(opts.JUnit, b, 0o644)
}

// toolSpecs are the tools --tool names, with their --args read.
func (opts *CheckOptions) toolSpecs() ([]check.ToolSpec, error) {
	var tools []check.ToolSpec
	for _, t := range opts.Tools {
		spec := check.ToolSpec{Name: t.Name}
		if t.HasArgs {
			args, err := toolargs.ParseJSON(t.Args, opts.f.IO.In)
			if err != nil {
				return nil, argsErr(err)
			}
			spec.Args = args
		}
		tools = append(tools, spec)
	}
	return tools, nil
}

func runCheck(ctx context.Context, opts *CheckOptions) error {
	f := opts.f
	if opts.Budget <= 0 {
		return flagErrorf("--budget %s: want a positive duration such as 60s or 2m", opts.Budget)
	}
	tools, err := opts.toolSpecs()
	if err != nil {
		return err
	}
	ref, hdr, err := f.serverRef()
	if err != nil {
		return err
	}
	var eras []string
	if p := f.Global.Protocol; p != "auto" && p != "" {
		eras = []string{p}
	}
	view := opts.view()
	spin := startCheckSpinner(f)
	rep := check.Run(ctx, check.Options{
		Progress: spin.set,
		HTTP:     ref.URL != "",
		Eras:     eras,
		Tools:    tools,
		NoCall:   opts.NoCall,
		Budget:   opts.Budget,
		// A36: an explicit Authorization header (--bearer-env, --header) is an authorization
		// context the server may bind tasks to.
		Authorized: hdr.Get("Authorization") != "",
		Connect: func(ctx context.Context, era string, co rpc.ClientOptions) (*rpc.Client, error) {
			co.Protocol = era
			c, _, err := f.connectRef(ctx, ref, hdr, co)
			return c, err
		},
	})
	spin.stop()
	if !rep.Reached {
		seen := ""
		if len(rep.Results) > 0 {
			seen = rep.Results[0].Seen
		}
		return fmt.Errorf("check %s: the server could not be reached in either era (%s)", ref, seen)
	}
	for _, t := range rep.Tools {
		if t.Reason == check.NotListed {
			f.warnf("--tool %s: the server does not list a tool of that name in %s", t.Name, t.Era)
		}
	}
	if err := opts.writeJUnit(ref.String(), rep); err != nil {
		return err
	}
	p := f.printer()
	if err := p.CheckReport(f.IO.ErrOut, ref.String(), rep, view); err != nil {
		return err
	}
	counts := rep.Counts()
	switch {
	case rep.Failed():
		return &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("%d check(s) failed", counts[check.Fail]), Silent: !p.JSON()}
	case opts.Strict && counts[check.Warn]+counts[check.Skip] > 0:
		return &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("--strict: %d warning(s) and %d rule(s) not judged", counts[check.Warn], counts[check.Skip]), Silent: !p.JSON()}
	}
	return nil
}

// view is how the report is shown: on a terminal (stdout one, no --json), wrapped to its width
// and in colour unless NO_COLOR or TERM=dumb; else the plain form.
func (opts *CheckOptions) view() output.CheckView {
	f := opts.f
	v := output.CheckView{All: opts.All, Strict: opts.Strict}
	if f.printer().JSON() || !f.IO.IsStdoutTTY() {
		return v
	}
	v.Width = cmp.Or(f.stdoutWidth(), 80)
	if f.Getenv("NO_COLOR") == "" && f.Getenv("TERM") != "dumb" {
		v.Paint = checkPaint
	}
	return v
}

// checkPaint colours a verdict in the status colours of the rest of mcptask
// (taskstatus.LookOf): a pass as completed, a warning as input_required, a failure as failed,
// a rule not judged as expired.
func checkPaint(st check.Status, s string) string {
	status := map[check.Status]string{check.Pass: taskstatus.Completed, check.Warn: taskstatus.InputRequired, check.Fail: taskstatus.Failed, check.Skip: taskstatus.Expired}[st]
	style := lipgloss.NewStyle().Foreground(lipgloss.Color(strconv.Itoa(int(taskstatus.LookOf(status).Color))))
	if st == check.Fail {
		style = style.Bold(true)
	}
	return style.Render(s)
}

// checkSpinner is the one line that says, on a terminal, what check is doing while it runs:
// the era, the phase, and the tool being called. It draws on stderr and is gone before the
// report is printed.
type checkSpinner struct {
	out  io.Writer
	mu   sync.Mutex
	now  check.Progress
	done chan struct{}
	wg   sync.WaitGroup
}

// startCheckSpinner starts the spinner when a person watches stderr (the report may go to a
// pipe or a file meanwhile) and nothing else writes there as it runs (--trace); else it
// returns one that draws nothing.
func startCheckSpinner(f *Factory) *checkSpinner {
	s := &checkSpinner{out: f.IO.ErrOut}
	if !f.IO.IsStderrTTY() || f.Getenv("CI") != "" || f.Getenv("TERM") == "dumb" || f.Global.Trace {
		return s
	}
	width := cmp.Or(f.stdoutWidth(), 80)
	s.done = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			s.mu.Lock()
			line := checkSpinnerLine(frames[i%len(frames)], s.now, width)
			s.mu.Unlock()
			fmt.Fprint(s.out, "\r"+line+"\x1b[K")
			select {
			case <-s.done:
				fmt.Fprint(s.out, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// checkSpinnerLine is the spinner's line: what check is doing, cut to the width.
func checkSpinnerLine(frame string, p check.Progress, width int) string {
	line := frame + " checking"
	if p.Era != "" {
		line += " " + p.Era + " · " + p.Phase
	}
	if p.Tool != "" {
		line += " · " + termsafe.Line(termsafe.CutN(p.Tool, 64))
	}
	if r := []rune(line); len(r) > width-1 {
		line = string(r[:max(width-2, 1)]) + "…"
	}
	return line
}

// set is check.Options.Progress.
func (s *checkSpinner) set(p check.Progress) {
	s.mu.Lock()
	s.now = p
	s.mu.Unlock()
}

// stop clears the spinner's line.
func (s *checkSpinner) stop() {
	if s.done != nil {
		close(s.done)
		s.wg.Wait()
		s.done = nil
	}
}
