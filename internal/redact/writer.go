package redact

import (
	"bytes"
	"io"
	"sync"

	"github.com/mcptask/mcptask/internal/lines"
)

// Writer hides the values its Redactor knows in everything written through it: mcptask's
// stdout and stderr when they are not a terminal (a CI job's log, a file), so that a
// credential the user gave never lands there, even when a server echoes it into a tool result.
// It holds a line until its end has come, since a value may be split between two writes;
// Flush passes on what is left. While the Redactor knows no value, writes pass straight on.
type Writer struct {
	W io.Writer
	R *Redactor

	mu   sync.Mutex
	held lines.Held
}

// Write implements io.Writer. It reports len(p) once the complete lines of p are passed on.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held.Empty() && len(w.R.known()) == 0 {
		return w.W.Write(p)
	}
	chunk := w.held.Add(p, bytes.LastIndexByte(p, '\n'))
	if chunk == nil {
		return len(p), nil
	}
	if _, err := io.WriteString(w.W, w.R.scrubValues(string(chunk))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on a last line that has no end yet.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held.Empty() {
		return nil
	}
	_, err := io.WriteString(w.W, w.R.scrubValues(string(w.held.Rest())))
	return err
}
