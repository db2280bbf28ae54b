package ci

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers: the CI output reads the follow engine's events (Job is a follow.Sink) but
// follows nothing itself, starts no programs (internal/completion runs hooks) and knows no
// command, view or ledger (docs/guide/architecture.md).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"os/exec", "net/http", "/cmd", "/internal/tui", "/internal/state", "/internal/ledger", "/internal/rpc", "/internal/completion"} {
			if imp == banned || strings.HasSuffix(imp, banned) {
				t.Errorf("internal/ci imports %s", imp)
			}
		}
	}
}
