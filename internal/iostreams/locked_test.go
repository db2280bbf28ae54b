package iostreams

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// Lines written by many goroutines at once come out whole, each on its own line.
func TestLockedKeepsLinesWhole(t *testing.T) {
	var buf bytes.Buffer
	l := NewLocked(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := bytes.Repeat([]byte{byte('a' + i)}, 4096)
			for range 50 {
				if err := l.WriteLine(line); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, ln := range lines {
		if len(ln) != 4096 || strings.Count(ln, ln[:1]) != 4096 {
			t.Fatalf("a line is not whole: %.40q…", ln)
		}
	}
}
