package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/state"
)

// startProxy runs `mcptask proxy args...` in-process with its own ledger and returns the
// endpoint it serves and its stderr. It stops when the test ends.
func startProxy(t *testing.T, ledger string, args ...string) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &lockedBuffer{}
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &lockedBuffer{}, ErrOut: errOut})
	f.Getenv = func(k string) string {
		if k == "MCPTASK_STATE" {
			return ledger
		}
		return ""
	}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, f, append([]string{"proxy"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("the proxy exited %d:\n%s", code, errOut.String())
		}
	})
	var endpoint string
	waitFor(t, "the proxy to listen", 10*time.Second, func() bool {
		s := errOut.String()
		if i := strings.Index(s, "mcptask: proxying "); i >= 0 {
			endpoint, _, _ = strings.Cut(s[i+len("mcptask: proxying "):], " ")
			return true
		}
		return false
	})
	return endpoint, errOut
}

// viaProxy returns the ledger's records a proxied host created.
func viaProxy(t *testing.T, ledger string) []state.Record {
	t.Helper()
	f, err := state.Open(ledger).Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []state.Record
	for _, r := range f.Tasks {
		if r.Via == "proxy" {
			out = append(out, r)
		}
	}
	return out
}

// hostView is what a host saw of a call, without what differs between two runs (task ids,
// times, the server's address).
func hostView(t *testing.T, r cliResult) string {
	t.Helper()
	if r.Code != ExitOK {
		t.Fatalf("call: code %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	m := decodeJSON(t, r.Stdout)
	b, _ := json.Marshal(map[string]any{"type": m["type"], "status": m["status"], "era": m["era"], "result": m["result"]})
	// The result names its task (2025-11-25 related-task meta): the one id that must differ.
	id, _ := m["taskId"].(string)
	return strings.ReplaceAll(string(b), id, "<task>")
}

// statusesOf lists the distinct status lines of a call's progress output, in order.
func statusesOf(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.HasPrefix(f[0], "20") || f[2] == "progress" { // progress is no status
			continue
		}
		if s := f[2]; len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// TestProxyMcptaskHostHTTP puts the proxy between mcptask and the demo server over HTTP, in
// both eras: the host sees what it sees without the proxy, the ledger holds every task the
// host made, and after the host is killed mid-task `mcptask resume` finishes its task.
func TestProxyMcptaskHostHTTP(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			up, _ := demoServer(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 100 * time.Millisecond})
			ledger := filepath.Join(t.TempDir(), "proxy", "tasks.json")
			rec := filepath.Join(t.TempDir(), "host.ndjson")
			endpoint, proxyErr := startProxy(t, ledger, "--server", up, "--record", rec)

			call := func(server string) cliResult {
				return runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "host.json")},
					"call", "sleep", "--arg", "seconds=5", "--json", "--protocol", era, "--server", server)
			}
			direct, through := call(up), call(endpoint)
			if a, b := hostView(t, direct), hostView(t, through); a != b {
				t.Errorf("the host's view differs through the proxy:\ndirect  %s\nproxied %s", a, b)
			}
			if a, b := statusesOf(direct.Stderr), statusesOf(through.Stderr); strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("statuses differ: direct %v, proxied %v", a, b)
			}
			id := decodeJSON(t, through.Stdout)["taskId"]
			recs := viaProxy(t, ledger)
			if len(recs) != 1 || recs[0].TaskID != id || recs[0].Era != era || recs[0].Server.URL != up || recs[0].Status != "completed" {
				t.Fatalf("the proxy's ledger holds %+v, want task %v", recs, id)
			}

			// The host dies mid-task; its task is in the ledger, and resume finishes it.
			host := exec.Command(os.Args[0], "call", "sleep", "--arg", "seconds=60", "--protocol", era, "--server", endpoint)
			host.Env = append(os.Environ(), "MCPTASK_TEST_MAIN=1", "MCPTASK_STATE="+filepath.Join(t.TempDir(), "host2.json"), "GORACE=atexit_sleep_ms=0")
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the host's second task in the proxy's ledger", 20*time.Second, func() bool { return len(viaProxy(t, ledger)) == 2 })
			_ = host.Process.Kill()
			_ = host.Wait()
			var orphan state.Record
			for _, r := range viaProxy(t, ledger) {
				if r.TaskID != id {
					orphan = r
				}
			}
			if orphan.Unfinished(time.Now()) != true || orphan.Tool != "sleep" || (era == "2025-11-25") != (orphan.SessionID != "") {
				t.Fatalf("orphaned task record %+v", orphan)
			}
			list := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "list")
			if !strings.Contains(list.Stdout, "VIA") || !strings.Contains(list.Stdout, orphan.TaskID) || !strings.Contains(list.Stdout, "proxy") {
				t.Errorf("list does not show the orphan as created via the proxy:\n%s", list.Stdout)
			}
			lj := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "list", "--json")
			if !strings.Contains(lj.Stdout, `"via":"proxy"`) {
				t.Errorf("list --json lacks via: %s", lj.Stdout)
			}
			res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "resume", "--timeout", "60s")
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept 60 seconds") {
				t.Fatalf("resume: code %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
			}
			for _, want := range []string{"created by mcptask/", " completed done"} {
				if !strings.Contains(proxyErr.String(), want) {
					t.Errorf("the proxy's lines lack %q:\n%s", want, proxyErr.String())
				}
			}
			if strings.Contains(proxyErr.String(), "violation") {
				t.Errorf("violations between mcptask and the demo server:\n%s", proxyErr.String())
			}
			data, _ := os.ReadFile(rec)
			if n := strings.Count(string(data), `"direction":`); n == 0 || n != strings.Count(string(data), "\n") {
				t.Errorf("%d of %d record lines have a direction", n, strings.Count(string(data), "\n"))
			}
		})
	}
}

