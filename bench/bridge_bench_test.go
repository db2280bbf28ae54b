package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Issue 22's figures: what `mcptask proxy --bridge-tasks`, `--host-stdio` and `--stdio --listen`
// cost. See README.md for the numbers and how to run them.

// startProxyArgs runs `mcptask proxy args...` (the real binary) and returns its endpoint.
func startProxyArgs(b *testing.B, bin string, args ...string) string {
	b.Helper()
	cmd := exec.Command(bin, append([]string{"proxy"}, args...)...)
	cmd.Env = append(os.Environ(), "MCPTASK_NO_TUI=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "mcptask: proxying "); ok {
			endpoint, _, _ := strings.Cut(rest, " ")
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return endpoint
		}
	}
	b.Fatal("the proxy did not start")
	return ""
}

// legacyHost is a task-unaware 2025-11-25 host on one session: initialize with no
// capabilities, then plain requests.
func legacyHost(b *testing.B, url string) (*rpc.HTTPTransport, http.Header) {
	b.Helper()
	tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	init := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`0`), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-host","version":"1"}}`)}
	if _, err := tr.RoundTrip(context.Background(), init, http.Header{}); err != nil {
		b.Fatal(err)
	}
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if err := tr.Send(context.Background(), &rpc.Message{JSONRPC: "2.0", Method: "notifications/initialized"}, hdr); err != nil {
		b.Fatal(err)
	}
	return tr, hdr
}

// BenchmarkBridgeRoundTrips counts the requests the server sees for one bridged call: a plain
// tools/call of a task-unaware host, which the proxy makes as a task and follows. Target: at
// most one round trip beyond the task's own (its tools/call, its polls, its tasks/result).
// The one extra is the proxy's tools/list, once per proxy, when the host never listed the
// tools through it.
func BenchmarkBridgeRoundTrips(b *testing.B) {
	bin := buildMcptask(b)
	d, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			seen[m.Method]++
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		d.Handler().ServeHTTP(w, r)
	})
	hs := httptest.NewServer(count)
	b.Cleanup(func() { hs.Close(); d.Close() })
	endpoint := startProxyArgs(b, bin, "--server", hs.URL+"/mcp", "--bridge-tasks", "--state", filepath.Join(b.TempDir(), "tasks.json"))
	tr, hdr := legacyHost(b, endpoint)
	mu.Lock()
	clear(seen)
	mu.Unlock()
	id := 0
	for b.Loop() {
		id++
		call := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(itoa(id)), Method: "tools/call",
			Params: json.RawMessage(`{"name":"sleep","arguments":{"seconds":5}}`)}
		resp, err := tr.RoundTrip(context.Background(), call, hdr)
		if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), "slept 5 seconds") {
			b.Fatalf("bridged call: %v %v %s", err, resp.Error, resp.Result)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n := float64(id)
	total := 0
	for _, c := range seen {
		total += c
	}
	own := seen["tools/call"] + seen["tasks/get"] + seen["tasks/result"]
	b.ReportMetric(float64(total)/n, "server-requests/op")
	b.ReportMetric(float64(seen["tasks/get"])/n, "polls/op")
	b.ReportMetric(float64(total-own)/n, "beyond-the-task/op")
	b.ReportMetric(float64(total-own), "beyond-the-task-total")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// lineHost speaks newline-delimited JSON-RPC to a child process (a stdio host's view).
type lineHost struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func startLineHost(b *testing.B, argv ...string) *lineHost {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MCPTASK_NO_TUI=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &lineHost{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (h *lineHost) roundTrip(b *testing.B, msg string) time.Duration {
	start := time.Now()
	if _, err := io.WriteString(h.in, msg+"\n"); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := h.out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`) {
			return time.Since(start)
		}
	}
}

const (
	benchInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-host","version":"1"}}}`
	benchEcho = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
)

// reportMedians reports the medians of both sides and what the bridge adds.
func reportMedians(b *testing.B, direct, bridged []time.Duration) {
	us := func(t time.Duration) float64 { return float64(t.Nanoseconds()) / 1000 }
	b.ReportMetric(us(percentile(direct, 0.5)), "direct-p50-µs")
	b.ReportMetric(us(percentile(bridged, 0.5)), "bridged-p50-µs")
	b.ReportMetric(us(percentile(bridged, 0.5)-percentile(direct, 0.5)), "added-p50-µs")
	b.ReportMetric(loadAvg(), "load-avg")
}

// BenchmarkHostStdioMessage: a stdio host reaching an HTTP server through `proxy --host-stdio`,
// per message (a tools/call of echo on one 2025-11-25 session), against an HTTP client
// reaching the same server directly. Target: at most 0.3 ms added at the median.
func BenchmarkHostStdioMessage(b *testing.B) {
	bin := buildMcptask(b)
	up := startDemo(b)
	host := startLineHost(b, bin, "proxy", "--host-stdio", "--server", up, "--state", filepath.Join(b.TempDir(), "tasks.json"))
	host.roundTrip(b, benchInit)
	_, _ = io.WriteString(host.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	direct, hdr := legacyHost(b, up)
	echo := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`)}
	send := func() time.Duration {
		start := time.Now()
		if _, err := direct.RoundTrip(context.Background(), echo, hdr); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 200 {
		send()
		host.roundTrip(b, benchEcho)
	}
	var d, p []time.Duration
	for b.Loop() {
		d = append(d, send())
		p = append(p, host.roundTrip(b, benchEcho))
	}
	reportMedians(b, d, p)
}

// BenchmarkStdioListenMessage: an HTTP host reaching a stdio server through `proxy --stdio
// --listen`, per message, against a stdio client reaching the same server directly. Target: at
// most 0.3 ms added at the median.
func BenchmarkStdioListenMessage(b *testing.B) {
	bin := buildMcptask(b)
	endpoint := startProxyArgs(b, bin, "--stdio", bin+" demo serve --stdio", "--listen", "127.0.0.1:0", "--state", filepath.Join(b.TempDir(), "tasks.json"))
	host, hdr := legacyHost(b, endpoint)
	direct := startLineHost(b, bin, "demo", "serve", "--stdio")
	direct.roundTrip(b, benchInit)
	_, _ = io.WriteString(direct.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	echo := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`)}
	send := func() time.Duration {
		start := time.Now()
		if _, err := host.RoundTrip(context.Background(), echo, hdr); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 200 {
		send()
		direct.roundTrip(b, benchEcho)
	}
	var d, p []time.Duration
	for b.Loop() {
		d = append(d, direct.roundTrip(b, benchEcho))
		p = append(p, send())
	}
	reportMedians(b, d, p)
}
