package lines

import (
	"bytes"
	"testing"
)

// A line split over writes comes out whole, once its end has come, and never before.
func TestHeldGivesWholeLines(t *testing.T) {
	var h Held
	var out []string
	for _, w := range []string{"ab", "c\nde", "f", "\ng\nh"} {
		p := []byte(w)
		if got := h.Add(p, bytes.LastIndexByte(p, '\n')); got != nil {
			out = append(out, string(got))
		}
	}
	if len(out) != 2 || out[0] != "abc\n" || out[1] != "def\ng\n" {
		t.Fatalf("lines given: %q", out)
	}
	if h.Empty() || string(h.Rest()) != "h" || !h.Empty() || h.Rest() != nil {
		t.Fatalf("the unended rest is not given once")
	}
}

// What Add returned is the caller's: later writes do not change it.
func TestHeldChunkIsNotReused(t *testing.T) {
	var h Held
	h.Add([]byte("x"), -1)
	first := h.Add([]byte("y\nz"), 1)
	h.Add([]byte("zzzzzzzz\n"), 8)
	if string(first) != "xy\n" {
		t.Fatalf("an earlier chunk changed: %q", first)
	}
}
