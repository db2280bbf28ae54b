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

// TestListSaysLastSeen: on a terminal, list says its statuses are as last seen and how to
// refresh them; into a pipe it adds nothing to stderr, and --refresh needs no such note.
func TestListSaysLastSeen(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	mustCode(t, runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url), ExitOK, "call")
	run := func(args ...string) (string, string) {
		out, errOut := &lockedBuffer{}, &lockedBuffer{}
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
		ios.SetTTY(false, false, true)
		if code := runOn(t, t.Context(), ios, map[string]string{"NO_COLOR": "1"}, args...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, errOut := run("list")
	if !regexp.MustCompile(`forever +2026-07-28 +working · (just now|[0-9]+m?s ago)`).MatchString(out) ||
		!strings.Contains(errOut, "statuses as last seen; 'mcptask list --refresh' asks the servers") {
		t.Errorf("list on a terminal:\n%s%s", out, errOut)
	}
	out, errOut = run("list", "--refresh")
	if !regexp.MustCompile(`forever +2026-07-28 +working · (just now|[0-9]+ms ago)`).MatchString(out) || strings.Contains(errOut, "last seen") {
		t.Errorf("list --refresh on a terminal:\n%s%s", out, errOut)
	}
	if r := runCLI(t, t.Context(), nil, "list"); r.Stderr != "" {
		t.Errorf("list into a pipe wrote to stderr: %q", r.Stderr)
	}
}
