package cmd

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// The --bridge-tasks proof of issue 22 §3: hosts that do not speak Tasks, built on the official
// TypeScript SDKs (testdata/interop/bridge-host-v1.mjs, bridge-host-v2.mjs), get the results of
// task tools through the proxy, and what happens to their calls (killed, cancelled, timed out,
// asked a question) happens to the task.

// all returns the events of kind the host printed so far.
func (h *tsHost) all(kind string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, ev := range h.events {
		if ev["event"] == kind {
			out = append(out, ev)
		}
	}
	return out
}

// outcome waits for the host to end and returns its outcome event.
func (h *tsHost) outcome(t *testing.T) map[string]any {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("the host did not finish\n%s", h.stderr.String())
	}
	_ = h.cmd.Wait()
	o := h.find("outcome")
	if o == nil {
		t.Fatalf("the host printed no outcome: %v\n%s", h.events, h.stderr.String())
	}
	return o
}

// resultText is the text of a CallToolResult's first content block.
func resultText(o map[string]any) string {
	res, _ := o["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}

// bridgeEnv makes the test binary the mcptask the hosts start, with the test's ledger key.
func bridgeEnv(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	t.Setenv("XDG_STATE_HOME", testStateHome(t))
}

// bridgedStdio is the --stdio argument of a host that starts `mcptask proxy --bridge-tasks`
// over server argv, as a host config entry would.
func bridgedStdio(ledger string, argv []string, flags ...string) string {
	via := append([]string{os.Args[0], "proxy", "--state", ledger, "--bridge-tasks"}, flags...)
	via = append(via, "--stdio", strings.Join(quoteAll(argv), " "))
	b, _ := json.Marshal(via)
	return string(b)
}

func asJSON(argv []string) string {
	b, _ := json.Marshal(argv)
	return string(b)
}

// onlyRecord returns the one ledger record the proxy wrote.
func onlyRecord(t *testing.T, ledger string) state.Record {
	t.Helper()
	recs := viaProxy(t, ledger)
	if len(recs) != 1 {
		t.Fatalf("the ledger holds %d records via the proxy, want 1: %+v", len(recs), recs)
	}
	return recs[0]
}

// TestProxyBridgeTasksTS: a task-unaware host on the TypeScript SDK v1 Client (plain callTool
// with a progress handler) gets simulate-research-query's result from server-everything over
// stdio; without the bridge the SDK refuses the call. A 2026-07-28 host on the client v2
// without the extension gets a required task tool's result from the demo the same way.
func TestProxyBridgeTasksTS(t *testing.T) {
	v1, v2 := tsHostScript(t, "bridge-host-v1.mjs"), tsHostScript(t, "bridge-host-v2.mjs")
	everything := everythingServer(t)
	bridgeEnv(t)
	t.Run("sdk-v1/stdio/everything", func(t *testing.T) {
		ledger := filepath.Join(t.TempDir(), "proxy.json")
		argv := []string{"node", everything, "stdio"}
		args := []string{"--tool", "simulate-research-query", "--args", `{"topic":"tasks"}`}
		direct := startTSHost(t, v1, append([]string{"--stdio", asJSON(argv)}, args...)...)
		bridged := startTSHost(t, v1, append([]string{"--stdio", bridgedStdio(ledger, argv, "--bridge-progress", "500ms")}, args...)...)
		if o := direct.outcome(t); o["status"] != "error" || !strings.Contains(o["error"].(string), "requires task-based execution") {
			t.Fatalf("without the bridge the host got %v, want the SDK's refusal", o)
		}
		o := bridged.outcome(t)
		if o["status"] != "completed" || !strings.Contains(resultText(o), "Research Report: tasks") {
			t.Fatalf("through the bridge the host got %v\n%s", o, bridged.stderr.String())
		}
		for _, tool := range bridged.find("tools")["tools"].([]any) {
			if tl := tool.(map[string]any); tl["name"] == "simulate-research-query" && tl["taskSupport"] != "optional" {
				t.Errorf("the host was shown %v, want the task requirement dropped", tl)
			}
		}
		if len(bridged.all("progress")) == 0 {
			t.Errorf("the host heard no progress while the task ran")
		}
		rec := onlyRecord(t, ledger)
		if rec.Tool != "simulate-research-query" || rec.Era != "2025-11-25" || rec.Status != "completed" {
			t.Errorf("the ledger holds %+v, want the task completed", rec)
		}
	})
	t.Run("sdk-v1/http/everything", func(t *testing.T) {
		ledger := filepath.Join(t.TempDir(), "proxy.json")
		url := startEverythingHTTP(t, everything)
		endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks", "--bridge-progress", "500ms")
		args := []string{"--tool", "simulate-research-query", "--args", `{"topic":"http"}`}
		direct := startTSHost(t, v1, append([]string{"--http", url}, args...)...)
		bridged := startTSHost(t, v1, append([]string{"--http", endpoint}, args...)...)
		if o := direct.outcome(t); o["status"] != "error" {
			t.Fatalf("without the bridge the host got %v, want the SDK's refusal", o)
		}
		o := bridged.outcome(t)
		if o["status"] != "completed" || !strings.Contains(resultText(o), "Research Report: http") {
			t.Fatalf("through the bridge the host got %v\n%s", o, bridged.stderr.String())
		}
		if len(bridged.all("progress")) == 0 {
			t.Errorf("the host heard no progress while the task ran")
		}
		rec := onlyRecord(t, ledger)
		if rec.Tool != "simulate-research-query" || rec.SessionID != bridged.find("connected")["sessionId"] || rec.Status != "completed" {
			t.Errorf("the ledger holds %+v, want the task completed, in the host's session", rec)
		}
	})
	t.Run("sdk-v1/host-stdio/everything", func(t *testing.T) {
		// The host speaks stdio, the server Streamable HTTP (--host-stdio), the bridge between.
		ledger := filepath.Join(t.TempDir(), "proxy.json")
		url := startEverythingHTTP(t, everything)
		via, _ := json.Marshal([]string{os.Args[0], "proxy", "--state", ledger, "--bridge-tasks", "--bridge-progress", "500ms", "--host-stdio", "--server", url})
		bridged := startTSHost(t, v1, "--stdio", string(via), "--tool", "simulate-research-query", "--args", `{"topic":"remote"}`)
		o := bridged.outcome(t)
		if o["status"] != "completed" || !strings.Contains(resultText(o), "Research Report: remote") {
			t.Fatalf("through --host-stdio the host got %v\n%s", o, bridged.stderr.String())
		}
		rec := onlyRecord(t, ledger)
		if rec.Server.URL != url || rec.SessionID == "" || rec.Status != "completed" {
			t.Errorf("the ledger holds %+v, want the task completed on %s with its session", rec, url)
		}
	})
	t.Run("client-v2/http/demo", func(t *testing.T) {
		ledger := filepath.Join(t.TempDir(), "proxy.json")
		url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond, Conformance: true})
		endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks")
		bridged := startTSHost(t, v2, "--http", endpoint, "--tool", "failing_job")
		if o := bridged.outcome(t); o["status"] != "completed" || resultText(o) != "failing_job failed, as it always does" {
			t.Fatalf("through the bridge the host got %v\n%s", o, bridged.stderr.String())
		}
		if rec := onlyRecord(t, ledger); rec.Era != "2026-07-28" || rec.Status != "completed" {
			t.Errorf("the ledger holds %+v, want the 2026-07-28 task completed", rec)
		}
	})
	t.Run("client-v2/stdio/demo", func(t *testing.T) {
		dir := t.TempDir()
		ledger := filepath.Join(dir, "proxy.json")
		argv := demoStdioArgv(t, false, "--conformance", "--step", "100ms", "--poll-interval", "100ms")
		args := []string{"--tool", "failing_job"}
		direct := startTSHost(t, v2, append([]string{"--stdio", asJSON(argv)}, args...)...)
		if o := direct.outcome(t); o["status"] != "error" || o["code"] != float64(-32021) {
			t.Fatalf("without the bridge the host got %v, want -32021 (the extension is required)", o)
		}
		bridged := startTSHost(t, v2, append([]string{"--stdio", bridgedStdio(ledger, argv)}, args...)...)
		o := bridged.outcome(t)
		if c := bridged.find("connected"); c["era"] != "modern" {
			t.Fatalf("the host spoke %v, want 2026-07-28", c)
		}
		if o["status"] != "completed" || resultText(o) != "failing_job failed, as it always does" {
			t.Fatalf("through the bridge the host got %v\n%s", o, bridged.stderr.String())
		}
		rec := onlyRecord(t, ledger)
		if rec.Tool != "failing_job" || rec.Era != "2026-07-28" || rec.Status != "completed" {
			t.Errorf("the ledger holds %+v, want the task completed (with its tool error)", rec)
		}
	})
}

