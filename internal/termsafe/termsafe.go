// Package termsafe makes server-supplied strings safe to put on a terminal, and bounds their
// size. Status messages, error texts, ids, tool names, version lists, elicitation prompts and
// tool output all come from a server mcptask does not trust (SECURITY.md, class 2); an escape
// sequence in any of them could move the cursor, rewrite the screen, set the window title or,
// on some terminals, answer back into the input stream. Everything mcptask prints for a
// person passes through String or Line first, which is why this lives in its own package
// rather than in the TUI or the line printer. JSON output is data for programs and is left
// exact.
//
// What is removed, not shown escaped:
//
//   - escape sequences (CSI, OSC, DCS, APC and the rest, as charmbracelet/x/ansi parses them);
//   - every other C0 and C1 control but tab and newline (Line turns those into spaces);
//   - the line and paragraph separators U+2028 and U+2029;
//   - every format character (Unicode category Cf) but the zero-width joiner U+200D. That
//     takes the bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
//     which reorder what follows them so that a terminal shows text in another order than it
//     is read ("Trojan Source", CVE-2021-42574), and the invisible ones (U+200B, U+200C,
//     U+2060–U+2064, U+FEFF, U+FFF9–U+FFFB, the whole U+E0000–U+E007F tags block, the soft
//     hyphen) that hide text or make two different strings look alike. U+200D stays because
//     it reorders and hides nothing and every emoji sequence (👩‍💻) is built with it.
//
// Removing rather than escaping keeps legitimate text readable: an Arabic or Hebrew status
// message loses only its direction marks, and the terminal's own bidi algorithm still lays it
// out. Where the exact value matters (a task id) it is checked, not cleaned: see
// rpc.CheckTaskID.
//
// Size (class 8): Cut bounds one string to Limit bytes with a visible mark, so that one
// hostile status message cannot fill a screen, a CI log or the task ledger.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// String removes escape sequences, C0 and C1 controls other than tab and newline, and the
// format characters named in the package comment. Invalid UTF-8 is replaced with U+FFFD so
// that a partial sequence cannot combine with what follows. A string with nothing to remove
// is returned as is, without allocating.
func String(s string) string {
	if isClean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unsafeRune(r) {
			return r
		}
		return -1
	}, s)
}

// Line is String for a one-line slot: newlines, tabs and carriage returns become spaces as
// well.
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

// unsafeRune reports whether r must not reach a terminal: a control character, a line or
// paragraph separator, or a format character other than the zero-width joiner.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return true
	case r < 0xad:
		return false
	case r == '\u2028' || r == '\u2029':
		return true
	case r == '\u200d':
		return false
	case r >= 0xe0000 && r <= 0xe007f:
		// The whole tags block, not only its assigned (Cf) code points: the unassigned ones
		// are as invisible in a terminal, and a later Unicode may make them tags.
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// isClean is the fast path: printable ASCII with tabs and newlines needs no work (one pass
// over the bytes), and valid UTF-8 without a rune String removes needs none either.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c-0x20 < 0x7f-0x20 { // printable ASCII, in one comparison (c < 0x20 wraps around)
			continue
		}
		switch {
		case c == '\n' || c == '\t':
		case c >= utf8.RuneSelf:
			return isCleanUnicode(s[i:])
		default:
			return false
		}
	}
	return true
}

func isCleanUnicode(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return false
		}
		i += n
	}
	return true
}

// Limit is the most bytes of one server string mcptask keeps in the ledger or prints in one
// slot: status messages, error messages, tool names, titles. 4 KiB is far more than any
// honest status line and small enough that a ledger of a thousand tasks stays a few MiB.
const Limit = 4 << 10

// Cut returns s unchanged when it is at most Limit bytes long, and otherwise its first bytes
// (ending on a whole rune) followed by a visible "…[cut N bytes]" saying how much is gone,
// Limit bytes in all. So Cut of a cut string changes nothing: a record read back from the
// ledger and written again keeps its mark.
func Cut(s string) string { return CutN(s, Limit) }

// CutN is Cut with a limit of n bytes. For n below the length of the mark (about 30 bytes),
// the mark alone is returned.
func CutN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// The mark's number is at most len(s), so reserving its digits is enough.
	keep := max(n-len("…[cut  bytes]")-len(strconv.Itoa(len(s))), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + "…[cut " + strconv.Itoa(len(s)-keep) + " bytes]"
}
