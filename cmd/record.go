package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// recording is the --record state of one mcptask run: the file, shared by every connection,
// and the linter that watches the traffic.
type recording struct {
	lockedWriter // on file: every connection writes its lines through it
	file         *os.File
	linter       *check.Linter
}

// traceOptions builds the transport's trace and record settings, and hooks the linter into
// the client options when recording.
func (f *Factory) traceOptions(ref ServerRef, opts *rpc.ClientOptions) (*rpc.TraceOptions, error) {
	if !f.Global.Trace && f.Global.Record == "" {
		return nil, nil
	}
	t := &rpc.TraceOptions{Secret: ref.HeaderNames, Redact: f.redactor()}
	if f.Global.Trace {
		t.W = f.IO.ErrOut
	}
	if f.Global.Record != "" {
		rec, err := f.recorder()
		if err != nil {
			return nil, err
		}
		t.Record = rec
		opts.OnStreamNotice = rec.linter.ObserveStream
		prev := opts.Observe
		opts.Observe = func(era rpc.Era, method string, params map[string]any, result json.RawMessage, err error) {
			rec.linter.Observe(era, method, params, result, err)
			if prev != nil {
				prev(era, method, params, result, err)
			}
		}
	}
	return t, nil
}

// recorder opens the --record file once per run (0600: it may hold tool arguments).
func (f *Factory) recorder() (*recording, error) {
	f.recOnce.Do(func() {
		file, err := os.OpenFile(f.Global.Record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			f.recErr = flagErrorf("--record %s: %v", f.Global.Record, err)
			return
		}
		r := &recording{lockedWriter: lockedWriter{w: file}, file: file}
		r.linter = check.NewLinter(func(v check.Violation) {
			line := map[string]any{"kind": "violation", "rule": v.Rule, "section": v.Section, "taskId": v.TaskID, "seen": v.Seen}
			f.redactor().Line(line)
			line["time"] = time.Now().UTC().Format(time.RFC3339Nano)
			b, _ := json.Marshal(line)
			_, _ = r.Write(append(b, '\n'))
			fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: the server broke rule %s (%s): %s\n", v.Rule, v.Section, termsafe.Line(fmt.Sprint(line["seen"])))
		})
		f.rec = r
	})
	return f.rec, f.recErr
}

// redactor is this run's redactor: every trace, record line, ledger record, CI annotation,
// job summary and error message of the run passes through it. It learns the values of the
// headers and bearer token the user gave and the credential parameters of the server URL
// (serverRef, recordHeaders), so that a server that echoes one of them is caught too.
func (f *Factory) redactor() *redact.Redactor {
	f.redOnce.Do(func() { f.red = redact.New(nil) })
	return f.red
}

// learnSecrets tells the run's redactor about the secrets of ref: the headers the user named
// (redacted wherever a record shows headers), the values of those that are credentials by
// name (Authorization, API key headers), and the credential parameters of its URL.
func (f *Factory) learnSecrets(ref ServerRef, hdr http.Header) {
	red := f.redactor()
	red.AddHeaders(ref.HeaderNames...)
	for name, v := range hdr {
		if redact.Header(name) {
			red.Learn(v...)
		}
	}
	red.Learn(redact.URLSecrets(ref.URL)...)
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

// closeRecorder flushes and closes the --record file at the end of a run.
func (f *Factory) closeRecorder() {
	if f.rec != nil {
		_ = f.rec.file.Sync()
		_ = f.rec.file.Close()
	}
}

var _ io.Writer = (*recording)(nil)
