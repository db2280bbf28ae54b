package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// tsHostScript finds a Node host driver of testdata/interop and the official TypeScript
// packages it runs on. Like the other interop tests it skips outside CI when they are missing.
func tsHostScript(t *testing.T, name string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("interop: %s (CI must run the interop tests; .ci/run installs them)", msg)
		}
		t.Skipf("interop: %s; install it with: npm ci --prefix testdata/interop", msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	dir, _ := filepath.Abs("../testdata/interop")
	for _, p := range []string{"node_modules/@modelcontextprotocol/sdk/package.json", "node_modules/@modelcontextprotocol/client/package.json", "node_modules/@modelcontextprotocol/ext-tasks/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			skip("%s is missing", p)
		}
	}
	return filepath.Join(dir, name)
}

// tsHost is one run of a Node host driver: the JSON events it printed, as they come.
type tsHost struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	mu     sync.Mutex
	events []map[string]any
	done   chan struct{}
}

func startTSHost(t *testing.T, script string, args ...string) *tsHost {
	t.Helper()
	h := &tsHost{cmd: exec.Command("node", append([]string{script}, args...)...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	h.cmd.Stderr = h.stderr
	out, _ := h.cmd.StdoutPipe()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				h.mu.Lock()
				h.events = append(h.events, ev)
				h.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { _ = h.cmd.Process.Kill(); <-h.done; _ = h.cmd.Wait() })
	return h
}

func (h *tsHost) find(kind string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.events {
		if ev["event"] == kind {
			return ev
		}
	}
	return nil
}

// finish waits for the host to end and returns what it saw: the outcome (task ids replaced)
// and the distinct statuses in order.
func (h *tsHost) finish(t *testing.T) (string, []string) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("the host did not finish\n%s", h.stderr.String())
	}
	_ = h.cmd.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	var statuses []string
	outcome, id := "", ""
	for _, ev := range h.events {
		switch ev["event"] {
		case "created":
			id, _ = ev["taskId"].(string)
		case "task":
			if s, _ := ev["status"].(string); len(statuses) == 0 || statuses[len(statuses)-1] != s {
				statuses = append(statuses, s)
			}
		case "outcome":
			b, _ := json.Marshal(map[string]any{"status": ev["status"], "result": ev["result"], "error": ev["error"]})
			outcome = string(b)
		}
	}
	if outcome == "" || id == "" {
		t.Fatalf("the host saw no task or no outcome: %v\n%s", h.events, h.stderr.String())
	}
	return strings.ReplaceAll(outcome, id, "<task>"), statuses
}

