package taskstatus

import "testing"

// TestTerminal: exactly completed, failed and cancelled are terminal; Expired is over but is
// not a spec status, so Terminal must never say yes to it.
func TestTerminal(t *testing.T) {
	for _, c := range []struct {
		s              string
		terminal, over bool
	}{
		{Working, false, false},
		{InputRequired, false, false},
		{Completed, true, true},
		{Failed, true, true},
		{Cancelled, true, true},
		{Expired, false, true},
		{"", false, false},
		{"Completed", false, false},
		{"unknown", false, false},
	} {
		if got := Terminal(c.s); got != c.terminal {
			t.Errorf("Terminal(%q) = %v, want %v", c.s, got, c.terminal)
		}
		if got := Over(c.s); got != c.over {
			t.Errorf("Over(%q) = %v, want %v", c.s, got, c.over)
		}
	}
}
