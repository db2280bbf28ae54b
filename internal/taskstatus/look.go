package taskstatus

// Look is how a status is shown to a person: one word, one symbol and one colour, the same
// in the live view's table, detail and summary, the proxy's view, and the tables of list and
// get on a terminal. The word is the spec's status name, the one --json, --jsonl and the
// ledger carry, so that what a person reads is what a script matches. Without colour
// (NO_COLOR, TERM=dumb, a pipe) the symbol and the word stay.
type Look struct {
	Word   string
	Symbol string
	// Color is an ANSI colour number (0-15), so that the terminal's theme picks the shade:
	// the live view asks lipgloss for it, the plain tables write the SGR code themselves.
	Color uint8
}

// The ANSI colour numbers of the statuses.
const (
	colorRed    = 1
	colorGreen  = 2
	colorYellow = 3
	colorBlue   = 4
	colorGrey   = 8
	colorWhite  = 7
)

// LookOf returns the look of status s. A status no spec defines is shown as it came (the
// caller makes it safe for a terminal) with a neutral mark; "" is a task not seen yet.
func LookOf(s string) Look {
	switch s {
	case Working:
		return Look{Working, "●", colorBlue}
	case InputRequired:
		return Look{InputRequired, "?", colorYellow}
	case Completed:
		return Look{Completed, "✓", colorGreen}
	case Failed:
		return Look{Failed, "✗", colorRed}
	case Cancelled:
		return Look{Cancelled, "⊘", colorGrey}
	case Expired:
		return Look{Expired, "∅", colorGrey}
	case "":
		return Look{"…", "·", colorWhite}
	}
	return Look{s, "·", colorWhite}
}

// Label is the symbol and the word: "✓ completed".
func (l Look) Label() string { return l.Symbol + " " + l.Word }

// SGR returns the label in its colour as ANSI escape codes, for the plain tables on a
// terminal. Every status gets escapes of the same length (ESC[3Nm or ESC[9Nm, then ESC[0m), so
// a tabwriter that counts them still lines the columns up; Plain pads a header cell the same.
func (l Look) SGR() string {
	code := "3"
	c := l.Color
	if c >= 8 {
		code, c = "9", c-8
	}
	return "\x1b[" + code + string(rune('0'+c)) + "m" + l.Label() + "\x1b[0m"
}

// Pad is s wrapped in escapes that change nothing and are as long as SGR's: a header above a
// column of SGR labels, so that tabwriter, which counts bytes of escapes as width, keeps the
// column straight.
func Pad(s string) string { return "\x1b[39m" + s + "\x1b[0m" }
