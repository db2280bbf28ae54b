package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	rtdebug "runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/tui"
	"github.com/mcptask/mcptask/internal/tui/feedfollow"
)

// useTUI reports whether the live view is wanted: a person is at the terminal
// (IOStreams.CanPrompt) and --json and --jsonl are off.
func (f *Factory) useTUI() bool {
	return f.IO.CanPrompt(f.Getenv) && !f.printer().JSON()
}

// statusStyle is how list and get write a status on stdout: with its symbol on a terminal,
// and its colour there unless NO_COLOR or TERM=dumb; the bare word in a pipe or a file.
func (f *Factory) statusStyle() output.StatusStyle {
	switch {
	case !f.IO.IsStdoutTTY():
		return output.StatusPlain
	case f.Getenv("NO_COLOR") != "" || f.Getenv("TERM") == "dumb":
		return output.StatusSymbol
	}
	return output.StatusColor
}

// runLive shows the live view while the engine follows its tasks: the engine's events reach the
// view through feed (viewSink), the view's commands reach the engine (it is the view's
// tui.Controller). When the view ends (every task finished, or the person detached) the
// engine stops, and the outcomes are reported the way the plain mode does, after the view.
func runLive(ctx context.Context, f *Factory, e *follow.Engine, feed *tui.Feed, rep *reporter, ids []string, initial map[string]tui.Snapshot, opts tui.Options) error {
	opts.WorkDir, _ = os.Getwd()
	opts.NoColor = f.Getenv("NO_COLOR") != ""
	if f.Workflow.Notify {
		// --notify: a task that ends while the terminal is not in front is notified at once.
		opts.OnFocus = func(focused bool) { f.wf.done.Notifier.SetBlurred(!focused) }
	}
	// MCPTASK_DEBUG_LOG=FILE: while the view owns the terminal, debug output goes only there.
	var debug *log.Logger
	if p := f.Getenv("MCPTASK_DEBUG_LOG"); p != "" {
		if lf, err := tea.LogToFile(p, "mcptask"); err == nil {
			defer lf.Close()
			debug = log.Default()
		}
	}
	if f.Getenv("GOGC") == "" {
		// The view's renderer and rows add a few MB of live heap to what the engine holds, and
		// the garbage collector lets the heap grow to twice what is live: collecting at 75%
		// keeps a person watching a thousand tasks within 1.2x the memory of a CI job
		// following them, for no CPU that bench/README.md can measure.
		defer rtdebug.SetGCPercent(rtdebug.SetGCPercent(75))
	}
	m := tui.New(e, feed, ids, initial, opts)
	done := make(chan []follow.Outcome, 1)
	go func() { done <- e.Run(ctx) }()
	start := time.Now()
	final, err := tea.NewProgram(m, f.teaOptions(ctx)...).Run()
	e.Stop() // detach whatever is still followed; finished tasks still get their results
	feed.Close()
	outs := <-done
	fm, _ := final.(tui.Model)
	if debug != nil {
		took := time.Since(start)
		debug.Printf("live view: %d views in %s (%d frames at %d FPS)", fm.Views(), took.Round(time.Millisecond), int(took.Seconds()*tui.FPS), tui.FPS)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("watch view: %w", err)
	}
	return rep.finishLive(ctx, ids, outs)
}

// viewSink is feedfollow.Sink and snapshot feedfollow.Snapshot, under the names call.go uses.
type viewSink struct{ feed *tui.Feed }

func (v viewSink) Event(ev follow.Event) { feedfollow.Sink{Feed: v.feed}.Event(ev) }

var snapshot = feedfollow.Snapshot

// askMRTR asks, on the terminal, the questions a tools/call answered with input_required
// (C26-MRTR) and returns the responses, or nil when the person left.
func askMRTR(ctx context.Context, f *Factory, tool string, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	wd, _ := os.Getwd()
	m := tui.NewAsk(tool, feedfollow.Inputs(reqs), tui.Options{WorkDir: wd, NoColor: f.Getenv("NO_COLOR") != ""})
	final, err := tea.NewProgram(m, f.teaOptions(ctx)...).Run()
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("question view: %w", err)
	}
	fm, _ := final.(tui.AskModel)
	return fm.Responses(), nil
}

// teaOptions run a view on this run's terminal streams, at the size they fix (tests).
func (f *Factory) teaOptions(ctx context.Context) []tea.ProgramOption {
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out), tea.WithFPS(tui.FPS)}
	if w, h := f.IO.Size(); w > 0 && h > 0 {
		popts = append(popts, tea.WithWindowSize(w, h))
	}
	return popts
}
