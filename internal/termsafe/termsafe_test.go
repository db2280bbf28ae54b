package termsafe

import "testing"

func TestString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Gathering sources (2/4)", "Gathering sources (2/4)"},
		{"csi colour", "\x1b[31mred\x1b[0m", "red"},
		{"clear screen", "a\x1b[2J\x1b[Hb", "ab"},
		{"osc title bel", "\x1b]0;pwned\x07x", "x"},
		{"osc title st", "\x1b]2;pwned\x1b\\x", "x"},
		{"osc 52 clipboard", "\x1b]52;c;ZXZpbA==\x07ok", "ok"},
		{"c1 csi", "a\u009b31mb", "a31mb"},
		{"esc final byte is part of the sequence", "a\x1bb", "a"},
		{"bell and backspace", "a\x07\x08b", "ab"},
		{"carriage return overwrite", "safe\rEVIL", "safeEVIL"},
		{"keeps newline and tab", "a\n\tb", "a\n\tb"},
		{"unicode kept", "héllo → 世界", "héllo → 世界"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"line separator", "a\u2028b", "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\x1b[1m"), "a b c"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x1b]0;x\x07", "\u009b", "a\x1b", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for _, r := range out {
			if r == 0x1b || r == 0x9b || r == 0x07 || r == '\r' {
				t.Fatalf("String(%q) = %q still holds control %U", s, out, r)
			}
		}
	})
}
