package iostreams

import (
	"io"
	"sync"
)

// Locked serialises whole writes onto a stream that several goroutines write whole lines to:
// the proxy's notices beside its server's stderr, a --record file shared by every connection,
// a stdio stream shared by the proxy's relay and its bridge. It is mcptask's one such writer.
type Locked struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLocked returns a Locked writer onto w.
func NewLocked(w io.Writer) *Locked { return &Locked{w: w} }

// Write implements io.Writer: p lands whole, never inside another write.
func (l *Locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// WriteLine writes msg and a newline in one write: one newline-delimited frame.
func (l *Locked) WriteLine(msg []byte) error {
	b := make([]byte, 0, len(msg)+1)
	b = append(append(b, msg...), '\n')
	_, err := l.Write(b)
	return err
}