// TestProxyBridgeHostKilled: a host killed in the middle of a bridged call leaves the task in
// the ledger, and `mcptask result` prints its result.
func TestProxyBridgeHostKilled(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "proxy.json")
	argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms", "--store", filepath.Join(dir, "store.json"))
	h := startTSHost(t, v1, "--stdio", bridgedStdio(ledger, argv, "--bridge-progress", "200ms"), "--tool", "sleep", "--args", `{"seconds":30}`)
	waitFor(t, "the bridged task to run", 30*time.Second, func() bool { return len(h.all("progress")) > 0 })
	_ = h.cmd.Process.Kill()
	<-h.done
	var rec state.Record
	waitFor(t, "the task in the ledger", 10*time.Second, func() bool {
		recs := viaProxy(t, ledger)
		if len(recs) == 1 {
			rec = recs[0]
		}
		return len(recs) == 1
	})
	if !rec.Unfinished(time.Now()) || rec.Tool != "sleep" {
		t.Fatalf("after the kill the ledger holds %+v, want the sleep task unfinished", rec)
	}
	res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "result", rec.TaskID, "--timeout", "60s")
	if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept 30 seconds") {
		t.Fatalf("mcptask result %s: code %d\nstdout %s\nstderr %s", rec.TaskID, res.Code, res.Stdout, res.Stderr)
	}
}

