// Package termsafe makes server-supplied strings safe to put on a terminal. Status messages,
// error texts, elicitation prompts and tool output all come from a server mcptask does not
// trust; an escape sequence in any of them could move the cursor, rewrite the screen, set the
// window title or, on some terminals, answer back into the input stream. Both the TUI and the
// plain line printer pass every such string through String before it is drawn, which is why
// this lives in its own package rather than in either of them.
package termsafe

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// String removes ANSI escape sequences (CSI, OSC, DCS, APC and the rest, as parsed by
// charmbracelet/x/ansi) and then every remaining C0 and C1 control character except tab and
// newline. Invalid UTF-8 is replaced with U+FFFD so that a partial sequence cannot combine with
// what follows.
func String(s string) string {
	if isPlain(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, s)
}

// Line is String for a one-line slot: newlines and tabs become spaces as well.
func Line(s string) string {
	s = String(s)
	if strings.ContainsAny(s, "\n\t\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' || r == '\r' {
				return ' '
			}
			return r
		}, s)
	}
	return s
}

// isPlain is the fast path: printable ASCII, which needs no work.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}
