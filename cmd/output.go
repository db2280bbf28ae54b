package cmd

import (
	"io"

	"github.com/mcptask/mcptask/internal/output"
)

// The printing itself lives in internal/output; these are the names the commands use for it.

// envelope is the --json output of the commands that show tasks (output.Envelope).
type envelope = output.Envelope

var (
	writeJSON  = output.WriteJSON
	shellQuote = output.ShellQuote
	quoteAll   = output.QuoteAll
	followHint = output.FollowHint
)

// printer is how this command prints its results: text, --json or --jsonl. It is made on use,
// from the streams of the moment (the CI setup wraps them once the command is known).
func (f *Factory) printer() *output.Printer {
	return output.New(f.IO.Out, f.Global.JSON, f.Global.JSONL)
}

// newProgressPrinter returns the plain progress sink, with the --jsonl events on stdout.
func newProgressPrinter(f *Factory) *output.Progress {
	var events io.Writer
	if p := f.printer(); p.Stream() {
		events = p.Out
	}
	var groups output.Groups // the progress lines open the CI log group of their task
	if f.wf != nil && f.wf.job != nil {
		groups = f.wf.job
	}
	return output.NewProgress(f.IO.ErrOut, events, f.Now, groups, f.redactor())
}