// TestProxyBridgeHostCancels: a host that cancels its request cancels the task.
func TestProxyBridgeHostCancels(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "proxy.json")
	argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms", "--store", filepath.Join(dir, "store.json"))
	h := startTSHost(t, v1, "--stdio", bridgedStdio(ledger, argv), "--tool", "forever", "--cancel-after", "1500")
	if o := h.outcome(t); o["status"] != "error" {
		t.Fatalf("the host got %v, want its call aborted", o)
	}
	if rec := onlyRecord(t, ledger); rec.Status != "cancelled" {
		t.Fatalf("the ledger holds %+v, want the task cancelled", rec)
	}
}

// TestProxyBridgeHostCancelsHTTP: the same over HTTP, where the host's cancellation comes on a
// request of its own.
func TestProxyBridgeHostCancelsHTTP(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	ledger := filepath.Join(t.TempDir(), "proxy.json")
	url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks")
	h := startTSHost(t, v1, "--http", endpoint, "--tool", "forever", "--cancel-after", "1500", "--linger", "2000")
	if o := h.outcome(t); o["status"] != "error" {
		t.Fatalf("the host got %v, want its call aborted", o)
	}
	waitFor(t, "the task cancelled", 10*time.Second, func() bool {
		recs := viaProxy(t, ledger)
		return len(recs) == 1 && recs[0].Status == "cancelled"
	})
}

