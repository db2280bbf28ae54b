package elicit

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers: the package is a leaf that the live view and the engine both import, so it
// imports neither, nor anything else of mcptask's: only the standard library and the JSON
// Schema library.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, "/internal/") || strings.HasPrefix(imp, "charm.land/") || imp == "net/http" || imp == "os/exec" {
			t.Errorf("internal/elicit imports %s", imp)
		}
	}
}
