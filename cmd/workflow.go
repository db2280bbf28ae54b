package cmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/ci"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/proc"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// What fits mcptask into the places its users already are, as sinks of the follow engine's
// events: the CI system's job log and summary (--ci), a command run when a task ends
// (--on-complete), and a desktop notification (--notify). None of it changes how tasks are
// followed or the exit code.

// WorkflowOptions are the per-command flags of the commands that follow tasks (call, watch,
// resume, result, cancel --wait). --ci is global (GlobalOptions.CI).
type WorkflowOptions struct {
	OnComplete  string
	HookTimeout time.Duration
	Notify      bool
	NotifyAfter time.Duration
}

// AddFlags registers --on-complete, --on-complete-timeout, --notify and --notify-after.
func (o *WorkflowOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.OnComplete, "on-complete", "", "when a task ends, run `'command args'` (no shell unless you write one) with the task's --json envelope on stdin and MCPTASK_TASK_ID, MCPTASK_STATUS, MCPTASK_EXIT_CODE, MCPTASK_TOOL, MCPTASK_SERVER set; its output goes to stderr")
	fs.DurationVar(&o.HookTimeout, "on-complete-timeout", time.Minute, "how long an --on-complete command may run before it is killed")
	fs.BoolVar(&o.Notify, "notify", false, "on a terminal, notify the desktop (OSC 9 or OSC 777, else the bell) when a task ends after --notify-after, or while the live view is not in front")
	fs.DurationVar(&o.NotifyAfter, "notify-after", 10*time.Second, "with --notify: how long a wait must have taken for its end to be notified")
}

// outcomeName is the name a task's end has in summaries, annotations and MCPTASK_STATUS.
func outcomeName(o follow.Outcome, code int) string {
	switch o.End {
	case follow.EndResult:
		if code == ExitTaskFailed {
			return "failed"
		}
		if o.Task != nil && o.Result == nil && o.RPCError == nil {
			return string(o.Task.Status) // cancel --wait: the result stays for 'mcptask result'
		}
		return "completed"
	case follow.EndCancelled:
		return "cancelled"
	case follow.EndExpired:
		return "expired"
	case follow.EndInputRequired:
		return "input_required"
	case follow.EndTimeout, follow.EndStillRunning:
		return "timeout"
	case follow.EndInterrupted, follow.EndDetached:
		return "interrupted"
	}
	return "error"
}

// workflow is the sink of one command run. It is set up before the command runs (setup) and
// finished after it (finish), whatever the command returned.
type workflow struct {
	f       *Factory
	command string
	start   time.Time
	sys     ci.System
	log     *ci.Log
	// outs are the neutralising writers around stdout and stderr in a CI job.
	outs []*ci.Writer
	// term is where a notification goes: a terminal, never a pipe (nil: none).
	term io.Writer

	mu      sync.Mutex
	refs    map[string]ServerRef // how each server's tasks are reached again, by server name
	timeout time.Duration        // the command's --timeout, for the messages
	engaged bool                 // an engine reported to this workflow
	rows    []ci.Row
	seen    map[string]time.Time // when each task was first seen
	tools   map[string]string    // each task's tool
	group   string               // the task whose log group is open
	blurred bool                 // the live view's terminal reports it lost focus
	hooks   sync.WaitGroup
	// hookSlots bounds the --on-complete commands running at once: a thousand tasks that end
	// together must not start a thousand processes.
	hookSlots chan struct{}
}

// maxHooks is how many --on-complete commands run at once.
const maxHooks = 4

