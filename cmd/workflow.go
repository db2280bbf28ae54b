package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/mcptask/mcptask/internal/ci"
	"github.com/mcptask/mcptask/internal/completion"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// What fits mcptask into the places its users already are, as sinks of the follow engine's
// events: the CI system's job log and summary (--ci, internal/ci), a command run when a task
// ends (--on-complete) and a desktop notification (--notify), both internal/completion. None of
// it changes how tasks are followed or the exit code. Here are their flags and their wiring:
// what a task's end means is internal/output's (output.Ends), what is done with it is theirs.

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
	fs.StringVar(&o.OnComplete, "on-complete", "", "run `CMD` when a task ends, its --json envelope on stdin (no shell)")
	fs.DurationVar(&o.HookTimeout, "on-complete-timeout", time.Minute, "kill an --on-complete command after `D`")
	fs.BoolVar(&o.Notify, "notify", false, "on a terminal, notify the desktop when a long wait ends")
	fs.DurationVar(&o.NotifyAfter, "notify-after", 10*time.Second, "with --notify: notify waits longer than `D`")
}

// workflow is the sink of one command run: the CI job's log and summary, then the hooks and
// notifications. Its streams are made when the run starts (wrapStreams), the rest once the
// flags are read (setupWorkflow); it is finished after the command (finishWorkflow), whatever
// the command returned.
type workflow struct {
	f       *Factory
	command string
	start   time.Time
	streams *ci.Streams
	job     *ci.Job
	done    completion.Sink
	ends    *output.Ends // how each task's end reads, for the job log, hooks and notifications
}

// wrapStreams puts the run's stdout and stderr through the CI writers, once, as the run
// starts: they pass everything on as is until setupWorkflow has read the flags and says which
// CI system this is (ci.Streams).
func (f *Factory) wrapStreams() {
	s := ci.Wrap(f.IO.Out, f.IO.ErrOut, f.IO.IsStdoutTTY())
	f.IO.Out, f.IO.ErrOut = s.Out, s.Err
	f.wf = &workflow{f: f, streams: s, ends: &output.Ends{Redactor: f.redactor()}}
	f.redactStreams() // over the CI writers: a secret is hidden before a line is judged
}

// setupWorkflow detects the CI system, has the streams write for its job log, and makes this
// run's job log, hooks and notifier. It runs before every command, once the flags and
// $MCPTASK_* are read and the streams redacted.
func (f *Factory) setupWorkflow(c *cobra.Command) error {
	sys, err := ci.Detect(f.Global.CI, f.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	if f.wf == nil { // a root executed without Run
		f.wrapStreams()
	}
	w := f.wf
	w.command, w.start = c.Name(), f.Now()
	w.streams.Start(sys, f.Global.JSON || f.Global.JSONL)
	// mcptask's own workflow commands go around the neutralising, never into a line it holds.
	log := &ci.Log{Sys: sys, W: w.streams.Log(), Now: f.Now}
	w.job = &ci.Job{Log: log, Start: w.start, Verdict: w.ends.Verdict}
	w.done = completion.Sink{Hooks: w.hooks(), Notifier: w.notifier(log.W), End: w.ended}
	return nil
}

// hooks are this run's --on-complete commands, nil without the flag. Their output goes to
// stderr, redacted as mcptask's own.
func (w *workflow) hooks() *completion.Hooks {
	f := w.f
	if f.Workflow.OnComplete == "" {
		return nil
	}
	argv, err := connect.SplitCommand(f.Workflow.OnComplete)
	h := completion.NewHooks(f.Workflow.OnComplete, argv, err)
	h.Timeout, h.Stderr, h.ErrorText = f.Workflow.HookTimeout, f.IO.ErrOut, f.errorText
	return h
}

// notifier is this run's --notify, nil without the flag or a terminal to notify on: stderr
// when it is one (term: around the CI writer's held lines), else stdout.
func (w *workflow) notifier(term io.Writer) *completion.Notifier {
	f := w.f
	if !f.Workflow.Notify {
		return nil
	}
	n := &completion.Notifier{Start: w.start, Now: f.Now, After: f.Workflow.NotifyAfter, Getenv: f.Getenv}
	switch {
	case f.IO.IsStderrTTY():
		n.Term = term
	case f.IO.IsStdoutTTY():
		n.Term = w.streams.Out
	default:
		return nil
	}
	return n
}

// finishWorkflow waits for the --on-complete commands still running, appends the job summary
// and passes on what the CI writers hold. Run calls it after the command, before the error is
// reported.
func (f *Factory) finishWorkflow() {
	w := f.wf
	if w == nil {
		return
	}
	w.done.Hooks.Wait()
	if w.job != nil {
		if err := w.job.Finish(f.Getenv("GITHUB_STEP_SUMMARY"), w.command); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: %s\n", f.errorText(err))
		}
	}
	w.flush()
}

// flush passes on what the CI writers hold (the last line of a result without a line end).
func (w *workflow) flush() {
	if w != nil {
		w.streams.Flush()
	}
}

// Event implements follow.Sink: the job log and summary first (a task's annotation follows
// its result and last lines), then the hook and the notification.
func (w *workflow) Event(ev follow.Event) {
	w.job.Event(ev)
	w.done.Event(ev)
}

// ended is the end of task o, at time at, for its hook and notification
// (completion.Sink.End): the hook gets the task's envelope as --json shows it.
func (w *workflow) ended(o follow.Outcome, at time.Time) completion.Ended {
	return w.ends.Ended(o, w.job.Took(o, at), w.done.Hooks != nil)
}

// server records how the tasks of server name are reached again, for the hints.
func (w *workflow) server(name string, ref ServerRef) { w.ends.SetServer(name, ref) }

// setTimeout records the command's --timeout.
func (w *workflow) setTimeout(d time.Duration) { w.ends.SetTimeout(d) }
