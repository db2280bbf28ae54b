package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stdioHost drives `mcptask proxy` over stdio in-process the way a desktop host does: JSON-RPC
// lines on the proxy's stdin, every line of its stdout read back as JSON-RPC.
type stdioHost struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan map[string]any
	junk   chan string
	errOut *lockedBuffer
	done   chan int
}

func startStdioHostProxy(t *testing.T, env map[string]string, args ...string) *stdioHost {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &stdioHost{t: t, in: inW, lines: make(chan map[string]any, 64), junk: make(chan string, 16), errOut: &lockedBuffer{}, done: make(chan int, 1)}
	f := NewFactory(&IOStreams{In: inR, Out: outW, ErrOut: h.errOut})
	f.Getenv = func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		code := Run(ctx, f, append([]string{"proxy"}, args...))
		_ = outW.Close()
		h.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
				h.junk <- sc.Text()
				continue
			}
			h.lines <- m
		}
	}()
	t.Cleanup(func() { cancel(); _ = inW.Close() })
	return h
}

func (h *stdioHost) send(msg string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, msg+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// answer waits for the response to request id, failing on anything on stdout that is not
// JSON-RPC.
func (h *stdioHost) answer(id float64) map[string]any {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-h.lines:
			if m["id"] == id && m["method"] == nil {
				return m
			}
		case s := <-h.junk:
			h.t.Fatalf("the proxy printed something other than JSON-RPC on the host's stdout: %q", s)
		case <-deadline:
			h.t.Fatalf("no answer to request %v\n%s", id, h.errOut.String())
		}
	}
}

// TestProxyHostStdioOAuth: a stdio host reaches an HTTP server that requires OAuth through
// `proxy --host-stdio`. The proxy logs in with mcptask's own flow when the server answers 401
// (the browser step followed by the test's authorization server), stores the credential,
// prints nothing but the host's JSON-RPC on stdout, writes the host's task to the ledger with
// its session, and no token reaches the ledger, stdout or stderr.
func TestProxyHostStdioOAuth(t *testing.T) {
	o := newOAuthServer(t)
	env := authTestEnv(t)
	ledger := filepath.Join(t.TempDir(), "proxy.json")
	env["MCPTASK_STATE"] = ledger
	h := startStdioHostProxy(t, env, "--host-stdio", "--server", o.URL)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desktop-host","version":"1"}}}`)
	if r := h.answer(1); r["result"] == nil {
		t.Fatalf("initialize: %v\n%s", r, h.errOut.String())
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"through the bridge"}}}`)
	if r := h.answer(2); !strings.Contains(jsonString(r), "through the bridge") {
		t.Fatalf("echo: %v", r)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":1},"task":{"ttl":60000}}}`)
	r := h.answer(3)
	task, _ := r["result"].(map[string]any)["task"].(map[string]any)
	if task == nil {
		t.Fatalf("the task call got %v", r)
	}
	rec := onlyRecord(t, ledger)
	if rec.TaskID != task["taskId"] || rec.Server.URL != o.URL || rec.SessionID == "" {
		t.Errorf("the ledger holds %+v, want task %v on %s with its session", rec, task["taskId"], o.URL)
	}
	_ = h.in.Close()
	select {
	case code := <-h.done:
		if code != ExitOK {
			t.Fatalf("the proxy exited %d\n%s", code, h.errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not end with its host")
	}
	if c := storedCred(t, env, o.URL); c == nil {
		t.Fatal("the login stored no credential")
	}
	data, _ := os.ReadFile(ledger)
	for _, s := range o.allSecrets() {
		if s != "" && (strings.Contains(string(data), s) || strings.Contains(h.errOut.String(), s)) {
			t.Errorf("a secret reached the ledger or stderr")
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestProxyPrintConfigHostStdio: --print-config NAME --host-stdio turns an HTTP server's entry
// into one a stdio-only host starts, carrying the bridge flags, and says why the entry's
// headers were not copied (they may hold secrets) instead of copying them.
func TestProxyPrintConfigHostStdio(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"remote":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.Context(), nil, "proxy", "--config", cfg, "--print-config", "remote", "--host-stdio", "--bridge-tasks", "--on-input", "decline")
	if r.Code != ExitOK {
		t.Fatalf("code %d: %s", r.Code, r.Stderr)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.MCPServers["remote"]
	want := "[proxy --host-stdio --bridge-tasks --on-input decline --config " + cfg + " --server https://mcp.example.com/mcp]"
	if e["command"] == nil || e["type"] != "stdio" || e["url"] != nil || e["headers"] != nil || fmt.Sprint(e["args"]) != want {
		t.Fatalf("rewritten entry %v, want args %s", e, want)
	}
	if strings.Contains(r.Stdout, "TOKEN") || !strings.Contains(r.Stderr, "not copied") {
		t.Errorf("the headers: stdout %s\nstderr %s", r.Stdout, r.Stderr)
	}
}

// TestProxyBridgeUnlistedStdio: a host that calls a task tool without listing the tools first
// (so the proxy does not know yet that the tool supports tasks) is bridged all the same: the
// proxy lists the tools itself, once, then makes the call as a task.
func TestProxyBridgeUnlistedStdio(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	ledger := filepath.Join(t.TempDir(), "proxy.json")
	env := map[string]string{"MCPTASK_STATE": ledger, "XDG_STATE_HOME": testStateHome(t)}
	h := startStdioHostProxy(t, env, "--bridge-tasks", "--stdio", demoStdio(t, "--step", "50ms", "--poll-interval", "50ms"))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"plain-host","version":"1"}}}`)
	h.answer(1)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	r := h.answer(2)
	// ask requires a task: without the bridge the demo refuses the plain call (-32601); bridged,
	// the task runs and asks a question this host cannot take, and the call fails saying so.
	if msg := jsonString(r); !strings.Contains(msg, "needs input") && !strings.Contains(msg, "elicitation") {
		t.Fatalf("the unlisted call got %s, want it run as a task", msg)
	}
	if recs := viaProxy(t, ledger); len(recs) != 1 || recs[0].Tool != "ask" {
		t.Fatalf("the ledger holds %+v, want the ask task", recs)
	}
}