// setupWorkflow detects the CI system and, in a CI job, puts mcptask's output through the
// neutralising writers. It runs before every command, once the flags and $MCPTASK_* are read.
func (f *Factory) setupWorkflow(c *cobra.Command) error {
	sys, err := ci.Detect(f.Global.CI, f.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	w := &workflow{f: f, command: c.Name(), start: f.Now(), sys: sys, seen: map[string]time.Time{}, tools: map[string]string{}, refs: map[string]ServerRef{}, hookSlots: make(chan struct{}, maxHooks)}
	w.log = &ci.Log{Sys: sys, W: f.IO.ErrOut, Now: f.Now}
	if sys != ci.None {
		// A person's terminal is not a job log: the live view's output is left alone.
		// stdout carries results byte for byte (Exact); stderr is defused line by line.
		if !f.IO.IsStdoutTTY() {
			out := &ci.Writer{W: f.IO.Out, Sys: sys, JSON: f.Global.JSON || f.Global.JSONL, Exact: true}
			f.IO.Out = out
			w.outs = append(w.outs, out)
		}
		errOut := &ci.Writer{W: f.IO.ErrOut, Sys: sys}
		f.IO.ErrOut = errOut
		w.outs = append(w.outs, errOut)
		// mcptask's own commands go around the neutralising, never into a line it holds.
		w.log.W = errOut.Trusted()
	}
	switch {
	case f.IO.IsStderrTTY():
		w.term = w.log.W
	case f.IO.IsStdoutTTY():
		w.term = f.IO.Out
	}
	f.wf = w
	return nil
}

// finishWorkflow waits for the --on-complete commands still running, appends the job summary
// and passes on what the neutralising writers hold. Run calls it after the command, before
// the error is reported.
func (f *Factory) finishWorkflow() {
	w := f.wf
	if w == nil {
		return
	}
	w.hooks.Wait()
	w.mu.Lock()
	rows, engaged := w.rows, w.engaged
	w.mu.Unlock()
	w.log.EndGroup()
	if path := f.Getenv("GITHUB_STEP_SUMMARY"); w.sys == ci.GitHub && engaged && path != "" && len(rows) > 0 {
		if err := ci.AppendSummary(path, w.command, rows); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: %s\n", f.errorText(err))
		}
	}
	w.flush()
}

// flush passes on what the neutralising writers hold (the last line of a result without a
// line end).
func (w *workflow) flush() {
	for _, o := range w.outs {
		_ = o.Flush()
	}
}

// server records how the tasks of server name are reached again, for the hints.
func (w *workflow) server(name string, ref ServerRef) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refs[name] = ref
}

// ref is how the tasks of server name are reached again.
func (w *workflow) ref(name string) ServerRef {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refs[name]
}

// setTimeout records the command's --timeout.
func (w *workflow) setTimeout(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timeout = d
}

// track notes when each task was first seen and its tool, for the log groups and the times
// taken. The progress printer calls it too, before it prints the first line of a task.
func (w *workflow) track(ev follow.Event) {
	if w == nil || ev.TaskID == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.engaged = true
	if _, ok := w.seen[ev.TaskID]; !ok {
		w.seen[ev.TaskID] = ev.Time
	}
	if ev.Tool != "" {
		w.tools[ev.TaskID] = ev.Tool
	}
}

// groupFor opens the log group of task id before a progress line about it, closing the
// group of another task: groups do not nest, so the lines of tasks followed together come in
// groups as they interleave.
func (w *workflow) groupFor(id string) {
	if w == nil || w.sys == ci.None || id == "" || id == "-" {
		return
	}
	w.mu.Lock()
	same := w.group == id
	w.group = id
	tool := w.tools[id]
	w.mu.Unlock()
	if same {
		return
	}
	title := "task " + id
	if tool != "" {
		title += " (" + tool + ")"
	}
	w.log.Group(title)
}

