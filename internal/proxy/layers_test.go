package proxy

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/mcptask/mcptask/"

// TestLayers keeps the proxy a relay (issue 21): it knows no flags, commands, terminals or
// views, and not the engine that follows tasks, even through another package: --bridge-tasks
// reaches the engine through the TaskFollower that internal/bridge gives it
// (docs/guide/architecture.md).
func TestLayers(t *testing.T) {
	banned := []string{"github.com/spf13/", module + "cmd", "/internal/tui", "/internal/follow", "/internal/bridge"}
	seen := map[string]bool{}
	var walk func(dir, path string)
	walk = func(dir, path string) {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			for _, b := range banned {
				if strings.Contains(imp, b) {
					t.Errorf("internal/proxy depends on %s (through %s)", imp, path)
				}
			}
			if rel, ok := strings.CutPrefix(imp, module); ok && !seen[imp] {
				seen[imp] = true
				walk(filepath.Join("..", "..", filepath.FromSlash(rel)), imp)
			}
		}
	}
	walk(".", "internal/proxy")
	if !seen[module+"internal/rpc"] {
		t.Fatal("the walk did not reach internal/rpc: it reads the wrong directories")
	}
}
