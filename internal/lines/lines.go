// Package lines holds what a writer that judges whole lines needs: the part of a line whose
// end has not come yet. The redactor's writer and the CI writer both hold lines back for the
// same reason (a secret, or a workflow command, split between two writes is still one), so
// the holding is defined here once; each writer keeps its own lock and its own idea of where
// a line ends.
package lines

// Held is the start of a line that has not ended yet. The zero value holds nothing. It is not
// safe for concurrent use: the writer that owns it locks around it.
type Held struct{ partial []byte }

// Add takes p, of which end is the index of the last byte that ends a line (-1 for none), and
// returns the complete lines now at hand, the held start first, or nil while no line has
// ended; what follows end is held for later.
func (h *Held) Add(p []byte, end int) []byte {
	if end < 0 {
		h.partial = append(h.partial, p...)
		return nil
	}
	chunk := append(h.partial, p[:end+1]...)
	h.partial = append([]byte(nil), p[end+1:]...)
	return chunk
}

// Rest returns what is held, for a writer's Flush, and forgets it.
func (h *Held) Rest() []byte {
	rest := h.partial
	h.partial = nil
	return rest
}

// Empty reports whether nothing is held.
func (h *Held) Empty() bool { return len(h.partial) == 0 }
