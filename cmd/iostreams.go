package cmd

import (
	"io"
	"sync"

	"github.com/mcptask/mcptask/internal/iostreams"
)

// IOStreams is mcptask's terminal streams and its one TTY policy (internal/iostreams).
type IOStreams = iostreams.IOStreams

var (
	// SystemIO returns streams on the process's stdin, stdout and stderr.
	SystemIO = iostreams.System
	// TestIO returns streams on buffers, with no terminal.
	TestIO = iostreams.Test
)

// lockedWriter serialises writes onto w, for a stream several goroutines write whole lines
// to: the proxy's notices beside its server's stderr, a --record file shared by every
// connection. It is mcptask's one such writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
