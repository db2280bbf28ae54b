package ci

import (
	"io"
	"strings"
	"sync"
)

// Writer neutralises everything written through it for the job log of Sys, so that no line of
// it can be taken as a workflow command: mcptask's stdout and stderr go through one in a GitHub
// job, and its own workflow commands (Log) go around it. It holds a line until its end has
// come, because GitHub's runner reads whole lines: a command split over two writes is still a
// command. Complete lines are passed on at once, so progress lines are not delayed; Flush
// passes on what is left.
//
// With JSON set, what is written is JSON text (--json, --jsonl), which a program reads: a
// line of it can never start with "::", and the legacy "##[" form can only stand inside a
// string, where it is written "\u0023#[" instead, the same string to any JSON reader. Text is
// wrapped in a ::stop-commands:: block (Neutralize) when a line of it is dangerous.
type Writer struct {
	W    io.Writer
	Sys  System
	JSON bool

	mu      sync.Mutex
	partial []byte
}

// Write implements io.Writer. It reports len(p) written once the complete lines of p are
// passed on; the rest waits for its line's end or Flush.
func (w *Writer) Write(p []byte) (int, error) {
	if w.Sys != GitHub {
		return w.W.Write(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	end := lastLineEnd(p)
	if end < 0 {
		w.partial = append(w.partial, p...)
		return len(p), nil
	}
	chunk := append(w.partial, p[:end+1]...)
	w.partial = append([]byte(nil), p[end+1:]...)
	if err := w.pass(chunk); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on a last line that has no end yet.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) == 0 {
		return nil
	}
	chunk := w.partial
	w.partial = nil
	return w.pass(chunk)
}

func (w *Writer) pass(chunk []byte) error {
	var out string
	if w.JSON {
		out = strings.ReplaceAll(string(chunk), "##[", `\u0023#[`)
	} else {
		out = Neutralize(w.Sys, string(chunk))
	}
	_, err := io.WriteString(w.W, out)
	return err
}

// lastLineEnd is the index of the last byte of p that ends a line as GitHub's runner reads
// lines ("\n", or a lone "\r"), or -1. A "\r" that ends p may be the first half of "\r\n",
// so it does not count yet.
func lastLineEnd(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		switch p[i] {
		case '\n':
			return i
		case '\r':
			if i < len(p)-1 {
				return i
			}
		}
	}
	return -1
}
