package shellquote

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers: every layer may quote, so this package imports nothing of mcptask's.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, ".") {
			t.Errorf("internal/shellquote imports %s", imp)
		}
	}
}
