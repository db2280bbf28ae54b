package follow

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps the engine where the architecture puts it: it reaches servers through rpc
// and the ledger through state, and knows nothing of commands, terminals or views
// (docs/guide/architecture.md; STYLE.md §1).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "/cmd", "/internal/tui", "os/exec"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/follow imports %s", imp)
			}
		}
	}
}
