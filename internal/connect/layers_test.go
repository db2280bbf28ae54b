package connect

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps internal/connect below the commands (issue 21): it knows no flags, commands,
// terminals or views, and nothing of the engine or the proxy that use its clients.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "/cmd", "/internal/tui", "/internal/follow", "/internal/proxy"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/connect imports %s", imp)
			}
		}
	}
}
