package completion

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Notifier tells the desktop that a task ended, through the terminal (--notify): only when the
// wait took at least After, or while the live view's terminal is not in front (SetBlurred).
type Notifier struct {
	// Term is the terminal the notification is written to; never a pipe (the command layer
	// makes no Notifier without one).
	Term io.Writer
	// Start is when the wait started, Now the clock, After the wait below which an end is not
	// worth a notification (--notify-after).
	Start time.Time
	Now   func() time.Time
	After time.Duration
	// Getenv tells which terminal this is (TERM, TERM_PROGRAM, TMUX, ...).
	Getenv func(string) string

	mu      sync.Mutex // one notification at a time on the terminal
	blurred bool       // the live view's terminal reports it lost focus
}

// SetBlurred records whether the live view's terminal has lost focus (its focus reports).
func (n *Notifier) SetBlurred(b bool) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.blurred = b
	n.mu.Unlock()
}

// Notify notifies the end of a task, when that is worth it.
func (n *Notifier) Notify(e Ended) {
	if n == nil || n.Term == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.Now().Sub(n.Start) < n.After && !n.blurred {
		return
	}
	tool := e.Tool
	if tool == "" {
		tool = "task"
	}
	title := "mcptask: " + tool + " " + strings.ReplaceAll(e.Outcome, "_", " ")
	body := fmt.Sprintf("task %s after %s", e.TaskID, human.Duration(e.Took))
	_, _ = io.WriteString(n.Term, sequence(n.Getenv, title, body))
}

// sequence is the escape sequence that makes the terminal show a desktop notification:
// OSC 777 for the terminals that read it (VTE-based ones such as GNOME Terminal, foot,
// rxvt-unicode), OSC 9 for those that read that one (iTerm2, WezTerm, Ghostty, kitty, Windows
// Terminal, ConEmu), and the bell for the rest, which most terminals turn into an alert. Inside
// tmux it is passed through to the outer terminal (tmux's allow-passthrough), the bell as is.
// Both texts come in part from the server: they are stripped of escapes and of the
// separators of the sequence.
func sequence(getenv func(string) string, title, body string) string {
	clean := func(s string) string {
		return strings.NewReplacer(";", ",", "\a", "", "\x1b", "").Replace(termsafe.Line(s))
	}
	title, body = clean(title), clean(body)
	term, program := getenv("TERM"), getenv("TERM_PROGRAM")
	var seq string
	switch {
	case getenv("VTE_VERSION") != "" || strings.HasPrefix(term, "foot") || strings.HasPrefix(term, "rxvt"):
		seq = "\x1b]777;notify;" + title + ";" + body + "\x1b\\"
	case program == "iTerm.app" || program == "WezTerm" || program == "ghostty" || term == "xterm-kitty" ||
		term == "xterm-ghostty" || getenv("WT_SESSION") != "" || getenv("ConEmuANSI") == "ON":
		seq = "\x1b]9;" + title + ": " + body + "\x1b\\"
	default:
		return "\a"
	}
	if getenv("TMUX") != "" {
		return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
	}
	return seq
}
