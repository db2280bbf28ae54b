package cmd

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/mcptask/mcptask/internal/mdterm"
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
	p := output.New(f.IO.Out, f.Global.JSON, f.Global.JSONL)
	if f.IO.IsStdoutTTY() {
		// A person reads stdout: a Markdown text result reads as a document (internal/mdterm).
		p.Doc = &mdterm.Options{Width: f.stdoutWidth(), Color: f.Getenv("NO_COLOR") == "" && f.Getenv("TERM") != "dumb"}
	}
	return p
}

// stdoutWidth is the width of the terminal on stdout (the size tests fix, or the terminal's
// own), 0 when unknown.
func (f *Factory) stdoutWidth() int {
	if w, _ := f.IO.Size(); w > 0 {
		return w
	}
	if file, ok := f.IO.Out.(*os.File); ok {
		if w, _, err := term.GetSize(file.Fd()); err == nil {
			return w
		}
	}
	return 0
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