// TestProxyMcptaskHostStdio: mcptask runs `mcptask proxy --stdio` as its stdio server, which
// runs the demo server (keeping its tasks in a store). The host's view is the same as without
// the proxy; killed mid-task, the host leaves its task in the ledger, and resume starts the
// server again from the recorded command and finishes it.
func TestProxyMcptaskHostStdio(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			dir := t.TempDir()
			ledger, store := filepath.Join(dir, "proxy.json"), filepath.Join(dir, "store.json")
			server := demoStdio(t, "--step", "20ms", "--poll-interval", "100ms", "--store", store)
			proxyCmd := shellQuote(os.Args[0]) + " proxy --state " + shellQuote(ledger) + " --stdio " + shellQuote(server)
			call := func(stdio string) cliResult {
				return runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "host.json")},
					"call", "sleep", "--arg", "seconds=5", "--json", "--protocol", era, "--stdio", stdio)
			}
			direct, through := call(server), call(proxyCmd)
			if a, b := hostView(t, direct), hostView(t, through); a != b {
				t.Errorf("the host's view differs through the proxy:\ndirect  %s\nproxied %s", a, b)
			}
			if a, b := statusesOf(direct.Stderr), statusesOf(through.Stderr); len(a) < 2 || strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("statuses differ (or are too few to compare): direct %v, proxied %v", a, b)
			}
			id := decodeJSON(t, through.Stdout)["taskId"]
			if recs := viaProxy(t, ledger); len(recs) != 1 || recs[0].TaskID != id || recs[0].Status != "completed" || len(recs[0].Server.Command) == 0 {
				t.Fatalf("the proxy's ledger holds %+v, want task %v completed", recs, id)
			}

			host := exec.Command(os.Args[0], "call", "sleep", "--arg", "seconds=60", "--protocol", era, "--stdio", proxyCmd)
			host.Env = append(os.Environ(), "MCPTASK_STATE="+filepath.Join(t.TempDir(), "host2.json"), "XDG_STATE_HOME="+testStateHome(t))
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the host's second task in the proxy's ledger", 20*time.Second, func() bool { return len(viaProxy(t, ledger)) == 2 })
			_ = host.Process.Kill()
			_ = host.Wait()
			res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "resume", "--timeout", "60s")
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept 60 seconds") {
				t.Fatalf("resume: code %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestProxyMcptaskHostEverything puts the proxy between mcptask and the official reference
// server (@modelcontextprotocol/server-everything, which speaks 2025-11-25), over HTTP and
// stdio, with simulate-research-query, the reference server's task tool. The host sees the
// same result and the same statuses as without the proxy, the ledger holds the task, and after
// the host is killed mid-task `mcptask resume` finishes its task over HTTP. Over stdio it
// cannot: the one exception, as in TestProxyTSClients and docs/guide/proxy.md's "Debugging a host".
func TestProxyMcptaskHostEverything(t *testing.T) {
	index := everythingServer(t)
	t.Setenv("MCPTASK_TEST_MAIN", "1") // the stdio proxy is this test binary
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	const era = "2025-11-25"
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			ledger := filepath.Join(dir, "proxy.json")
			var direct, proxied []string
			var proxyErr *lockedBuffer
			if transport == "http" {
				url := startEverythingHTTP(t, index)
				endpoint, errOut := startProxy(t, ledger, "--server", url)
				direct, proxied, proxyErr = []string{"--server", url}, []string{"--server", endpoint}, errOut
			} else {
				server := "node " + shellQuote(index) + " stdio"
				direct = []string{"--stdio", server}
				proxied = []string{"--stdio", shellQuote(os.Args[0]) + " proxy --state " + shellQuote(ledger) + " --stdio " + shellQuote(server)}
			}
			callArgs := func(topic string, target []string) []string {
				return append([]string{"call", "simulate-research-query", "--arg", "topic=" + topic, "--timeout", "60s"}, target...)
			}
			call := func(target []string) cliResult {
				return runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "host.json")},
					append(callArgs("tasks", target), "--json")...)
			}
			a, b := call(direct), call(proxied)
			if va, vb := hostView(t, a), hostView(t, b); va != vb || !strings.Contains(vb, "Research Report") || !strings.Contains(vb, era) {
				t.Errorf("the host's view differs through the proxy (or is not a 2025-11-25 research report):\ndirect  %s\nproxied %s", va, vb)
			}
			if sa, sb := statusesOf(a.Stderr), statusesOf(b.Stderr); len(sa) < 2 || strings.Join(sa, " ") != strings.Join(sb, " ") {
				t.Errorf("statuses differ (or are too few to compare): direct %v, proxied %v", sa, sb)
			} else {
				t.Logf("statuses seen directly and through the proxy: %v", sb)
			}
			id := decodeJSON(t, b.Stdout)["taskId"]
			recs := viaProxy(t, ledger)
			if len(recs) != 1 || recs[0].TaskID != id || recs[0].Era != era || recs[0].Tool != "simulate-research-query" || recs[0].Status != "completed" {
				t.Fatalf("the proxy's ledger holds %+v, want task %v completed", recs, id)
			}

			// The host dies mid-task; its task is in the ledger.
			host := exec.Command(os.Args[0], callArgs("resume", proxied)...)
			host.Env = append(os.Environ(), "MCPTASK_STATE="+filepath.Join(t.TempDir(), "host2.json"), "XDG_STATE_HOME="+testStateHome(t))
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the host's second task in the proxy's ledger", 30*time.Second, func() bool { return len(viaProxy(t, ledger)) == 2 })
			_ = host.Process.Kill()
			_ = host.Wait()
			var orphan state.Record
			for _, r := range viaProxy(t, ledger) {
				if r.TaskID != id {
					orphan = r
				}
			}
			if !orphan.Unfinished(time.Now()) || orphan.Tool != "simulate-research-query" || (transport == "http") != (orphan.SessionID != "") {
				t.Fatalf("orphaned task record %+v", orphan)
			}
			res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "resume", "--timeout", "60s")
			if transport == "stdio" {
				// The one exception: the host owned the stdio server, which keeps its tasks in
				// memory only, so the task died with the host. Resume starts the server again,
				// finds the task unknown and says so (exit 6) instead of waiting forever.
				if res.Code != ExitExpired || !strings.Contains(res.Stderr, "no longer known") {
					t.Errorf("resume after the stdio server died: code %d\n%s", res.Code, res.Stderr)
				}
				return
			}
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "Research Report: resume") {
				t.Fatalf("resume: code %d\nstdout %.300s\nstderr %s", res.Code, res.Stdout, res.Stderr)
			}
			if strings.Contains(proxyErr.String(), "violation") {
				t.Errorf("violations between mcptask and the reference server:\n%s", proxyErr.String())
			}
		})
	}
}

