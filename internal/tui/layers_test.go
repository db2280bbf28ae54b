package tui

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers: the view does no I/O of its own and does not follow tasks. It never imports the
// engine, the ledger, the transport or anything that talks to the network or starts programs
// (STYLE.md §1, §6: restic keeps its layers with a depguard rule; this is ours).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"net/http", "os/exec", "/internal/state", "/internal/follow", "/internal/rpc", "/cmd"} {
			if imp == banned || strings.HasSuffix(imp, banned) {
				t.Errorf("internal/tui imports %s", imp)
			}
		}
	}
}
