package cmd

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestPersonAtTheTerminal pins mcptask's one policy for "a person is at the terminal"
// (STYLE.md §3): the live view and its prompts need stdin and stdout to be terminals and an
// environment that does not say otherwise; the browser login needs stdin and stderr (it shows
// its URL there, so results may go to a pipe). Before it, the live view asked about stdout
// only, and the login and the (never called) CanPrompt each had a policy of their own.
func TestPersonAtTheTerminal(t *testing.T) {
	for _, c := range []struct {
		name                  string
		stdin, stdout, stderr bool
		env                   map[string]string
		prompt, login         bool
	}{
		{"all terminals", true, true, true, nil, true, true},
		{"stdin is a pipe", false, true, true, nil, false, false},
		{"stdout is a pipe", true, false, true, nil, false, true},
		{"stderr is a pipe", true, true, false, nil, true, false},
		{"no terminal", false, false, false, nil, false, false},
		{"CI job with a pty", true, true, true, map[string]string{"CI": "true"}, false, false},
		{"TERM=dumb", true, true, true, map[string]string{"TERM": "dumb"}, false, true},
		{"MCPTASK_NO_TUI", true, true, true, map[string]string{"MCPTASK_NO_TUI": "1"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ios, _, _, _ := TestIO()
			ios.SetTTY(c.stdin, c.stdout, c.stderr)
			getenv := func(k string) string { return c.env[k] }
			if got := ios.CanPrompt(getenv); got != c.prompt {
				t.Errorf("CanPrompt = %v, want %v", got, c.prompt)
			}
			if got := ios.CanLogin(getenv); got != c.login {
				t.Errorf("CanLogin = %v, want %v", got, c.login)
			}
		})
	}
}

// TestNoLiveViewWithoutAPerson: stdout is a terminal but nobody can type (stdin is a pipe,
// here one that carries the keys that would open the form and answer it), or the terminal is
// a CI job's: `mcptask call` must not draw the live view (it would take its keys from the pipe,
// so whatever feeds stdin could answer a server's question or confirm a cancel) but fail the
// question with exit 5 and plain lines; and `--on-input prompt` is a usage error that names
// what is missing. Before the one policy, the view came up on stdout alone.
func TestNoLiveViewWithoutAPerson(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	for _, c := range []struct {
		name  string
		stdin bool
		env   map[string]string
	}{
		{"stdin is a pipe", false, nil},
		{"CI is set", true, map[string]string{"CI": "true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(args ...string) (int, string, string) {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				out, errOut := &lockedBuffer{}, &lockedBuffer{}
				ios := &IOStreams{In: strings.NewReader("iAda\r"), Out: out, ErrOut: errOut}
				ios.SetTTY(c.stdin, true, true)
				ios.SetSize(100, 30)
				env := map[string]string{"NO_COLOR": "1"}
				maps.Copy(env, c.env)
				code := runOn(t, ctx, ios, env, args...)
				return code, out.String(), errOut.String()
			}
			code, out, errOut := run("call", "ask", "--server", url)
			if code != ExitInputRequired || strings.Contains(out, "press i to answer") || strings.Contains(out, "Hello, Ada") {
				t.Errorf("call ask: exit %d, want %d without the live view\nstdout %.300q\nstderr %s", code, ExitInputRequired, out, errOut)
			}
			code, _, errOut = run("call", "ask", "--on-input", "prompt", "--server", url)
			if code != ExitUsage || !strings.Contains(errOut, "needs a terminal") {
				t.Errorf("--on-input prompt: exit %d, want %d naming the terminal\nstderr %s", code, ExitUsage, errOut)
			}
			if n := countMethod(rec, "tasks/update"); n != 0 {
				t.Errorf("stdin's bytes answered the question: %d tasks/update sent", n)
			}
		})
	}
}
