package tui

import (
	"slices"
	"unicode/utf8"
)

// minPrefix is the shortest prefix of a task id the table shows in place of the whole id.
// Every command accepts a unique prefix of at least 4 characters as the id (as git accepts a
// short SHA); 8 keeps a shown prefix unique for a while as the ledger grows.
const minPrefix = 8

// shortIDs returns, for each id, the shortest prefix of at least minPrefix characters that no
// other id of ids starts with, followed by "…", or the whole id when no prefix shorter than it
// is unique. Ids are compared as the server sent them (a command matches those), and cut only
// at a character boundary.
func shortIDs(ids []string) map[string]string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := make(map[string]string, len(sorted))
	for i, id := range sorted {
		// In sorted order the id sharing the longest prefix with this one is a neighbour.
		shared := 0
		if i > 0 {
			shared = commonPrefix(sorted[i-1], id)
		}
		if i+1 < len(sorted) {
			shared = max(shared, commonPrefix(id, sorted[i+1]))
		}
		n := max(prefixLen(id, shared+1), runePrefix(id, minPrefix))
		// A prefix and its "…" are no shorter than the id when it is one character longer.
		if n >= len(id) || utf8.RuneCountInString(id[n:]) <= 1 {
			out[id] = id
			continue
		}
		out[id] = id[:n] + "…"
	}
	return out
}

// commonPrefix is the length in bytes of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// prefixLen is the shortest prefix of s of at least n bytes that ends on a character
// boundary.
func prefixLen(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

// runePrefix is the length in bytes of the first n characters of s.
func runePrefix(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
