package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
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
	return startNodeHTTP(t, index, []string{"streamableHttp"}, "listening on port", true)
}

// startNodeHTTP runs `node script args...` with PORT set to a free loopback port and returns
// the endpoint http://127.0.0.1:PORT/mcp once the server wrote ready (on stderr, or stdout).
// The process ends with the test.
func startNodeHTTP(t *testing.T, script string, args []string, ready string, onStderr bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	c.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var out io.ReadCloser
	if onStderr {
		out, _ = c.StderrPipe()
	} else {
		out, _ = c.StdoutPipe()
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = c.Wait() })
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ready) {
				close(up)
				for sc.Scan() {
				}
				return
			}
		}
	}()
	select {
	case <-up:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s", filepath.Base(script))
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

// interopFile finds a file installed by `npm ci --prefix testdata/interop` (which .ci/run
// does); outside CI the test skips when node or the file is missing, in CI it fails.
func interopFile(t *testing.T, rel string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("interop: %s (CI must run the interop tests; .ci/run installs it)", msg)
		}
		t.Skipf("interop: %s; install it with: npm ci --prefix testdata/interop", msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	path, _ := filepath.Abs(filepath.Join("..", "testdata", "interop", rel))
	if _, err := os.Stat(path); err != nil {
		skip("%s not found", path)
	}
	return path
}

// startSimpleTaskInteractive runs the official TypeScript SDK's example server
// simpleTaskInteractive (MCP 2025-11-25, tasks that ask through elicitation) on a free
// loopback port.
func startSimpleTaskInteractive(t *testing.T) string {
	t.Helper()
	script := interopFile(t, "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleTaskInteractive.js")
	return startNodeHTTP(t, script, nil, "Starting server on", false)
}

// TestInteropSimpleTaskInteractive: the TS SDK example sends the elicitation of its
// confirm_delete task on the standalone GET stream while tasks/result is open. mcptask holds
// that stream and answers from --answer; a detached call is answered later by
// `mcptask update` (the session declared elicitation for it); and on a terminal the question
// comes up in the live view.
func TestInteropSimpleTaskInteractive(t *testing.T) {
	url := startSimpleTaskInteractive(t)
	t.Run("answer", func(t *testing.T) {
		r := runCLI(t, t.Context(), nil, "call", "confirm_delete", "--args", `{"filename":"notes.txt"}`, "--timeout", "60s",
			"--answer", `elicitation={"action":"accept","content":{"confirm":true}}`, "--server", url)
		if r.Code != ExitOK || strings.TrimSpace(r.Stdout) != "Deleted 'notes.txt'" {
			t.Fatalf("code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "input_required") || !strings.Contains(r.Stderr, "MCP 2025-11-25") {
			t.Errorf("stderr lacks the input_required step:\n%s", r.Stderr)
		}
	})
	t.Run("detach then update", func(t *testing.T) {
		r := runCLI(t, t.Context(), nil, "call", "confirm_delete", "--args", `{"filename":"later.txt"}`, "--detach", "--server", url)
		id := strings.TrimSpace(r.Stdout)
		if r.Code != ExitOK || id == "" {
			t.Fatalf("call --detach: code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
		}
		u := runCLI(t, t.Context(), nil, "update", id, "--answer", `elicitation={"confirm":true}`)
		if u.Code != ExitOK {
			t.Fatalf("update: code %d stderr %s", u.Code, u.Stderr)
		}
		res := runCLI(t, t.Context(), nil, "result", id, "--timeout", "30s")
		if res.Code != ExitOK || strings.TrimSpace(res.Stdout) != "Deleted 'later.txt'" {
			t.Fatalf("result: code %d stdout %q stderr %s", res.Code, res.Stdout, res.Stderr)
		}
	})
	t.Run("live view", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		typeKeys, out, errOut, code := runOnTerminal(t, ctx, "call", "confirm_delete", "--args", `{"filename":"view.txt"}`, "--server", url)
		defer func() {
			if t.Failed() {
				t.Logf("stdout %q\nstderr %s", out.String(), errOut.String())
			}
		}()
		waitFor(t, "the question in the view", 30*time.Second, func() bool { return strings.Contains(out.String(), "press i to answer") })
		typeKeys("i")
		waitFor(t, "the form", 10*time.Second, func() bool { return strings.Contains(out.String(), "confirm (required)") })
		typeKeys("k\r") // a yes/no select on no, the safe choice; k moves up to yes
		select {
		case c := <-code:
			if c != ExitOK {
				t.Fatalf("exit %d", c)
			}
		case <-ctx.Done():
			t.Fatal("the view never ended")
		}
		if !strings.Contains(out.String(), "Deleted 'view.txt'") {
			t.Errorf("the result is missing")
		}
	})
}

// TestInteropTSClientV2: the official TypeScript client v2 (@modelcontextprotocol/client 2.x)
// with @modelcontextprotocol/ext-tasks uses the demo in 2026-07-28: discovery, tools/list
// (which it refuses without the cache hints), a plain call and a task to its result. Every
// message both sides send is checked against the schemas by the recorder.
func TestInteropTSClientV2(t *testing.T) {
	script := interopFile(t, "ts-client-v2.mjs")
	interopFile(t, "node_modules/@modelcontextprotocol/ext-tasks/package.json")
	url, rec := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", script, url).CombinedOutput()
	if err != nil {
		t.Fatalf("the TS client failed: %v\n%s", err, out)
	}
	for _, want := range []string{`{"step":"era","value":"modern"}`, `"echo","value":"hello from the TS client"`, `{"step":"sleep","value":"slept 2 seconds"}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if countMethod(rec, "tasks/get") == 0 || countMethod(rec, "server/discover") == 0 {
		t.Errorf("methods %v: want discovery and task polling", rec.Methods())
	}
}