// Event implements follow.Sink: the end of each task becomes an annotation, a summary row,
// the --on-complete command and a notification.
func (w *workflow) Event(ev follow.Event) {
	w.track(ev)
	if ev.Kind != follow.KindResult || ev.Outcome == nil {
		return
	}
	o := *ev.Outcome
	f := w.f
	ref := w.ref(o.Server)
	w.mu.Lock()
	timeout := w.timeout
	w.mu.Unlock()
	described, _, err := describe(o, ref, timeout)
	env := taskEnvelope(o, described, err)
	code := *env.Code
	name := outcomeName(o, code)
	took := w.took(o, ev.Time)

	// The summary shows the last status message (the outcome and the next step have their
	// own columns); the annotation says what went wrong.
	status, problem := "", ""
	if o.Task != nil {
		status = o.Task.StatusMessage
	}
	if err != nil {
		problem = err.Error()
	}
	// Both are server text and error text, which may quote a secret of this run.
	red := f.redactor()
	status, problem = red.Text(status), red.Text(problem)
	row := ci.Row{TaskID: o.TaskID, Tool: o.Tool, Server: red.URL(o.Server), Outcome: name, Took: took, Message: cmp.Or(status, problem)}
	if name == "timeout" || name == "interrupted" || name == "input_required" {
		row.Resume = followHint(ref, o.TaskID)
	}
	w.mu.Lock()
	w.rows = append(w.rows, row)
	closeGroup := w.group == o.TaskID
	if closeGroup {
		w.group = ""
	}
	w.mu.Unlock()
	if closeGroup {
		w.log.EndGroup()
	}
	w.annotate(name, o, took, cmp.Or(problem, status), row.Resume)
	if f.Workflow.OnComplete != "" {
		w.hooks.Add(1)
		go func() {
			defer w.hooks.Done()
			w.hookSlots <- struct{}{}
			defer func() { <-w.hookSlots }()
			w.runHook(env, o, code, name)
		}()
	}
	w.notify(o, name, took)
}

// took is how long the task was followed, or lived when its creation time is known.
func (w *workflow) took(o follow.Outcome, end time.Time) time.Duration {
	if o.Task != nil && !o.Task.CreatedAt.IsZero() && o.Task.CreatedAt.Before(end) {
		return end.Sub(o.Task.CreatedAt)
	}
	w.mu.Lock()
	first, ok := w.seen[o.TaskID]
	w.mu.Unlock()
	if !ok {
		first = w.start
	}
	return end.Sub(first)
}

// annotate writes the GitHub annotation of a task's end: an error for a task that failed,
// was cancelled or expired, a warning for one left running, a notice for one completed.
func (w *workflow) annotate(name string, o follow.Outcome, took time.Duration, msg, resume string) {
	level := ci.Error
	switch name {
	case "completed", "working":
		level = ci.Notice
	case "timeout", "interrupted", "input_required":
		level = ci.Warning
	}
	tool := o.Tool
	if tool == "" {
		tool = "task"
	}
	title := fmt.Sprintf("mcptask: %s %s", tool, strings.ReplaceAll(name, "_", " "))
	text := fmt.Sprintf("task %s on %s, after %s", o.TaskID, o.Server, human.Duration(took))
	if msg != "" {
		text += ": " + msg
	}
	if resume != "" && !strings.Contains(msg, resume) {
		text += "; it keeps running: " + resume
	}
	w.log.Annotation(level, title, text)
}

