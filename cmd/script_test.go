package cmd

import (
	"errors"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts pins the CI contract with testscript: each script in testdata/script runs the
// real mcptask against a demo server on loopback ($SERVER), with its own ledger, no TTY.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../testdata/script",
		Setup: func(env *testscript.Env) error {
			srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			if err != nil {
				return err
			}
			hs := httptest.NewServer(srv.Handler())
			env.Defer(func() { hs.Close(); srv.Close() })
			env.Setenv("SERVER", hs.URL+"/mcp")
			env.Setenv("MCPTASK_STATE", filepath.Join(env.WorkDir, "state", "tasks.json"))
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exits CODE command args...: run the command and require exactly that exit code
			// (stdout and stderr are kept for the next assertions).
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits CODE command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad code %q", args[0])
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("exits: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("exit code %d, want %d\nstderr: %s", got, want, ts.ReadFile("stderr"))
				}
			},
		},
	})
}
