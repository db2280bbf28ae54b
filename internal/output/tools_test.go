package output

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

// TestTools: the table shows taskSupport on 2025-11-25 only, keeps one line per tool whatever
// the server wrote, and --json carries the tools as received.
func TestTools(t *testing.T) {
	var tools []*rpc.Tool
	for _, raw := range []string{
		`{"name":"sleep","description":"Sleep.\nSecond line","execution":{"taskSupport":"optional"}}`,
		`{"name":"evil\u001b[2J","description":"` + strings.Repeat("x", 150) + `"}`,
	} {
		var tool rpc.Tool
		if err := json.Unmarshal([]byte(raw), &tool); err != nil {
			t.Fatal(err)
		}
		tool.Raw = json.RawMessage(raw)
		tools = append(tools, &tool)
	}
	warnings := []string{"tool \x1b[31mred\x1b[0m skipped"}

	var out, errOut bytes.Buffer
	if err := New(&out, false, false).Tools(&errOut, tools, warnings, rpc.EraLegacy, "http://127.0.0.1:1/mcp", true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "TASKS") ||
		!strings.Contains(lines[1], "optional") || !strings.HasSuffix(lines[1], "Sleep.") ||
		!strings.Contains(lines[2], "forbidden") || !strings.HasSuffix(lines[2], strings.Repeat("x", 97)+"...") {
		t.Errorf("2025-11-25 table:\n%s", out.String())
	}
	if strings.Contains(out.String()+errOut.String(), "\x1b") {
		t.Errorf("escapes reached the terminal: %q %q", out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "mcptask: warning: tool") || !strings.HasSuffix(errOut.String(), "2 tools on http://127.0.0.1:1/mcp (MCP 2025-11-25)\n") {
		t.Errorf("stderr %q", errOut.String())
	}

	out.Reset()
	errOut.Reset()
	if err := New(&out, false, false).Tools(&errOut, tools, nil, rpc.EraModern, "srv", true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "optional") || strings.Count(out.String(), "server decides") != 2 ||
		!strings.Contains(errOut.String(), "the server decides, call by call") {
		t.Errorf("2026-07-28 has no per-tool task support: every tool is the server's call:\n%s%s", out.String(), errOut.String())
	}

	// A server that declares no task support runs no tool as a task, whatever the tool says.
	out.Reset()
	errOut.Reset()
	if err := New(&out, false, false).Tools(&errOut, tools, nil, rpc.EraLegacy, "srv", false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "optional") || strings.Count(out.String(), "never") != 2 || !strings.Contains(errOut.String(), "no tool runs as a task") {
		t.Errorf("no task support on the server:\n%s%s", out.String(), errOut.String())
	}

	out.Reset()
	errOut.Reset()
	if err := New(&out, true, false).Tools(&errOut, tools, warnings, rpc.EraModern, "srv", true); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Type     string            `json:"type"`
		Tools    []json.RawMessage `json:"tools"`
		Warnings []string          `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Type != "tools" || len(env.Tools) != 2 ||
		string(env.Tools[0]) != string(tools[0].Raw) || len(env.Warnings) != 1 || errOut.Len() != 0 {
		t.Errorf("--json: %s (stderr %q), %v", out.String(), errOut.String(), err)
	}
}

// TestToolCompletionsHostile plays a server that names its tools to break a shell's
// completion: a name with an escape, a space, a quote or a command substitution is not
// offered, and a description cannot add a candidate (newline), a field (tab) or an escape.
func TestToolCompletionsHostile(t *testing.T) {
	var tools []*rpc.Tool
	for _, name := range []string{"good_tool", "evil\x1b[2J", "two words", "q'uote", "$(rm -rf ~)", "a;b", "goo.d-2"} {
		tools = append(tools, &rpc.Tool{Name: name, Description: "line one\tx\x1b[31m\nfake_tool\tdescription"})
	}
	got := ToolCompletions(tools, "")
	if len(got) != 2 || !strings.HasPrefix(got[0], "good_tool\t") || !strings.HasPrefix(got[1], "goo.d-2\t") {
		t.Fatalf("ToolCompletions = %q, want good_tool and goo.d-2 alone", got)
	}
	for _, c := range got {
		if strings.Count(c, "\t") != 1 || strings.ContainsAny(c, "\n\x1b") || strings.Contains(c, "fake_tool") {
			t.Errorf("a description escaped its field: %q", c)
		}
	}
	if got := ToolCompletions(tools, "goo."); len(got) != 1 {
		t.Errorf("prefix goo.: %q", got)
	}
}

// goldenTool is a tool whose arguments need every column: required ones, defaults, an enum,
// an array, a type list, a long description, and a server's escapes in every string.
const goldenTool = `{"name":"deploy\u001b[2J","title":"Deploy a build","description":"Deploy the given build to the targets, one after the other,\nwaiting for each to report healthy before the next; a failed target stops the rollout and rolls back.",
 "execution":{"taskSupport":"required"},
 "inputSchema":{"type":"object","required":["build","env"],"properties":{
  "build":{"type":"string","description":"the build id to deploy, as printed by the build step (a 40-character hash or a tag)"},
  "env":{"type":"string","enum":["staging","production"],"description":"where to deploy"},
  "targets":{"type":"integer","default":3,"description":"how many targets at once\u001b]0;pwned\u0007"},
  "tags":{"type":"array","items":{"type":"string"},"default":["a","b"]},
  "note":{"type":["string","null"],"title":"a free note"}}}}`

// TestToolTextGolden renders one tool at 60, 100 and 140 columns and unwrapped (a pipe). A
// person should see the name, title, task support and the description as labelled fields,
// then a table whose first four columns line up and whose descriptions wrap under their own
// column, never past the width; no escape of the server's reaches the text.
func TestToolTextGolden(t *testing.T) {
	var tool rpc.Tool
	if err := json.Unmarshal([]byte(goldenTool), &tool); err != nil {
		t.Fatal(err)
	}
	tool.Raw = json.RawMessage(goldenTool)
	doc := NewToolDoc(&tool, rpc.EraLegacy, "http://127.0.0.1:1/mcp", true)
	for _, width := range []int{60, 100, 140, 0} {
		var b bytes.Buffer
		if err := doc.Text(&b, &tool, width); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("width %d: an escape reached the text: %q", width, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if width > 0 && len([]rune(line)) > width {
				t.Errorf("width %d: line of %d columns: %q", width, len([]rune(line)), line)
			}
		}
		golden := filepath.Join("testdata", fmt.Sprintf("tool_%d.golden", width))
		if *updateTool {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update-tool to write it)", err)
		}
		if got != string(want) {
			t.Errorf("width %d:\n%s\nwant (%s):\n%s", width, got, golden, want)
		}
	}
}

var updateTool = flag.Bool("update-tool", false, "rewrite testdata/tool_*.golden from the current output")