// TestProxyBridgeProgressKeepsHostWaiting: a host with a 10 s request timeout that resets on
// progress completes a 30 s bridged task. Scaled by 1/10 to keep the test fast, every ratio
// kept: the task is 30 demo steps of 100 ms (3 s), the host's timeout 1 s, the proxy's
// progress every 200 ms (its default of 2 s, scaled). The same host without the reset times
// out, which shows the progress is what kept it waiting.
func TestProxyBridgeProgressKeepsHostWaiting(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms")
	run := func(name, reset string) *tsHost {
		return startTSHost(t, v1, "--stdio", bridgedStdio(filepath.Join(dir, name+".json"), argv, "--bridge-progress", "200ms"),
			"--tool", "sleep", "--args", `{"seconds":30}`, "--timeout", "1000", "--reset-on-progress", reset)
	}
	kept, plain := run("kept", "true"), run("plain", "false")
	if o := kept.outcome(t); o["status"] != "completed" || resultText(o) != "slept 30 seconds" {
		t.Fatalf("the host whose timeout resets on progress got %v\n%s", o, kept.stderr.String())
	}
	if o := plain.outcome(t); o["status"] != "error" || !strings.Contains(strings.ToLower(o["error"].(string)), "timed out") {
		t.Fatalf("the host whose timeout does not reset got %v, want a timeout", o)
	}
}

// TestProxyBridgeInput: a task's question goes to a 2025-11-25 host that declared elicitation
// as elicitation/create; for hosts of either era that cannot take it, --on-input exec answers
// it, or else (2026-07-28) the call fails naming `mcptask update` and the task, which stays in
// the ledger waiting.
func TestProxyBridgeInput(t *testing.T) {
	v1, v2 := tsHostScript(t, "bridge-host-v1.mjs"), tsHostScript(t, "bridge-host-v2.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms", "--store", filepath.Join(dir, "store.json"))

	h := startTSHost(t, v1, "--stdio", bridgedStdio(filepath.Join(dir, "v1.json"), argv), "--tool", "ask", "--elicit", `{"name":"Ada"}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Ada!" || h.find("elicit") == nil {
		t.Fatalf("the 2025-11-25 host that declared elicitation got %v (asked: %v)\n%s", o, h.find("elicit"), h.stderr.String())
	}

	answer := filepath.Join(dir, "answer.sh")
	if err := os.WriteFile(answer, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	h = startTSHost(t, v2, "--stdio", bridgedStdio(filepath.Join(dir, "exec.json"), argv, "--on-input", "exec:"+answer), "--tool", "ask")
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Grace!" {
		t.Fatalf("the 2026-07-28 host with --on-input exec got %v\n%s", o, h.stderr.String())
	}
	// A 2025-11-25 host that did not declare elicitation: the proxy declares it for --on-input.
	h = startTSHost(t, v1, "--stdio", bridgedStdio(filepath.Join(dir, "exec1.json"), argv, "--on-input", "exec:"+answer), "--tool", "ask")
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Grace!" || h.find("elicit") != nil {
		t.Fatalf("the 2025-11-25 host without elicitation, with --on-input exec, got %v\n%s", o, h.stderr.String())
	}

	ledger := filepath.Join(dir, "fail.json")
	h = startTSHost(t, v2, "--stdio", bridgedStdio(ledger, argv), "--tool", "ask")
	o := h.outcome(t)
	rec := onlyRecord(t, ledger)
	msg, _ := o["error"].(string)
	if o["status"] != "error" || !strings.Contains(msg, "mcptask update "+rec.TaskID) {
		t.Fatalf("the 2026-07-28 host without --on-input got %v, want a failure naming mcptask update %s", o, rec.TaskID)
	}
	if !rec.Unfinished(time.Now()) {
		t.Fatalf("the ledger holds %+v, want the task waiting for its answer", rec)
	}
}

// TestProxyBridgeInputHTTP: the same over HTTP, where the question goes to the host on its
// call's event stream and its answer comes back on a request of its own.
func TestProxyBridgeInputHTTP(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})

	endpoint, _ := startProxy(t, filepath.Join(dir, "a.json"), "--server", url, "--bridge-tasks")
	h := startTSHost(t, v1, "--http", endpoint, "--tool", "ask", "--elicit", `{"name":"Ada"}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Ada!" || h.find("elicit") == nil {
		t.Fatalf("the host that declared elicitation got %v (asked: %v)\n%s", o, h.find("elicit"), h.stderr.String())
	}

	answer := filepath.Join(dir, "answer.sh")
	if err := os.WriteFile(answer, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	endpoint, _ = startProxy(t, filepath.Join(dir, "b.json"), "--server", url, "--bridge-tasks", "--on-input", "exec:"+answer)
	h = startTSHost(t, v1, "--http", endpoint, "--tool", "ask")
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Grace!" || h.find("elicit") != nil {
		t.Fatalf("the host without elicitation, with --on-input exec, got %v\n%s", o, h.stderr.String())
	}
}

