package config

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps internal/config below the commands (issue 21): it knows no flags, commands,
// terminals or views, and nothing of the engine or the proxy that use its clients.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "/cmd", "/internal/tui", "/internal/follow", "/internal/proxy", "/internal/connect", "/internal/rpc", "/internal/auth"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/config imports %s", imp)
			}
		}
	}
}
