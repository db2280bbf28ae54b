package output

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps the printer below the commands: it knows the engine's events and the wire
// types, and nothing of cobra, the commands or the live view.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "/cmd", "/internal/tui", "os/exec"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/output imports %s", imp)
			}
		}
	}
}
