package globalflags

import (
	"errors"
	"go/build"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/spf13/pflag"
)

// TestLayers keeps the global flags below the commands: pflag, not cobra, and nothing of the
// commands, the engine or the live view.
func TestLayers(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, banned := range []string{"github.com/spf13/cobra", "charm.land/", "/cmd", "/internal/tui", "/internal/follow", "/internal/proxy"} {
			if strings.Contains(imp, banned) {
				t.Errorf("internal/globalflags imports %s", imp)
			}
		}
	}
}

// TestApplyEnv: a flag given wins over its MCPTASK_* variable, which wins over the default; a
// variable that does not parse is a usage error that names it.
func TestApplyEnv(t *testing.T) {
	env := map[string]string{"MCPTASK_PROTOCOL": "2025-11-25", "MCPTASK_STATE": "/env/tasks.json", "MCPTASK_MAX_CONNS": "3"}
	getenv := func(k string) string { return env[k] }
	var o Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(fs, func(string) string { return "" })
	if err := fs.Parse([]string{"--state", "/flag/tasks.json"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyEnv(fs, getenv); err != nil {
		t.Fatal(err)
	}
	if o.StatePath != "/flag/tasks.json" || o.Protocol != "2025-11-25" || o.MaxConns != 3 {
		t.Errorf("state %q protocol %q max-conns %d: want the flag, then the environment", o.StatePath, o.Protocol, o.MaxConns)
	}
	env["MCPTASK_CONNECT_TIMEOUT"] = "soon"
	var ue *exitcode.UsageError
	if err := ApplyEnv(fs, getenv); !errors.As(err, &ue) || !strings.Contains(err.Error(), "$MCPTASK_CONNECT_TIMEOUT") {
		t.Errorf("a bad variable: %v, want a usage error naming it", err)
	}
}
