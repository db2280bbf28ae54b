package config

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
)

// proxyEntrySet loads a real config file with a stdio, an HTTP and a broken server.
func proxyEntrySet(t *testing.T) *Set {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.json")
	write(t, p, `{"mcpServers":{
		"builds":{"command":"npx","args":["-y","@acme/builds mcp","it's"],"cwd":"/src","env":{"K":"v"}},
		"remote":{"type":"http","url":"https://mcp.example/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"timeout":5},
		"empty":{"cwd":"/x"}}}`)
	set, err := Load([]File{{p, User}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// entryOf is the rewritten entry of name, as the printed JSON has it.
func entryOf(t *testing.T, e *ProxyEntry, name string) map[string]any {
	t.Helper()
	data, err := json.Marshal(e.Doc)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ MCPServers map[string]map[string]any }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.MCPServers) != 1 || doc.MCPServers[name] == nil {
		t.Fatalf("printed %s, want one entry %q", data, name)
	}
	return doc.MCPServers[name]
}

// TestProxyEntryStdio: a stdio entry starts `mcptask proxy --stdio 'command args'`, the flags
// carried before --stdio, the command quoted so that a shell splits it back into the same
// words, and the fields mcptask does not know kept.
func TestProxyEntryStdio(t *testing.T) {
	e, err := proxyEntrySet(t).ProxyEntry("builds", ProxyEntryOptions{Args: []string{"--no-ledger"}, Self: "/opt/mcptask"})
	if err != nil {
		t.Fatal(err)
	}
	got := entryOf(t, e, "builds")
	args, _ := got["args"].([]any)
	if got["command"] != "/opt/mcptask" || got["cwd"] != "/src" || len(args) != 4 || args[0] != "proxy" || args[1] != "--no-ledger" || args[2] != "--stdio" {
		t.Fatalf("entry = %v", got)
	}
	if env, _ := got["env"].(map[string]any); env["K"] != "v" {
		t.Errorf("env not kept: %v", got)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words, err := exec.Command(sh, "-c", `for a in `+args[3].(string)+`; do printf '%s\n' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"npx", "-y", "@acme/builds mcp", "it's"}; !reflect.DeepEqual(strings.Split(strings.TrimSuffix(string(words), "\n"), "\n"), want) {
		t.Errorf("--stdio %q splits into %q, want %q", args[3], words, want)
	}
	if len(e.Notes) != 0 {
		t.Errorf("notes for a stdio entry: %q", e.Notes)
	}
}

// TestProxyEntryHTTP: an HTTP entry points at the proxy's address, keeps its headers (they pass
// through the proxy) and says how to start the proxy; without --listen it is a usage error.
func TestProxyEntryHTTP(t *testing.T) {
	set := proxyEntrySet(t)
	e, err := set.ProxyEntry("remote", ProxyEntryOptions{Listen: "127.0.0.1:7070", Args: []string{"--record", "/tmp/a b.ndjson"}, Self: "mcptask"})
	if err != nil {
		t.Fatal(err)
	}
	got := entryOf(t, e, "remote")
	if got["url"] != "http://127.0.0.1:7070/mcp" || got["headers"] == nil || got["type"] != "http" || got["command"] != nil {
		t.Errorf("entry = %v", got)
	}
	if want := []string{"run the proxy with: mcptask proxy --server remote --listen 127.0.0.1:7070 --record '/tmp/a b.ndjson'"}; !reflect.DeepEqual(e.Notes, want) {
		t.Errorf("notes = %q, want %q", e.Notes, want)
	}
	var ue *exitcode.UsageError
	if _, err := set.ProxyEntry("remote", ProxyEntryOptions{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "give --listen") {
		t.Errorf("no --listen: %v, want a exitcode.UsageError asking for --listen", err)
	}
}

// TestProxyEntryHostStdio: for a stdio-only host, an HTTP entry becomes a stdio one that starts
// `mcptask proxy --host-stdio --server URL`, its headers dropped (secrets) with a note saying so.
func TestProxyEntryHostStdio(t *testing.T) {
	e, err := proxyEntrySet(t).ProxyEntry("remote", ProxyEntryOptions{HostStdio: true, Args: []string{"--bridge-tasks"}, Self: "mcptask"})
	if err != nil {
		t.Fatal(err)
	}
	got := entryOf(t, e, "remote")
	want := []any{"proxy", "--host-stdio", "--bridge-tasks", "--server", "https://mcp.example/mcp"}
	if got["type"] != "stdio" || got["url"] != nil || got["headers"] != nil || got["timeout"] != float64(5) || !reflect.DeepEqual(got["args"], want) {
		t.Errorf("entry = %v", got)
	}
	if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], `the headers of "remote" are not copied`) || strings.Contains(e.Notes[0], "${TOKEN}") {
		t.Errorf("notes = %q", e.Notes)
	}
}

// TestProxyEntryErrors: an unknown name and an entry with neither url nor command are usage
// errors.
func TestProxyEntryErrors(t *testing.T) {
	set := proxyEntrySet(t)
	var ue *exitcode.UsageError
	for name, want := range map[string]string{"nope": "no server of that name", "empty": "neither url nor command"} {
		if _, err := set.ProxyEntry(name, ProxyEntryOptions{Self: "mcptask"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("ProxyEntry(%s) = %v, want a exitcode.UsageError saying %q", name, err, want)
		}
	}
}