// runHook runs the --on-complete command for one task: no shell, the envelope on stdin, the
// task in its environment, its output on stderr, bounded by --on-complete-timeout. Its failure
// is reported and changes nothing else.
func (w *workflow) runHook(env envelope, o follow.Outcome, code int, name string) {
	f := w.f
	argv, err := connect.SplitCommand(f.Workflow.OnComplete)
	report := func(format string, args ...any) {
		fmt.Fprintf(f.IO.ErrOut, "mcptask: --on-complete for task %s: %s\n", termsafe.Line(o.TaskID), fmt.Sprintf(format, args...))
	}
	if err != nil || len(argv) == 0 {
		report("cannot run %q: %v", f.Workflow.OnComplete, cmp.Or(err, errors.New("no command")))
		return
	}
	var stdin bytes.Buffer
	_ = writeJSON(&stdin, env)
	ctx, cancel := context.WithTimeout(context.Background(), f.Workflow.HookTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = &stdin
	// The child's stdout and stderr are copied by two goroutines onto one stream.
	out := &lockedWriter{w: f.IO.ErrOut}
	cmd.Stdout, cmd.Stderr = out, out
	// The environment is read by scripts that print it or pass it on: the tool and server are
	// cleaned and cut, and an id that is not plain visible ASCII (rpc.CheckTaskID) is left out
	// rather than passed on raw; the envelope on stdin keeps the exact values as JSON.
	cmd.Env = append(os.Environ(),
		"MCPTASK_STATUS="+name,
		"MCPTASK_EXIT_CODE="+strconv.Itoa(code),
		"MCPTASK_TOOL="+termsafe.Line(termsafe.Cut(o.Tool)),
		"MCPTASK_SERVER="+termsafe.Line(termsafe.Cut(o.Server)),
	)
	if err := rpc.CheckTaskID(o.TaskID); err != nil {
		report("MCPTASK_TASK_ID is not set: %s", f.errorText(err))
	} else {
		cmd.Env = append(cmd.Env, "MCPTASK_TASK_ID="+o.TaskID)
	}
	// The whole process group goes when the time is up: a hook that started children must
	// not outlive it.
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		report("%s did not end within %s and was killed (--on-complete-timeout)", argv[0], f.Workflow.HookTimeout)
	case err != nil:
		report("%s: %v", argv[0], err)
	}
}

// setBlurred records whether the live view's terminal has lost focus (its focus reports).
func (w *workflow) setBlurred(b bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.blurred = b
	w.mu.Unlock()
}

// notify tells the desktop that a task ended, through the terminal: only on a terminal, and
// only when the wait took at least --notify-after or the live view is not in front.
func (w *workflow) notify(o follow.Outcome, name string, took time.Duration) {
	f := w.f
	if !f.Workflow.Notify || w.term == nil {
		return
	}
	w.mu.Lock()
	blurred := w.blurred
	w.mu.Unlock()
	if f.Now().Sub(w.start) < f.Workflow.NotifyAfter && !blurred {
		return
	}
	tool := o.Tool
	if tool == "" {
		tool = "task"
	}
	title := "mcptask: " + tool + " " + strings.ReplaceAll(name, "_", " ")
	body := fmt.Sprintf("task %s after %s", o.TaskID, human.Duration(took))
	w.mu.Lock() // one notification at a time on the terminal
	defer w.mu.Unlock()
	_, _ = io.WriteString(w.term, notification(f.Getenv, title, body))
}

// notification is the escape sequence that makes the terminal show a desktop notification:
// OSC 777 for the terminals that read it (VTE-based ones such as GNOME Terminal, foot,
// rxvt-unicode), OSC 9 for those that read that one (iTerm2, WezTerm, Ghostty, kitty, Windows
// Terminal, ConEmu), and the bell for the rest, which most terminals turn into an alert. Inside
// tmux it is passed through to the outer terminal (tmux's allow-passthrough), the bell as is.
// Both texts come in part from the server: they are stripped of escapes and of the
// separators of the sequence.
func notification(getenv func(string) string, title, body string) string {
	clean := func(s string) string {
		return strings.NewReplacer(";", ",", "\a", "", "\x1b", "").Replace(termsafe.Line(s))
	}
	title, body = clean(title), clean(body)
	term, program := getenv("TERM"), getenv("TERM_PROGRAM")
	var seq string
	switch {
	case getenv("VTE_VERSION") != "" || strings.HasPrefix(term, "foot") || strings.HasPrefix(term, "rxvt"):
		seq = "\x1b]777;notify;" + title + ";" + body + "\x1b\\"
	case program == "iTerm.app" || program == "WezTerm" || program == "ghostty" || term == "xterm-kitty" ||
		term == "xterm-ghostty" || getenv("WT_SESSION") != "" || getenv("ConEmuANSI") == "ON":
		seq = "\x1b]9;" + title + ": " + body + "\x1b\\"
	default:
		return "\a"
	}
	if getenv("TMUX") != "" {
		return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
	}
	return seq
}
