package cmd

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// everythingServer finds the official reference server, @modelcontextprotocol/server-everything,
// installed by `npm ci --prefix testdata/interop` (which .ci/run does). Outside CI the interop
// tests skip with a message when node or the package is missing; in CI they must run.
func everythingServer(t *testing.T) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("interop: %s (CI must run the interop tests; .ci/run installs the server)", msg)
		}
		t.Skipf("interop: %s; install it with: npm ci --prefix testdata/interop", msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	path, _ := filepath.Abs("../testdata/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if p := os.Getenv("MCPTASK_EVERYTHING"); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		skip("server-everything not found at %s", path)
	}
	return path
}

// startEverythingHTTP runs the reference server's Streamable HTTP transport on a free
// loopback port and returns its endpoint once it says it is listening.
func startEverythingHTTP(t *testing.T, index string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, "node", index, "streamableHttp")
	c.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, _ := c.StderrPipe()
	c.Stdout = nil
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = c.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				close(ready)
				for sc.Scan() {
				}
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening within 30s")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

func TestInteropEverything(t *testing.T) {
	index := everythingServer(t)
	stdio := "node " + shellQuote(index) + " stdio"
	httpURL := startEverythingHTTP(t, index)
	for _, tr := range []struct {
		name  string
		flags []string
	}{
		{"stdio", []string{"--stdio", stdio}},
		{"http", []string{"--server", httpURL}},
	} {
		t.Run(tr.name, func(t *testing.T) {
			env := map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "tasks.json")}
			run := func(args ...string) cliResult {
				return runCLI(t, t.Context(), env, append(args, tr.flags...)...)
			}
			r := run("tools", "--json")
			if r.Code != ExitOK || decodeJSON(t, r.Stdout)["era"] != "2025-11-25" {
				t.Fatalf("tools: code %d; want era 2025-11-25 detected by fallback\nstdout %.300s\nstderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "simulate-research-query") {
				t.Fatalf("tools lacks simulate-research-query")
			}
			r = run("call", "simulate-research-query", "--arg", "topic=tasks", "--timeout", "60s")
			if r.Code != ExitOK || !strings.Contains(r.Stdout, "Research Report") {
				t.Fatalf("call: code %d stdout %.300s stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, "Gathering sources") {
				t.Errorf("progress lines lack the server's statusMessage:\n%s", r.Stderr)
			}
			if tr.name != "http" {
				return // a stdio server lives only as long as one mcptask process
			}
			// Across processes over HTTP: the server ties tasks to the session that made them,
			// so get/result/cancel must reuse the session saved in the ledger.
			r = run("call", "simulate-research-query", "--arg", "topic=detached", "--detach")
			id := strings.TrimSpace(r.Stdout)
			if r.Code != ExitOK || id == "" {
				t.Fatalf("call --detach: code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			g := runCLI(t, t.Context(), env, "get", id, "--json")
			if g.Code != ExitOK || decodeJSON(t, g.Stdout)["taskId"] != id {
				t.Fatalf("get from the ledger: code %d stdout %s stderr %s", g.Code, g.Stdout, g.Stderr)
			}
			res := runCLI(t, t.Context(), env, "result", id, "--timeout", "60s")
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "Research Report") {
				t.Fatalf("result: code %d stdout %.200s stderr %s", res.Code, res.Stdout, res.Stderr)
			}
			r = run("call", "simulate-research-query", "--arg", "topic=cancel-me", "--detach")
			id = strings.TrimSpace(r.Stdout)
			c := runCLI(t, t.Context(), env, "cancel", id)
			if c.Code != ExitOK || !strings.Contains(c.Stdout, "cancelled") {
				t.Fatalf("cancel: code %d stdout %q stderr %s", c.Code, c.Stdout, c.Stderr)
			}
		})
	}
}
