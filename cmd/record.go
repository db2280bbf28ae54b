package cmd

import (
	"github.com/mcptask/mcptask/internal/redact"
)

// redactor is this run's redactor: every trace, record line, ledger record, CI annotation,
// job summary and error message of the run passes through it. It learns the values of the
// headers and bearer token the user gave and the credential parameters of the server URL
// (serverRef, recordHeaders), so that a server that echoes one of them is caught too.
func (f *Factory) redactor() *redact.Redactor {
	f.redOnce.Do(func() { f.red = redact.New(nil) })
	return f.red
}

// redactStreams puts stdout and stderr, when they are not a terminal (a CI job's log, a
// file), through a redact.Writer, so that no value of the user's credentials reaches them,
// even one a server echoed into its result. A terminal is left alone: the live view and
// prompts write partial lines, and the person at it gave the credentials.
func (f *Factory) redactStreams() {
	if !f.IO.IsStdoutTTY() {
		w := &redact.Writer{W: f.IO.Out, R: f.redactor()}
		f.IO.Out = w
		f.redOuts = append(f.redOuts, w)
	}
	if !f.IO.IsStderrTTY() {
		w := &redact.Writer{W: f.IO.ErrOut, R: f.redactor()}
		f.IO.ErrOut = w
		f.redOuts = append(f.redOuts, w)
	}
}

// flushRedacted passes on what the redacting writers hold, before the CI writers under them
// are flushed.
func (f *Factory) flushRedacted() {
	for _, w := range f.redOuts {
		_ = w.Flush()
	}
}