// TestProxyPrintConfig rewrites a host's config entry to go through the proxy.
func TestProxyPrintConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{
		"local":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything","stdio"],"env":{"LOG":"1"},"cwd":"/srv"},
		"remote":{"url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`), 0o600)
	r := runCLI(t, t.Context(), nil, "proxy", "--config", cfg, "--print-config", "local", "--no-ledger")
	if r.Code != ExitOK {
		t.Fatalf("code %d: %s", r.Code, r.Stderr)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.MCPServers["local"]
	args := fmt.Sprint(e["args"])
	if e["command"] == nil || args != "[proxy --no-ledger --config "+cfg+" --stdio npx -y @modelcontextprotocol/server-everything stdio]" ||
		fmt.Sprint(e["env"]) != "map[LOG:1]" || e["cwd"] != "/srv" {
		t.Errorf("rewritten entry %v", e)
	}
	r = runCLI(t, t.Context(), nil, "proxy", "--config", cfg, "--print-config", "remote")
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "--listen") {
		t.Errorf("an HTTP entry without --listen: code %d %s", r.Code, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "proxy", "--config", cfg, "--print-config", "remote", "--listen", "127.0.0.1:7070")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, `"url":"http://127.0.0.1:7070/mcp"`) || !strings.Contains(r.Stdout, "${TOKEN}") ||
		!strings.Contains(r.Stderr, "mcptask proxy --server remote --listen 127.0.0.1:7070") {
		t.Errorf("HTTP entry: code %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, t.Context(), nil, "proxy", "--config", cfg, "--print-config", "nope")
	if r.Code != ExitUsage {
		t.Errorf("unknown name: code %d", r.Code)
	}
}

// TestProxyUsage: the flag combinations that make no sense are usage errors naming the fix.
func TestProxyUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "no server"},
		{[]string{"proxy", "--server", "http://127.0.0.1:1/mcp", "--host-stdio", "--listen", "127.0.0.1:0"}, "drop --listen"},
		{[]string{"proxy", "--stdio", "x", "--host-stdio"}, "give --server URL"},
		{[]string{"proxy", "--stdio", "x", "--on-input", "decline"}, "--bridge-tasks"},
		{[]string{"proxy", "--stdio", "x", "--bridge-tasks", "--on-input", "prompt"}, "no terminal"},
		{[]string{"proxy", "--stdio", "x", "--bridge-tasks", "--bridge-progress", "1ms"}, "at least 100ms"},
		{[]string{"proxy", "--server", "http://127.0.0.1:1/mcp", "--listen", "nonsense"}, "HOST:PORT"},
		{[]string{"proxy", "--server", "http://127.0.0.1:1/mcp", "--protocol", "2025-11-25"}, "negotiate"},
		{[]string{"proxy", "--stdio", "x", "--allowed-host", "a.example"}, "drop them"},
		{[]string{"proxy", "--server", "http://127.0.0.1:1/mcp", "--allowed-origin", "app.example"}, "want scheme://host[:port]"},
		{[]string{"proxy", "--server", "http://127.0.0.1:1/mcp", "--allowed-host", "a.example/path"}, "want a host name"},
	} {
		r := runCLI(t, t.Context(), nil, c.args...)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: code %d stderr %s", c.args, r.Code, r.Stderr)
		}
	}
}

