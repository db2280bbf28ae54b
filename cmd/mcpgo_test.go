package cmd

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// mcpGoServer is a server built on github.com/mark3labs/mcp-go v1.2.1, the most used Go server
// SDK, with one task-required tool. Its server/discover lists 2026-07-28 and 2025-11-25 and
// carries the 2025-11-25 tasks capability, but not the io.modelcontextprotocol/tasks
// extension: it offers tasks only through initialize.
func mcpGoServer(t *testing.T) string {
	t.Helper()
	s := server.NewMCPServer("mcp-go-interop", "1.0.0",
		server.WithTaskCapabilities(true, true, true),
		server.WithToolCapabilities(false),
	)
	tool := mcp.NewTool("crunch",
		mcp.WithDescription("Crunch for a moment, as a task."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
		mcp.WithString("label", mcp.Description("what to crunch")),
	)
	// mcp-go v1.2.1 runs a task under the context of the tools/call request that created it,
	// which ends with that request, so the work does not watch it.
	s.AddTaskTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		time.Sleep(300 * time.Millisecond)
		return &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent("crunched " + req.GetString("label", "?"))}}, nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestEraChoiceMCPGo: auto-detection picks 2025-11-25 for the half-modern mcp-go server, where
// its task-required tool works, and says why under --trace; forcing 2026-07-28 shows why it
// must not be picked.
func TestEraChoiceMCPGo(t *testing.T) {
	url := mcpGoServer(t)
	r := runCLI(t, t.Context(), nil, "call", "crunch", "--arg", "label=x", "--timeout", "30s", "--trace", "--server", url)
	if !strings.Contains(r.Stderr, "# era: 2025-11-25") || !strings.Contains(r.Stderr, "tasks work only through initialize") {
		t.Errorf("--trace does not say which era was chosen and why:\n%s", r.Stderr)
	}
	if r.Code != ExitOK || strings.TrimSpace(r.Stdout) != "crunched x" || !strings.Contains(r.Stderr, "task created for tool crunch (MCP 2025-11-25)") {
		t.Fatalf("the task-required tool did not run as a 2025-11-25 task: code %d stdout %q\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	tools := runCLI(t, t.Context(), nil, "tools", "--json", "--server", url)
	if tools.Code != ExitOK || decodeJSON(t, tools.Stdout)["era"] != "2025-11-25" {
		t.Errorf("tools: code %d stdout %s stderr %s", tools.Code, tools.Stdout, tools.Stderr)
	}
	forced := runCLI(t, t.Context(), nil, "call", "crunch", "--arg", "label=x", "--protocol", "2026-07-28", "--server", url)
	if forced.Code == ExitOK {
		t.Errorf("in 2026-07-28 mcp-go runs a task-required tool? stdout %s", forced.Stdout)
	}
}

// mcptask check reports mcp-go's half-modern state (2026-07-28 in supportedVersions, tasks
// only through the 2025-style capability, no io.modelcontextprotocol/tasks extension) as a
// warning with its spec section, and still runs the task rules in 2025-11-25.
func TestCheckMCPGo(t *testing.T) {
	url := mcpGoServer(t)
	// mcp-go marks its tools destructiveHint by default: name the tool to call it.
	r := runCLI(t, t.Context(), nil, "check", "--server", url, "--tool", "crunch", "--args", `{"label":"x"}`, "--budget", "30s")
	v := verdicts(t, r.Stdout)
	if v["2026/B17b"] != "warn" {
		t.Errorf("B17b (half-modern) is %q, want warn:\n%s", v["2026/B17b"], r.Stdout)
	}
	if !strings.Contains(r.Stdout, "B17b") || !strings.Contains(r.Stdout, "§") {
		t.Errorf("the warning does not cite its section:\n%s", r.Stdout)
	}
	// Real findings on mcp-go v1.2.1: an unsupported MCP-Protocol-Version gets a plain-text
	// HTTP 400, not the JSON-RPC -32022 with data.supported that C26-VER requires (B20); its
	// notifications/tasks/status leave out ttl, though C25-TASKS says "The notification includes
	// the full Task object" and the schema's Task requires ttl (A6b).
	if f := with(v, "fail"); !slices.Equal(f, []string{"2025/A6b", "2026/B20"}) {
		t.Errorf("mcp-go fails %v; want exactly 2025/A6b (no ttl in status notifications) and 2026/B20 (plain-text 400 for an unsupported version)\n%s", f, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "missing property 'ttl'") {
		t.Errorf("A6b does not say what was missing:\n%s", r.Stdout)
	}
	if v["2025/A4"] != "pass" {
		t.Errorf("the 2025-11-25 task rules did not run on mcp-go's task tool (A4 %q):\n%s\n%s", v["2025/A4"], r.Stdout, r.Stderr)
	}
}