// TestProxyBridgeHostKilledHTTP: an HTTP host killed mid-call leaves its task running and in
// the ledger; `mcptask result` prints its result.
func TestProxyBridgeHostKilledHTTP(t *testing.T) {
	v1 := tsHostScript(t, "bridge-host-v1.mjs")
	bridgeEnv(t)
	ledger := filepath.Join(t.TempDir(), "proxy.json")
	url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks", "--bridge-progress", "200ms")
	h := startTSHost(t, v1, "--http", endpoint, "--tool", "sleep", "--args", `{"seconds":30}`)
	waitFor(t, "the bridged task to run", 30*time.Second, func() bool { return len(h.all("progress")) > 0 })
	_ = h.cmd.Process.Kill()
	<-h.done
	rec := onlyRecord(t, ledger)
	if !rec.Unfinished(time.Now()) || rec.Tool != "sleep" || rec.SessionID == "" {
		t.Fatalf("after the kill the ledger holds %+v, want the sleep task unfinished, with its session", rec)
	}
	res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "result", rec.TaskID, "--timeout", "60s")
	if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept 30 seconds") {
		t.Fatalf("mcptask result %s: code %d\nstdout %s\nstderr %s", rec.TaskID, res.Code, res.Stdout, res.Stderr)
	}
}

// TestProxyBridgeRecord: --record keeps what the proxy does on the host's behalf over HTTP (its
// task call and its polls, marked "peer": "proxy"), and the credential it sends for the host
// (a named server's header, here --header) never reaches the record.
func TestProxyBridgeRecord(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "record.ndjson")
	url, _ := demoServer(t, demo.Options{StepDelay: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	const secret = "s3cret-bridge-token"
	endpoint, _ := startProxy(t, filepath.Join(dir, "proxy.json"), "--server", url, "--bridge-tasks", "--record", record, "--header", "Authorization: Bearer "+secret)
	host := plainCall(t, endpoint)
	if !strings.Contains(host, "slept 2 seconds") {
		t.Fatalf("the host got %s", host)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Fatal("the record holds the credential")
	}
	var proxyLines, polls int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["peer"] == "proxy" {
			proxyLines++
			if strings.Contains(line, `"tasks/get"`) || strings.Contains(line, `"tasks/result"`) {
				polls++
			}
		}
	}
	if proxyLines == 0 || polls == 0 {
		t.Fatalf("the record has %d lines of the proxy's, %d of its polls:\n%s", proxyLines, polls, data)
	}
}

// plainCall makes one plain 2025-11-25 tools/call of sleep through endpoint the way a
// task-unaware host does (no params.task), and returns the answer.
func plainCall(t *testing.T, endpoint string) string {
	t.Helper()
	tr, err := rpc.NewHTTPTransport(endpoint, rpc.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := t.Context()
	if _, err := tr.RoundTrip(ctx, &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"plain-host","version":"1"}}`)}, http.Header{}); err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	_ = tr.Send(ctx, &rpc.Message{JSONRPC: "2.0", Method: "notifications/initialized"}, hdr)
	resp, err := tr.RoundTrip(ctx, &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`2`), Method: "tools/call",
		Params: json.RawMessage(`{"name":"sleep","arguments":{"seconds":2}}`)}, hdr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	return string(b)
}
