package cmd

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// The multi-round-trip (MRTR) bridge of issue 22 §1: a 2026-07-28 host that does not speak
// Tasks but declares elicitation is handed a bridged task's questions as an input_required
// result of its tools/call; its retry, with inputResponses and the requestState echoed,
// answers the task (tasks/update) and gets the task's result.

// TestProxyBridgeMRTRTS: the official TypeScript client v2, with its MRTR auto-fulfilment and
// an elicitation handler, gets the demo's ask and deploy results through the proxy, over stdio
// and over HTTP; its questions came to it, and the tasks completed in the ledger.
func TestProxyBridgeMRTRTS(t *testing.T) {
	v2 := tsHostScript(t, "bridge-host-v2.mjs")
	bridgeEnv(t)
	dir := t.TempDir()
	argv := demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms", "--store", filepath.Join(dir, "store.json"))

	ledger := filepath.Join(dir, "ask.json")
	h := startTSHost(t, v2, "--stdio", bridgedStdio(ledger, argv), "--tool", "ask", "--elicit", `{"name":"Ada"}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Ada!" || h.find("elicit") == nil {
		t.Fatalf("the 2026-07-28 host that declared elicitation got %v (asked: %v)\n%s", o, h.find("elicit"), h.stderr.String())
	}
	if rec := onlyRecord(t, ledger); rec.Era != "2026-07-28" || rec.Tool != "ask" || rec.Status != "completed" {
		t.Errorf("the ledger holds %+v, want the ask task completed", rec)
	}

	// deploy asks two questions at once, under keys made up at run time.
	ledger = filepath.Join(dir, "deploy.json")
	h = startTSHost(t, v2, "--stdio", bridgedStdio(ledger, argv), "--tool", "deploy", "--args", `{"targets":2}`, "--elicit", `{"confirm":true}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "deployed" || len(h.all("elicit")) != 2 {
		t.Fatalf("the host got %v after %d questions, want deployed after 2\n%s", o, len(h.all("elicit")), h.stderr.String())
	}
	if rec := onlyRecord(t, ledger); rec.Tool != "deploy" || rec.Status != "completed" {
		t.Errorf("the ledger holds %+v, want the deploy task completed", rec)
	}

	// The host answers what it can, before --on-input: the program is never run.
	answer := filepath.Join(dir, "answer.sh")
	if err := os.WriteFile(answer, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	h = startTSHost(t, v2, "--stdio", bridgedStdio(filepath.Join(dir, "exec.json"), argv, "--on-input", "exec:"+answer), "--tool", "ask", "--elicit", `{"name":"Ada"}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Ada!" {
		t.Fatalf("the host that declared elicitation, with --on-input exec, got %v\n%s", o, h.stderr.String())
	}

	// The server's own MRTR round (confirm asks before it makes a task) reaches the host as it is.
	h = startTSHost(t, v2, "--stdio", bridgedStdio(filepath.Join(dir, "confirm.json"), argv), "--tool", "confirm", "--elicit", `{"ok":true}`)
	if o := h.outcome(t); o["status"] != "completed" || h.find("elicit") == nil {
		t.Fatalf("the host got %v from confirm (asked: %v)\n%s", o, h.find("elicit"), h.stderr.String())
	}

	url, _ := demoServer(t, demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	ledger = filepath.Join(dir, "http.json")
	endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks")
	h = startTSHost(t, v2, "--http", endpoint, "--tool", "ask", "--elicit", `{"name":"Grace"}`)
	if o := h.outcome(t); o["status"] != "completed" || resultText(o) != "Hello, Grace!" || h.find("elicit") == nil {
		t.Fatalf("the HTTP host that declared elicitation got %v (asked: %v)\n%s", o, h.find("elicit"), h.stderr.String())
	}
	if rec := onlyRecord(t, ledger); rec.Tool != "ask" || rec.Status != "completed" {
		t.Errorf("the ledger holds %+v, want the ask task completed", rec)
	}
}

// mrtrMeta declares elicitation, and not the Tasks extension, as a 2026-07-28 host that can
// answer questions does.
const mrtrMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mrtr-host","version":"1"}}`

// bridgeAnswer returns the JSON-RPC answer in a proxy's HTTP reply, a JSON body or an event
// stream (a bridged call's progress comes first).
func bridgeAnswer(t *testing.T, body string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["id"] != nil && (m["result"] != nil || m["error"] != nil) {
			return m
		}
	}
	t.Fatalf("no answer in %s", body)
	return nil
}

// TestProxyBridgeMRTRState: a host's retry is taken as the answer to a bridged task only with
// the requestState the proxy handed out: one altered to name another task, or made up, is
// refused (-32602) and nothing reaches the task, which stays waiting in the ledger; the genuine
// one answers it, and the retry gets the task's result.
func TestProxyBridgeMRTRState(t *testing.T) {
	bridgeEnv(t)
	dir := t.TempDir()
	url, rec := demoServer(t, demo.Options{StepDelay: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	ledger := filepath.Join(dir, "proxy.json")
	endpoint, _ := startProxy(t, ledger, "--server", url, "--bridge-tasks")
	call := func(id int, extra string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":{}%s,%s}}`, id, extra, mrtrMeta)
		_, out, err := hostPost(t.Context(), endpoint, "", "", body)
		if err != nil {
			t.Fatal(err)
		}
		return bridgeAnswer(t, out)
	}
	first := call(1, "")
	res, _ := first["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	reqs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || state == "" || reqs["name"] == nil {
		t.Fatalf("the host got %v, want an input_required round asking for name", first)
	}
	waitFor(t, "the task waiting for input in the ledger", 10*time.Second, func() bool {
		return onlyRecord(t, ledger).Status == "input_required"
	})

	answer := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Mallory"}}}`
	// Another task's id under the same signature.
	parts := strings.Split(state, ".")
	other, _ := json.Marshal(map[string]string{"t": "someone-elses-task", "n": "ask"})
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(other) + "." + parts[2]
	for i, s := range []string{forged, "mcptask-bridge.e30.AAAA", state[:len(state)-2] + "AA"} {
		m := call(10+i, answer+`,"requestState":`+strconvQuote(s))
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "requestState") {
			t.Fatalf("the retry with requestState %q got %v, want -32602 naming the requestState", s, m)
		}
	}
	if slices.Contains(rec.Methods(), "tasks/update") {
		t.Fatal("a forged retry reached the task with tasks/update")
	}
	if task := onlyRecord(t, ledger); task.Status != "input_required" {
		t.Fatalf("after the forged retries the ledger holds %+v, want the task still waiting", task)
	}

	m := call(20, `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+strconvQuote(state))
	if text := fmt.Sprint(m["result"]); !strings.Contains(text, "Hello, Ada!") {
		t.Fatalf("the genuine retry got %v, want the task's result", m)
	}
	waitFor(t, "the task completed in the ledger", 10*time.Second, func() bool {
		return onlyRecord(t, ledger).Status == "completed"
	})
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
