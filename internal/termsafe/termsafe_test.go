package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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
		{"bidi override (Trojan Source)", "access\u202e\u2066level\u2069\u2066 admin", "accesslevel admin"},
		{"bidi embeddings and marks", "\u202aa\u202bb\u202cc\u202dd\u200ee\u200ff\u061cg", "abcdefg"},
		{"bidi isolates", "\u2066x\u2067y\u2068z\u2069", "xyz"},
		{"zero width and invisible operators", "a\u200bb\u200cc\u2060d\u2061\u2062\u2063\u2064e", "abcde"},
		{"bom and annotations", "\ufeffa\ufff9b\ufffac\ufffb", "abc"},
		{"tags hide text", "ok\U000e0069\U000e0067\U000e006e", "ok"},
		{"soft hyphen", "a\u00adb", "ab"},
		{"zero width joiner kept for emoji", "\U0001f469\u200d\U0001f4bb", "\U0001f469\u200d\U0001f4bb"},
		{"rtl text kept", "שלום עולם", "שלום עולם"},
		{"del", "a\x7fb", "ab"},
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

// forbidden reports why r must never be in String's output: ESC, a C0 or C1 control other
// than newline and tab, a line separator, or a format character that reorders or hides text.
// It is written out by range, independently of the package's own unsafeRune.
func forbidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r >= 0x7f && r <= 0x9f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x200e, r == 0x200f, r == 0x061c,
		r >= 0x200b && r <= 0x200c, r >= 0x2060 && r <= 0x2064, r == 0xfeff,
		r >= 0xfff9 && r <= 0xfffb, r >= 0xe0000 && r <= 0xe007f,
		r == 0x2028, r == 0x2029, r == 0x00ad:
		return true
	}
	return false
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x1b]0;x\x07", "\u009b", "a\x1b", "plain", "a\u202eb",
		"\u2066\u2069", "x\U000e0041", "\xc2\x9b31m", "\xe2\x80\xae", "a\r\nb", "\ufeff", "é\x1b[2Jé",
		"\x1bP\u202e\x1b\\", "\xff\x1b", "a\u200d\u200cb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if forbidden(r) {
				t.Fatalf("String(%q) = %q still holds %U", s, out, r)
			}
		}
		line := Line(s)
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("Line(%q) = %q holds a newline or tab", s, line)
		}
		for _, r := range line {
			if forbidden(r) {
				t.Fatalf("Line(%q) = %q still holds %U", s, line, r)
			}
		}
		if String(out) != out {
			t.Fatalf("String is not idempotent on %q: %q then %q", s, out, String(out))
		}
		// Cut: within its bound, whole runes only, and a cut string stays as it is.
		c := CutN(s, 40)
		if len(c) > max(40, len(s)) || CutN(c, 40) != c || utf8.ValidString(s) && !utf8.ValidString(c) {
			t.Fatalf("CutN(%q, 40) = %q", s, c)
		}
	})
}

func TestCut(t *testing.T) {
	if got := Cut("short"); got != "short" {
		t.Errorf("Cut(short) = %q", got)
	}
	long := strings.Repeat("x", Limit+12345)
	got := Cut(long)
	mark := "…[cut 12365 bytes]" // 12345 + the 20 bytes of the mark
	if want := strings.Repeat("x", Limit-len(mark)) + mark; got != want {
		t.Errorf("Cut(long) = …%q (%d bytes)", got[len(got)-30:], len(got))
	}
	if Cut(got) != got {
		t.Errorf("Cut of a cut string changed it: …%q", Cut(got)[len(got)-30:])
	}
	// A cut never splits a rune, and the whole stays within n bytes.
	s := "a" + strings.Repeat("é", 40)
	if got := CutN(s, 30); len(got) > 30 || !utf8.ValidString(got) || !strings.HasPrefix(got, "aé") || !strings.HasSuffix(got, "bytes]") {
		t.Errorf("CutN = %q (%d bytes)", got, len(got))
	}
	if !utf8.ValidString(CutN(strings.Repeat("世", 2000), 100)) {
		t.Error("CutN split a rune")
	}
}

func TestCleanStringsAreNotCopied(t *testing.T) {
	for _, s := range []string{"Gathering sources (2/4)", "héllo → 世界 \U0001f469\u200d\U0001f4bb"} {
		if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
			t.Errorf("String(%q) allocates %v times", s, n)
		}
	}
}

func BenchmarkString(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"ascii", "Gathering sources (2/4): fetched 1,204 documents from the index"},
		{"unicode", "Quellen werden gesammelt (2/4) → 1.204 Dokumente · 世界"},
		{"hostile", "\x1b[2J\x1b]0;pwned\x07access\u202e\u2066level\u2069 \u009b31m"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				_ = String(bc.s)
			}
		})
	}
}
