package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	tools := []string{"echo", "sleep", "fail", "tool_error", "ask", "forever", "confirm", "deploy"}
	for _, c := range []struct {
		word       string
		candidates []string
		want       []string
	}{
		{"slep", tools, []string{"sleep"}},                          // one letter missing
		{"Sleep", tools, []string{"sleep"}},                         // case only
		{"sleeep", tools, []string{"sleep"}},                        // one too many
		{"secs", []string{"seconds", "steps"}, []string{"seconds"}}, // an abbreviation
		{"second", []string{"seconds", "steps"}, []string{"seconds"}},
		{"detatch", []string{"detach", "timeout", "ttl"}, []string{"detach"}},
		{"tool-error", tools, []string{"tool_error"}},
		{"zzz", tools, nil},       // nothing like it
		{"x", []string{"y"}, nil}, // one letter is not a typo of another
		{"sleep", tools, nil},     // the word itself is no suggestion
		{"", tools, nil},
	} {
		if got := Closest(c.word, c.candidates); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	// Closest first, and never more than Max.
	got := Closest("ab", []string{"abc", "ab1", "ab2", "ab3", "xb"})
	if len(got) != Max || got[0] != "ab1" {
		t.Errorf("Closest(ab) = %q: want %d names, the nearest first", got, Max)
	}
}

func TestPhrase(t *testing.T) {
	for n, want := range []string{"", "a", "a or b", "a, b or c"} {
		if got := Phrase([]string{"a", "b", "c"}[:n]); got != want {
			t.Errorf("Phrase(%d) = %q, want %q", n, got, want)
		}
	}
}
