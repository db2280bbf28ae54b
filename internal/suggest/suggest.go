// Package suggest finds the names a person probably meant when they typed one that does not
// exist: a tool (`call slep`), a tool argument (`--arg secs=3`) or a flag (`--detatch`). It is
// one idea used by the argument checks (internal/toolargs), the tool lookup of a call
// (internal/follow) and the usage errors of the command line (cmd), so that all three agree on
// what "close" means.
package suggest

import (
	"slices"
	"strings"
)

// Max is how many names Closest returns at most.
const Max = 3

// Closest returns the names among candidates that word is probably a misspelling or an
// abbreviation of, closest first, at most Max. A name is close when it is a few edits away
// (one for short words, none for a single letter, about a third of the word's length for longer ones), when one of
// the two starts with the other, or when word is an abbreviation of it (its letters in
// order, the first one the same: "secs" for "seconds"). Case is ignored. word itself is
// never returned.
func Closest(word string, candidates []string) []string {
	w := strings.ToLower(word)
	if w == "" {
		return nil
	}
	type scored struct {
		name string
		d    int
	}
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if c == word || lc == "" {
			continue
		}
		d := distance(w, lc)
		limit := max(1, min(len(w), len(lc))/3)
		if len(w) < 2 {
			limit = 0
		}
		switch {
		case d <= limit:
		case len(w) >= 3 && (strings.HasPrefix(lc, w) || strings.HasPrefix(w, lc) && len(lc) >= 3):
			d = limit + 1
		case len(w) >= 3 && w[0] == lc[0] && subsequence(w, lc):
			d = limit + 2
		default:
			continue
		}
		out = append(out, scored{c, d})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var names []string
	for _, s := range out {
		if !slices.Contains(names, s.name) {
			names = append(names, s.name)
		}
		if len(names) == Max {
			break
		}
	}
	return names
}

// Phrase is names as a person reads them after "did you mean": "a", "a or b", "a, b or c".
func Phrase(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// subsequence reports whether every byte of a occurs in b, in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// distance is the Levenshtein distance of a and b, by bytes (names are ASCII in practice;
// anything else only counts a little farther).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