var _ = bufio.NewReader

// TestProxyLiveView: on a terminal the proxy shows the live view; a task a host creates
// appears in it with its status, and q stops the proxy (exit 0) with the task in the ledger.
func TestProxyLiveView(t *testing.T) {
	up, _ := demoServer(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	typeKeys, out, errOut, code := runOnTerminal(t, ctx, "proxy", "--server", up)
	var endpoint string
	waitFor(t, "the proxy to listen", 10*time.Second, func() bool {
		_, rest, ok := strings.Cut(errOut.String(), "mcptask: proxying ")
		endpoint, _, _ = strings.Cut(rest, " ")
		return ok
	})
	waitFor(t, "the view", 10*time.Second, func() bool { return strings.Contains(out.String(), "no tasks yet") })
	r := runCLI(t, ctx, map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "host.json")}, "call", "sleep", "--arg", "seconds=3", "--json", "--server", endpoint)
	id, _ := decodeJSON(t, r.Stdout)["taskId"].(string)
	defer func() {
		if t.Failed() {
			t.Logf("stdout %q", out.String()[max(0, len(out.String())-3000):])
		}
	}()
	waitFor(t, "the task in the view", 10*time.Second, func() bool {
		s := out.String()
		return strings.Contains(s, id[:11]) && strings.Contains(s, "✓ completed") && strings.Contains(s, "by mcptask/")
	})
	typeKeys("q")
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d\n%s", c, errOut.String())
	}
	if strings.Contains(errOut.String(), "created by") {
		t.Errorf("plain event lines on stderr while the view runs:\n%s", errOut.String())
	}
	if recs := viaProxy(t, testLedger(t)); len(recs) != 1 || recs[0].TaskID != id {
		t.Errorf("ledger %+v", recs)
	}
}

// TestProxyNoLedger: --no-ledger keeps the proxy away from the ledger; everything else works.
func TestProxyNoLedger(t *testing.T) {
	up, _ := demoServer(t, demo.Options{})
	ledger := filepath.Join(t.TempDir(), "proxy.json")
	endpoint, errOut := startProxy(t, ledger, "--server", up, "--no-ledger")
	r := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": filepath.Join(t.TempDir(), "host.json")}, "call", "sleep", "--arg", "seconds=2", "--server", endpoint)
	if r.Code != ExitOK {
		t.Fatalf("call: %d %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(ledger); !os.IsNotExist(err) {
		t.Errorf("the proxy wrote a ledger with --no-ledger (%v)", err)
	}
	waitFor(t, "the task's lines", 5*time.Second, func() bool { return strings.Contains(errOut.String(), " completed done") })
}
