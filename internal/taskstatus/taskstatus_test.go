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

// TestLook: one word, symbol and colour per status; the words are the spec's names (what
// --json carries), every status's symbol differs, and the colour escapes of every status are
// as long as Pad's, so a tabwriter keeps a coloured column lined up under its header.
func TestLook(t *testing.T) {
	seen := map[string]string{}
	for _, s := range []string{Working, InputRequired, Completed, Failed, Cancelled, Expired} {
		l := LookOf(s)
		if l.Word != s {
			t.Errorf("LookOf(%q).Word = %q, want the status itself", s, l.Word)
		}
		if other, dup := seen[l.Symbol]; dup {
			t.Errorf("%s and %s share the symbol %q", s, other, l.Symbol)
		}
		seen[l.Symbol] = s
		if got, want := len(l.SGR())-len(l.Label()), len(Pad(""))-0; got != want {
			t.Errorf("%s: escapes are %d bytes, Pad's %d: a tabwriter would misalign", s, got, want)
		}
	}
	if got := LookOf("teleporting").Word; got != "teleporting" {
		t.Errorf("an unknown status must read as it came, got %q", got)
	}
	if got := LookOf(Completed).SGR(); got != "\x1b[32m✓ completed\x1b[0m" {
		t.Errorf("SGR = %q", got)
	}
	if got := LookOf(Cancelled).SGR(); got != "\x1b[90m⊘ cancelled\x1b[0m" {
		t.Errorf("SGR = %q", got)
	}
}
