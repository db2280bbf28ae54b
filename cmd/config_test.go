package cmd

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	if !regexp.MustCompile(regexp.QuoteMeta(id) + "\tworking, seen [0-9]+m?s ago · forever on " + regexp.QuoteMeta(url) + "\n").MatchString(c.Stdout) {
		t.Errorf("completion of get: %q", c.Stdout)
	}
	c = runCLI(t, t.Context(), nil, "completion", "bash")
	if c.Code != ExitOK || !strings.Contains(c.Stdout, "__start_mcptask") {
		t.Errorf("completion bash: %d", c.Code)
	}
	runCLI(t, t.Context(), nil, "cancel", id)
}

// TestCompletionDescribesRealState: a record whose TTL ran out completes as expired, not as
// the "working" it last said, and no description nests parentheses in the ones shells add.
func TestCompletionDescribesRealState(t *testing.T) {
	url, _ := demoServer(t, demo.Options{TTL: 50 * time.Millisecond, StepDelay: time.Hour})
	r := runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url)
	id := strings.TrimSpace(r.Stdout)
	if r.Code != ExitOK || id == "" {
		t.Fatalf("call: %d %s", r.Code, r.Stderr)
	}
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	f.Getenv = func(k string) string {
		switch k {
		case "MCPTASK_STATE":
			return testLedger(t)
		case "XDG_STATE_HOME":
			return testStateHome(t)
		}
		return ""
	}
	f.Now = func() time.Time { return time.Now().Add(time.Hour) } // long after the TTL ran out
	out := &lockedBuffer{}
	f.IO.Out = out
	if code := Run(t.Context(), f, []string{"__complete", "cancel", ""}); code != ExitOK {
		t.Fatalf("__complete: exit %d", code)
	}
	if !strings.Contains(out.String(), id+"\texpired · forever on "+url+"\n") || strings.ContainsAny(strings.SplitN(out.String(), "\n", 2)[0], "()") {
		t.Errorf("completion of an expired task: %q", out.String())
	}
}

// TestCompletionToolNamesFromCache: 'mcptask call <TAB>' offers the tools a 2026-07-28 server
// let mcptask cache, with their descriptions, and sends nothing to the server; with nothing
// cached it offers nothing, still without a request.
func TestCompletionToolNamesFromCache(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	c := runCLI(t, t.Context(), nil, "__complete", "call", "--server", url, "")
	if len(rec.Methods()) != 0 || strings.Contains(c.Stdout, "sleep") {
		t.Fatalf("with nothing cached, completion must offer nothing and send nothing: %q, sent %v", c.Stdout, rec.Methods())
	}
	if r := runCLI(t, t.Context(), nil, "tools", "--server", url); r.Code != ExitOK {
		t.Fatalf("tools: %d %s", r.Code, r.Stderr)
	}
	sent := len(rec.Methods())
	c = runCLI(t, t.Context(), map[string]string{"MCPTASK_SERVER": url}, "__complete", "call", "sl")
	if !strings.Contains(c.Stdout, "sleep\t") || strings.Contains(c.Stdout, "echo") {
		t.Errorf("completion of call sl: %q, want sleep (and only tools starting with sl)", c.Stdout)
	}
	c = runCLI(t, t.Context(), nil, "__complete", "call", "--server", url, "")
	if !strings.Contains(c.Stdout, "echo\t") || !strings.Contains(c.Stdout, "sleep\t") {
		t.Errorf("completion of call: %q", c.Stdout)
	}
	if c = runCLI(t, t.Context(), nil, "__complete", "tools", "--server", url, "ec"); !strings.Contains(c.Stdout, "echo\tReturn the given text") {
		t.Errorf("completion of tools ec: %q", c.Stdout)
	}
	if n := len(rec.Methods()); n != sent {
		t.Errorf("completion sent %d requests: %v", n-sent, rec.Methods()[sent:])
	}
	// The tool is already there: its arguments are not completed as tools.
	if c = runCLI(t, t.Context(), nil, "__complete", "call", "sleep", "--server", url, ""); strings.Contains(c.Stdout, "echo") {
		t.Errorf("completion after the tool name: %q", c.Stdout)
	}
}
