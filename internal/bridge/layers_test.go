package bridge

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps the bridge's follower between the proxy and the engine: it knows no flags,
// commands, terminals or views, and starts no processes (--on-input exec: is the engine's
// answerexec, given by cmd).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "/cmd", "/internal/tui", "os/exec"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/bridge imports %s", imp)
			}
		}
	}
}
