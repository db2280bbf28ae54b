package cmd

import (
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// TestServerTextIsNeverAUsageError plays the server of class 13: its JSON-RPC errors are
// worded like cobra's usage errors. Exit 2 promises "your command line was wrong, nothing was
// sent"; a server's failure must stay exit 1 whatever its message says. The real usage errors
// cobra finds (a bad flag value, an unknown flag or command, a wrong argument count) must
// still exit 2, now by their type.
func TestServerTextIsNeverAUsageError(t *testing.T) {
	srv := hostile.Start(t, "usage-words-in-errors", demo.Options{})
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"call", "echo", "--args", `{"text":"hi"}`, "--server", srv.URL}, ExitFailure},
		{[]string{"call", "echo", "--args", `{"text":"hi"}`, "--server", srv.URL, "--json"}, ExitFailure},
		{[]string{"tools", "--server", srv.URL}, ExitFailure},

		{[]string{"call", "echo", "--ttl", "soon", "--server", srv.URL}, ExitUsage}, // invalid argument for a flag
		{[]string{"call", "echo", "--no-such-flag", "--server", srv.URL}, ExitUsage},
		{[]string{"call", "--server", srv.URL}, ExitUsage},                  // accepts 1 arg(s)
		{[]string{"call", "echo", "extra", "--server", srv.URL}, ExitUsage}, // accepts 1 arg(s)
		{[]string{"list", "extra"}, ExitUsage},                              // unknown command for a NoArgs command
		{[]string{"no-such-command"}, ExitUsage},                            // unknown command at the root
		{[]string{"forget"}, ExitUsage},                                     // requires at least 1 arg(s)
	} {
		run := runCIJob(t, nil, tc.args...)
		if run.code != tc.code {
			t.Errorf("%v: exit %d, want %d\nstderr: %.1000s", tc.args, run.code, tc.code, run.stderr)
		}
		if tc.code == ExitFailure && !strings.Contains(run.stderr, "invalid argument") {
			t.Errorf("%v: the server's message did not reach stderr; the test proves nothing:\n%s", tc.args, run.stderr)
		}
	}
}
