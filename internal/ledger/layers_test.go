package ledger

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps the writer below its users: the engine (internal/follow), the proxy and the
// commands import it, never the other way round; and internal/state, the file beneath it,
// stays free of the wire (the reason this package exists; docs/guide/architecture.md).
func TestLayers(t *testing.T) {
	for dir, banned := range map[string][]string{
		".":        {"/internal/follow", "/internal/proxy", "/cmd", "/internal/tui", "os/exec"},
		"../state": {"/internal/rpc", "/internal/ledger", "/internal/follow", "/internal/proxy"},
	} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			for _, b := range banned {
				if strings.Contains(imp, b) {
					t.Errorf("%s imports %s", pkg.ImportPath, imp)
				}
			}
		}
	}
}