// TestProxyTSClients drives the official TypeScript clients through the proxy: the SDK v1
// (MCP 2025-11-25) and the client v2 with ext-tasks (2026-07-28 where the server speaks it),
// against the demo server and the reference server, over HTTP and stdio. Each run compares
// the host's view with and without the proxy, checks the ledger holds the task, then kills a
// host mid-task and shows `mcptask resume` finishing what it left.
func TestProxyTSClients(t *testing.T) {
	v1, v2 := tsHostScript(t, "proxy-host-v1.mjs"), tsHostScript(t, "proxy-host-v2.mjs")
	everything := everythingServer(t)
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	self := os.Args[0]
	type server struct {
		name, tool, args, long string
		extra                  []string // driver flags this server needs
	}
	// Demo steps of 100 ms, polled every 100 ms: long enough for every host to see the task
	// working before it completes, so the status sequences can be compared.
	demoSrv := server{name: "demo", tool: "sleep", args: `{"seconds":4}`, long: `{"seconds":30}`}
	everySrv := server{name: "everything", tool: "simulate-research-query", args: `{"topic":"tasks"}`, long: `{"topic":"resume"}`}
	for _, c := range []struct {
		client, script, transport string
		srv                       server
		era                       string
	}{
		{"sdk-v1", v1, "http", demoSrv, "2025-11-25"},
		{"sdk-v1", v1, "stdio", demoSrv, "2025-11-25"},
		{"sdk-v1", v1, "http", everySrv, "2025-11-25"},
		{"sdk-v1", v1, "stdio", everySrv, "2025-11-25"},
		{"client-v2", v2, "http", demoSrv, "2026-07-28"},
		{"client-v2", v2, "stdio", demoSrv, "2026-07-28"},
		{"client-v2", v2, "http", everySrv, "2025-11-25"},
		{"client-v2", v2, "stdio", everySrv, "2025-11-25"},
	} {
		t.Run(c.client+"/"+c.transport+"/"+c.srv.name, func(t *testing.T) {
			// The stdio proxies the hosts start sign their records with the key resume checks.
			t.Setenv("XDG_STATE_HOME", testStateHome(t))
			dir := t.TempDir()
			ledger := filepath.Join(dir, "proxy.json")
			var flags []string
			// direct and proxied say how a host reaches the server without and with the proxy.
			var direct, proxied []string
			switch {
			case c.transport == "http" && c.srv.name == "demo":
				srv, err := demo.New(demo.Options{StepDelay: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				hs := httptest.NewServer(specChecked(t, srv.Handler(), false))
				t.Cleanup(func() { hs.Close(); srv.Close() })
				endpoint, _ := startProxy(t, ledger, "--server", hs.URL+"/mcp")
				direct, proxied = []string{"--http", hs.URL + "/mcp"}, []string{"--http", endpoint}
			case c.transport == "http":
				url := startEverythingHTTP(t, everything)
				endpoint, _ := startProxy(t, ledger, "--server", url)
				direct, proxied = []string{"--http", url}, []string{"--http", endpoint}
			default:
				argv := []string{"node", everything, "stdio"}
				if c.srv.name == "demo" {
					argv = demoStdioArgv(t, false, "--step", "100ms", "--poll-interval", "100ms", "--store", filepath.Join(dir, "store.json"))
				}
				cmdline := strings.Join(quoteAll(argv), " ")
				viaArgv := []string{self, "proxy", "--state", ledger, "--stdio", cmdline}
				d, _ := json.Marshal(argv)
				p, _ := json.Marshal(viaArgv)
				direct, proxied = []string{"--stdio", string(d)}, []string{"--stdio", string(p)}
			}
			run := func(target []string, args string) *tsHost {
				return startTSHost(t, c.script, append(append(slices.Clone(target), "--tool", c.srv.tool, "--args", args), flags...)...)
			}
			// The same call without and with the proxy, side by side.
			a, b := run(direct, c.srv.args), run(proxied, c.srv.args)
			outA, stA := a.finish(t)
			outB, stB := b.finish(t)
			if outA != outB || strings.Join(stA, " ") != strings.Join(stB, " ") {
				t.Errorf("the host's view differs through the proxy:\ndirect  %s %v\nproxied %s %v", outA, stA, outB, stB)
			}
			if conn := b.find("connected"); conn == nil || (conn["era"] == "modern") != (c.era == "2026-07-28") {
				t.Errorf("connected %v, want era %s", conn, c.era)
			}
			id, _ := b.find("created")["taskId"].(string)
			recs := viaProxy(t, ledger)
			if len(recs) != 1 || recs[0].TaskID != id || recs[0].Era != c.era || recs[0].Tool != c.srv.tool || recs[0].Status != "completed" {
				t.Fatalf("the proxy's ledger holds %+v, want task %s (%s) completed", recs, id, c.era)
			}

			// A host killed mid-task leaves its task in the ledger; resume finishes it.
			h := run(proxied, c.srv.long)
			waitFor(t, "the host's task", 30*time.Second, func() bool { return h.find("created") != nil })
			_ = h.cmd.Process.Kill()
			<-h.done
			orphan := h.find("created")["taskId"]
			if recs := viaProxy(t, ledger); len(recs) != 2 || recs[1].TaskID != orphan || !recs[1].Unfinished(time.Now()) {
				t.Fatalf("after the kill the ledger holds %+v, want %v unfinished", recs, orphan)
			}
			res := runCLI(t, t.Context(), map[string]string{"MCPTASK_STATE": ledger}, "resume", "--timeout", "90s")
			if c.transport == "stdio" && c.srv.name == "everything" {
				// The one exception to "resume finishes what a killed host left": over stdio
				// the host owns the server process, and the reference server keeps its tasks
				// in memory only, so the task died with the host. Resume restarts the server,
				// finds the task unknown and exits 6 (expired) saying so, instead of waiting
				// forever. Every other case here (and the demo over stdio, which keeps its
				// tasks in --store) must finish the task.
				if res.Code != ExitExpired || !strings.Contains(res.Stderr, "no longer known") {
					t.Errorf("resume after the stdio server died: code %d\n%s", res.Code, res.Stderr)
				}
				return
			}
			if res.Code != ExitOK {
				t.Fatalf("resume: code %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
			}
		})
	}
}
