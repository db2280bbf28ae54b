package wirelog

import (
	"go/build"
	"strings"
	"testing"
)

// TestLayers keeps the line below everything that writes it (issue 21): internal/rpc, the
// connector and the proxy import wirelog, so wirelog imports none of them, only the
// redaction and the terminal guard it applies (docs/guide/architecture.md).
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"github.com/mcptask/mcptask/internal/redact": true, "github.com/mcptask/mcptask/internal/termsafe": true}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/") && !allowed[imp] {
			t.Errorf("internal/wirelog imports %s", imp)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the test reads the wrong directory")
	}
}
