package completion

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers: what is done when a task ends reads the follow engine's events but follows
// nothing itself, and knows no command, view, ledger or CI log: the command layer judges each
// end (Ended) and wires this package beside internal/ci (docs/guide/architecture.md).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"net/http", "/cmd", "/internal/tui", "/internal/state", "/internal/ledger", "/internal/ci"} {
			if imp == banned || strings.HasSuffix(imp, banned) {
				t.Errorf("internal/completion imports %s", imp)
			}
		}
	}
}
