package termsafe

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON makes JSON text (encoding/json's, which leaves C1 controls and format characters
// raw) safe for a terminal without changing what it says: every rune String would remove is
// written as its \u escape, the same string to any JSON reader. It is for JSON printed where
// a person may read it (the open questions mcptask prints on stdout); --json documents are
// for programs and stay as they are. Text with nothing to escape is returned as is.
func JSON(b []byte) []byte {
	if isClean(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, `\ufffd`...)
		case r != '\n' && r != '\t' && r != '\r' && unsafeRune(r):
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
