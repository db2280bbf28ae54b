package cmd

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestToolsTaskSupportBothEras: the table says whether each tool runs as a task in either
// era: the tool's own taskSupport on 2025-11-25, "server decides" on 2026-07-28.
func TestToolsTaskSupportBothEras(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "tools", "--server", url, "--protocol", rpc.VersionLegacy)
	mustCode(t, r, ExitOK, "tools on 2025-11-25")
	if !regexp.MustCompile(`(?m)^NAME +TASKS +DESCRIPTION$`).MatchString(r.Stdout) ||
		!regexp.MustCompile(`(?m)^sleep +optional +Sleep for`).MatchString(r.Stdout) ||
		!regexp.MustCompile(`(?m)^forever +required +`).MatchString(r.Stdout) {
		t.Errorf("2025-11-25 table:\n%s", r.Stdout)
	}
	r = runCLI(t, t.Context(), nil, "tools", "--server", url, "--protocol", rpc.VersionModern)
	mustCode(t, r, ExitOK, "tools on 2026-07-28")
	if !regexp.MustCompile(`(?m)^sleep +server decides +Sleep for`).MatchString(r.Stdout) || strings.Contains(r.Stdout, "optional") ||
		!strings.Contains(r.Stderr, "the server decides, call by call") {
		t.Errorf("2026-07-28 table:\n%s%s", r.Stdout, r.Stderr)
	}
}

// TestToolsName shows one tool in both eras: its task support as the era says it, and its
// arguments as a table (name, type, required, default, description) in the schema's order,
// wrapped to the terminal's width; --json carries the same, and the tool as received.
func TestToolsName(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	for _, tc := range []struct{ era, tasks, support string }{
		{rpc.VersionLegacy, "optional: runs as a task when the client asks (mcptask does)", "optional"},
		{rpc.VersionModern, "the server decides, call by call (MCP 2026-07-28 has no per-tool flag)", "server-decides"},
	} {
		r := runCLI(t, t.Context(), nil, "tools", "sleep", "--server", url, "--protocol", tc.era)
		mustCode(t, r, ExitOK, "tools sleep on "+tc.era)
		want := "NAME         sleep\n" +
			"TASKS        " + tc.tasks + "\n" +
			"DESCRIPTION  Sleep for a number of seconds as a task, reporting each step in the status message.\n" +
			"\n" +
			"ARGUMENT  TYPE     REQUIRED  DEFAULT  DESCRIPTION\n" +
			"seconds   number   no        3        how long to sleep\n" +
			"steps     integer  no        -        number of status updates (default: one per second)\n"
		if r.Stdout != want {
			t.Errorf("tools sleep on %s:\n%s\nwant:\n%s", tc.era, r.Stdout, want)
		}

		r = runCLI(t, t.Context(), nil, "tools", "echo", "--server", url, "--protocol", tc.era, "--json")
		mustCode(t, r, ExitOK, "tools echo --json on "+tc.era)
		var doc struct {
			Type, Era, Name, Server, TaskSupport string
			Arguments                            []struct {
				Name, Type, Description string
				Required                bool
			}
			Tool json.RawMessage
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Type != "tool" || doc.Era != tc.era || doc.Name != "echo" || doc.Server != url || len(doc.Arguments) != 1 ||
			doc.Arguments[0].Name != "text" || !doc.Arguments[0].Required || doc.Arguments[0].Type != "string" ||
			!strings.Contains(string(doc.Tool), `"inputSchema"`) {
			t.Errorf("tools echo --json on %s: %s", tc.era, r.Stdout)
		}
		if tc.era == rpc.VersionLegacy && doc.TaskSupport != "forbidden" || tc.era == rpc.VersionModern && doc.TaskSupport != "server-decides" {
			t.Errorf("echo's taskSupport on %s: %q", tc.era, doc.TaskSupport)
		}
	}
	r := runCLI(t, t.Context(), nil, "tools", "slep", "--server", url)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, `has no tool "slep"`) || !strings.Contains(r.Stderr, "'mcptask tools' lists them") {
		t.Errorf("an unknown tool: %d %s", r.Code, r.Stderr)
	}
}
