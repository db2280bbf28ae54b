package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
)

func TestNamedServersFromConfig(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	cfg := map[string]any{"mcpServers": map[string]any{
		"web":   map[string]any{"url": url, "headers": map[string]string{"X-Team": "${TEAM_TOKEN}"}},
		"local": map[string]any{"command": os.Args[0], "args": demoStdioArgv(t, false, "--step", "20ms")[1:], "env": map[string]string{"MCPTASK_TEST_MAIN": "1"}},
	}}
	b, _ := json.Marshal(cfg)
	file := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(file, b, 0o600)

	r := runCLI(t, t.Context(), nil, "call", "echo", "--arg", "text=hi", "--server", "web", "--config", file)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "TEAM_TOKEN") {
		t.Fatalf("an unset ${VAR} must be a usage error naming it: %d %s", r.Code, r.Stderr)
	}
	if len(rec.Methods()) != 0 {
		t.Errorf("nothing may be sent when the config cannot be resolved")
	}
	env := map[string]string{"TEAM_TOKEN": "team-secret"}
	r = runCLI(t, t.Context(), env, "call", "echo", "--arg", "text=hi", "--server", "web", "--config", file)
	if r.Code != ExitOK || r.Stdout != "hi\n" {
		t.Fatalf("--server web: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=1", "--server", "local", "--config", file, "--json")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, "slept") {
		t.Fatalf("--server local (stdio): %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "servers", "--config", file)
	if r.Code != ExitOK || !strings.Contains(r.Stdout, "web") || !strings.Contains(r.Stdout, "local") || !strings.Contains(r.Stdout, file) {
		t.Errorf("servers: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "team-secret") {
		t.Errorf("servers printed a secret")
	}
	r = runCLI(t, t.Context(), nil, "tools", "--server", "nosuch", "--config", file)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "mcptask servers") {
		t.Errorf("unknown name: %d %s", r.Code, r.Stderr)
	}
}

func TestEnvironmentForEveryFlag(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), map[string]string{"MCPTASK_SERVER": url, "MCPTASK_JSON": "true", "MCPTASK_PROTOCOL": "2025-11-25"}, "call", "echo", "--arg", "text=x")
	if m := decodeJSON(t, r.Stdout); r.Code != ExitOK || m["era"] != "2025-11-25" {
		t.Fatalf("MCPTASK_JSON and MCPTASK_PROTOCOL: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	// A flag on the command line wins over the environment.
	r = runCLI(t, t.Context(), map[string]string{"MCPTASK_SERVER": url, "MCPTASK_PROTOCOL": "2025-11-25"}, "call", "echo", "--arg", "text=x", "--protocol", "2026-07-28", "--json")
	if m := decodeJSON(t, r.Stdout); m["era"] != "2026-07-28" {
		t.Errorf("flag must beat env: %v", m)
	}
	r = runCLI(t, t.Context(), map[string]string{"MCPTASK_INSECURE": "maybe"}, "list")
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "MCPTASK_INSECURE") {
		t.Errorf("a bad env value names the variable: %d %s", r.Code, r.Stderr)
	}
}

func TestCompletionOffersLedgerIDs(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url)
	id := strings.TrimSpace(r.Stdout)
	c := runCLI(t, t.Context(), nil, "__complete", "get", id[:4])
	if !strings.Contains(c.Stdout, id+"\tforever on "+url) {
		t.Errorf("completion of get: %q", c.Stdout)
	}
	c = runCLI(t, t.Context(), nil, "completion", "bash")
	if c.Code != ExitOK || !strings.Contains(c.Stdout, "__start_mcptask") {
		t.Errorf("completion bash: %d", c.Code)
	}
	runCLI(t, t.Context(), nil, "cancel", id)
}
