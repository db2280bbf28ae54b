package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pidLogged wraps argv in a shell that appends the server process's pid to file first, so a
// test can count the processes the proxy started.
func pidLogged(file string, argv []string) string {
	return strings.Join(quoteAll(append([]string{"sh", "-c", `echo $$ >> "$0"; exec "$@"`, file}, argv...)), " ")
}

func countLines(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return len(strings.Fields(string(data)))
}

// TestProxyStdioListen: HTTP hosts reach a stdio server through `proxy --stdio 'cmd' --listen`:
// the official TypeScript SDK v1 host reaches server-everything started over stdio, one server
// process per 2025-11-25 session; 2026-07-28 hosts share one process of the demo. The ledger
// records the stdio command, which resume starts again.
func TestProxyStdioListen(t *testing.T) {
	v1, v2 := tsHostScript(t, "proxy-host-v1.mjs"), tsHostScript(t, "proxy-host-v2.mjs")
	everything := everythingServer(t)
	bridgeEnv(t)
	t.Run("sdk-v1/everything", func(t *testing.T) {
		dir := t.TempDir()
		ledger, pids := filepath.Join(dir, "proxy.json"), filepath.Join(dir, "pids")
		argv := []string{"node", everything, "stdio"}
		endpoint, _ := startProxy(t, ledger, "--stdio", pidLogged(pids, argv), "--listen", "127.0.0.1:0")
		a := startTSHost(t, v1, "--http", endpoint, "--tool", "simulate-research-query", "--args", `{"topic":"a"}`)
		b := startTSHost(t, v1, "--http", endpoint, "--tool", "simulate-research-query", "--args", `{"topic":"b"}`)
		for _, h := range []*tsHost{a, b} {
			if o := h.outcome(t); o["status"] != "completed" || !strings.Contains(resultText(o), "Research Report") {
				t.Fatalf("the host got %v\n%s", o, h.stderr.String())
			}
		}
		if n := countLines(t, pids); n != 2 {
			t.Errorf("%d server processes for two 2025-11-25 sessions, want 2", n)
		}
		recs := viaProxy(t, ledger)
		if len(recs) != 2 || recs[0].Server.URL != "" || len(recs[0].Server.Command) == 0 || recs[0].Status != "completed" {
			t.Errorf("the ledger holds %+v, want two completed tasks of the stdio command", recs)
		}
	})
	t.Run("client-v2/demo", func(t *testing.T) {
		dir := t.TempDir()
		ledger, pids := filepath.Join(dir, "proxy.json"), filepath.Join(dir, "pids")
		argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms")
		endpoint, _ := startProxy(t, ledger, "--stdio", pidLogged(pids, argv), "--listen", "127.0.0.1:0")
		a := startTSHost(t, v2, "--http", endpoint, "--tool", "sleep", "--args", `{"seconds":3}`)
		b := startTSHost(t, v2, "--http", endpoint, "--tool", "sleep", "--args", `{"seconds":2}`)
		for _, h := range []*tsHost{a, b} {
			if o := h.outcome(t); o["status"] != "completed" || !strings.Contains(resultText(o), "slept") {
				t.Fatalf("the host got %v\n%s", o, h.stderr.String())
			}
			if c := h.find("connected"); c["era"] != "modern" {
				t.Fatalf("the host spoke %v, want 2026-07-28", c)
			}
		}
		if n := countLines(t, pids); n != 1 {
			t.Errorf("%d server processes for 2026-07-28 hosts, want 1 shared", n)
		}
	})
}
