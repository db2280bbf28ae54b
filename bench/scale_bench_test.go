package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/state"
)

// serverStats is what a benchmark's demo server measures of its client: connections open at
// once, and when each task was polled. Only connections that carried MCP requests count, so
// the benchmark's own stats requests never do.
type serverStats struct {
	mu       sync.Mutex
	mcp      map[string]bool // remote addresses of open connections that carried MCP
	maxOpen  int
	polls    map[string][]time.Time
	recordOn bool
}

func newServerStats() *serverStats {
	return &serverStats{polls: map[string][]time.Time{}, mcp: map[string]bool{}}
}

func (s *serverStats) connState(c net.Conn, st http.ConnState) {
	if st == http.StateClosed || st == http.StateHijacked {
		s.mu.Lock()
		delete(s.mcp, c.RemoteAddr().String())
		s.mu.Unlock()
	}
}

func (s *serverStats) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stats" {
			s.mu.Lock()
			defer s.mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"maxOpen": s.maxOpen, "polls": s.polls})
			return
		}
		if r.URL.Path == "/stats/start" {
			s.mu.Lock()
			s.recordOn, s.maxOpen, s.polls = true, len(s.mcp), map[string][]time.Time{}
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		if !s.mcp[r.RemoteAddr] {
			s.mcp[r.RemoteAddr] = true
			s.maxOpen = max(s.maxOpen, len(s.mcp))
		}
		s.mu.Unlock()
		if r.Header.Get("Mcp-Method") == "tasks/get" {
			id := r.Header.Get("Mcp-Name")
			s.mu.Lock()
			if s.recordOn {
				s.polls[id] = append(s.polls[id], time.Now())
			}
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// BenchmarkResume1000 is issue 7's scale target: `mcptask resume` (the real binary) over 1,000
// working tasks spread over 3 demo servers (child processes) polling at 1 s, for 30 s. It
// reports the client's CPU as a share of one core, its peak resident memory, the most
// connections any server saw open at once, and the worst mean and worst single gap between
// polls of one task. Then a bare net/http poller sends the same requests on the same schedule
// for as long, and the client's CPU per poll is compared with it (x-bare). Run with
// -benchtime 1x.
func BenchmarkResume1000(b *testing.B) {
	const tasks, servers, watch = 1000, 3, 30 * time.Second
	bin := buildBinary(b)
	urls := startDemos(b, servers)
	ledger := filepath.Join(b.TempDir(), "tasks.json")
	recs := createForever(b, urls, tasks)
	if err := state.Open(ledger).Update(func(f *state.File) error { f.Tasks = recs; return nil }); err != nil {
		b.Fatal(err)
	}
	for _, u := range urls {
		resp, err := statsClient.Get(strings.TrimSuffix(u, "/mcp") + "/stats/start")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	var clientCPU time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "resume", "--timeout", watch.String(), "--no-push") // the polling path is what is measured
		cmd.Env = append(os.Environ(), "MCPTASK_STATE="+ledger)
		if p := os.Getenv("BENCH_CPUPROFILE"); p != "" {
			cmd.Env = append(cmd.Env, "MCPTASK_CPUPROFILE="+p)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdout = io.Discard
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 124 {
			b.Fatalf("resume: %v (want exit 124 at the timeout)\n%s", err, tail(stderr.String()))
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		clientCPU = cpu
		b.ReportMetric(100*float64(cpu)/float64(wall), "%cpu")
		b.ReportMetric(float64(ru.Maxrss)/1024, "MB-rss")
	}
	maxConns, worstMean, worstGap, polled, polls := 0, time.Duration(0), time.Duration(0), 0, 0
	for _, u := range urls {
		resp, err := statsClient.Get(strings.TrimSuffix(u, "/mcp") + "/stats")
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			MaxOpen int                    `json:"maxOpen"`
			Polls   map[string][]time.Time `json:"polls"`
		}
		_ = json.NewDecoder(bufio.NewReader(resp.Body)).Decode(&st)
		resp.Body.Close()
		maxConns = max(maxConns, st.MaxOpen)
		for _, ts := range st.Polls {
			polls += len(ts)
			sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
			if len(ts) < 3 {
				continue
			}
			polled++
			for i := 1; i < len(ts); i++ {
				worstGap = max(worstGap, ts[i].Sub(ts[i-1]))
			}
			worstMean = max(worstMean, ts[len(ts)-1].Sub(ts[0])/time.Duration(len(ts)-1))
		}
	}
	b.ReportMetric(float64(maxConns), "max-conns/server")
	b.ReportMetric(float64(worstMean.Milliseconds()), "worst-mean-gap-ms")
	b.ReportMetric(float64(worstGap.Milliseconds()), "worst-gap-ms")
	b.ReportMetric(float64(polled), "tasks-polled")

	// Side by side: a bare net/http poller sends the same requests on the same schedule.
	clientPerPoll := clientCPU / time.Duration(max(polls, 1))
	barePerPoll := runBarePoller(b, recs, watch)
	b.ReportMetric(float64(clientPerPoll.Microseconds()), "client-µs/poll")
	b.ReportMetric(float64(barePerPoll.Microseconds()), "bare-µs/poll")
	b.ReportMetric(float64(clientPerPoll)/float64(barePerPoll), "x-bare")
	fmt.Fprintf(os.Stderr, "resume over %d tasks on %d servers for %s\n", tasks, servers, watch)
}

// buildBinary builds mcptask for a benchmark that runs it as users do.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "mcptask")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startDemos starts n demo servers, each its own process, and returns their URLs.
func startDemos(b *testing.B, n int) []string {
	b.Helper()
	var urls []string
	for range n {
		urls = append(urls, startDemo(b))
	}
	return urls
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// statsClient reads a server's stats without keeping a connection open, so it is not counted
// among the client's.
var statsClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// runBarePoller runs the bare poller (bare_poller_test.go) over the tasks of recs for d and
// returns its CPU per poll.
func runBarePoller(b *testing.B, recs []state.Record, d time.Duration) time.Duration {
	b.Helper()
	polls, cpu := barePollerRun(b, recs, d)
	return cpu / time.Duration(polls)
}

// barePollerRun runs the bare poller over the tasks of recs (each polled at its record's
// server URL) for d and returns how many polls it made and the CPU it used.
func barePollerRun(b *testing.B, recs []state.Record, d time.Duration) (int, time.Duration) {
	b.Helper()
	cfg := bareConfigFor(b, recs, d)
	path := filepath.Join(b.TempDir(), "bare.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	r := runChild(b, "BENCH_BARE_POLLER="+path)
	return r.polls, r.cpu
}
