// Package shellquote quotes words for a POSIX shell, for the command lines mcptask prints for a
// person to paste (a follow hint, the proxy's command in a host's config entry). It is a
// package of its own so that every layer that prints such a line (internal/output, the proxy,
// the config rewriting) quotes the same way without importing the others.
package shellquote

import "strings"

// safe are the characters a word may hold and stay unquoted.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,"

// Quote quotes s for a POSIX shell when it needs it: in single quotes, a ' written as '\”.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// All quotes each of argv.
func All(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = Quote(a)
	}
	return out
}

// Join is argv as one shell command line.
func Join(argv []string) string { return strings.Join(All(argv), " ") }
