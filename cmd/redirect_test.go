package cmd

import (
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// TestRedirectMCPToAnotherOriginRefused plays a server that answers the MCP endpoint with a
// redirect to another origin (another port of the same host, or plain http from https).
// net/http would follow it and re-send the user's --header values there, and on those two
// hops even the Authorization header. mcptask refuses: exit 1, a message that names both
// URLs and the fix, and the other origin receives nothing at all.
func TestRedirectMCPToAnotherOriginRefused(t *testing.T) {
	const hdrSecret, bearerSecret = "hdr-secret-4c1d", "bearer-secret-9e7a"
	for _, c := range []struct {
		mode string
		tls  bool
	}{{"redirect-mcp-other-origin", false}, {"redirect-mcp-downgrade", true}} {
		t.Run(c.mode, func(t *testing.T) {
			other := hostile.Start(t, "redirect-target", demo.Options{})
			start := hostile.Start
			if c.tls {
				start = hostile.StartTLS
			}
			s := start(t, c.mode, demo.Options{})
			s.RedirectTo(other.Base)
			env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "MCPTASK_TEST_TOKEN": bearerSecret}
			for _, args := range [][]string{
				{"tools"},
				{"call", "echo", "--arg", "text=hi"},
			} {
				r := runCLI(t, t.Context(), env, append(args, "--server", s.URL, "--insecure", "--json",
					"--header", "X-Api-Key: "+hdrSecret, "--bearer-env", "MCPTASK_TEST_TOKEN")...)
				mustCode(t, r, ExitFailure, strings.Join(args, " "))
				msg, _ := jsonError(t, r.Stderr)["message"].(string)
				for _, want := range []string{"redirected POST " + s.URL, other.URL, "does not follow redirects to another origin", "--server"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
				if strings.Contains(r.Stdout+r.Stderr, hdrSecret) || strings.Contains(r.Stdout+r.Stderr, bearerSecret) {
					t.Error("the output holds a secret")
				}
			}
			if other.Saw(hdrSecret) || other.Saw(bearerSecret) {
				t.Fatal("the other origin received the user's header or bearer")
			}
			if n := len(other.Requests()); n != 0 {
				t.Fatalf("the other origin received %d requests", n)
			}
			if !s.Saw(hdrSecret) {
				t.Fatal("the server named never got the request: the test proves nothing")
			}
		})
	}
}
