package output

import (
	"strings"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/shellquote"
)

// FollowHint is the command that picks a task up again. The ledger knows the server; the flags
// are spelled out anyway so that the hint also works from another machine or ledger.
func FollowHint(ref connect.Ref, id string) string {
	return "mcptask result " + id + " " + ServerFlags(ref)
}

// ServerFlags renders the flags that reach ref again, secrets left as references.
func ServerFlags(ref connect.Ref) string {
	var parts []string
	if ref.URL != "" {
		parts = append(parts, "--server "+ShellQuote(redact.URL(ref.URL)))
	} else {
		parts = append(parts, "--stdio "+ShellQuote(strings.Join(QuoteAll(ref.Argv), " ")))
	}
	for _, h := range ref.HeaderNames {
		parts = append(parts, "--header "+ShellQuote(h+": …"))
	}
	if ref.BearerEnv != "" {
		parts = append(parts, "--bearer-env "+ref.BearerEnv)
	}
	return strings.Join(parts, " ")
}

// QuoteAll quotes each of argv for a POSIX shell.
func QuoteAll(argv []string) []string { return shellquote.All(argv) }

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string { return shellquote.Quote(s) }
