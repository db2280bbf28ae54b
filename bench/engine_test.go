package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// engineFollower is the engine alone, run as a child process so that its CPU is its own: the
// follow engine over the same tasks as the bare poller (bare_poller_test.go), for as long, with
// what `mcptask resume --no-push` gives it (one connection pool per server, one connection per
// server, the ledger's records) and no sink but a counter. It prints how many polls it made.
func engineFollower(configPath string) int {
	cfg, err := readBareConfig(configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var polls, failures atomic.Int64
	e := follow.New(follow.Options{NoPush: true, Timeout: cfg.Duration}, follow.SinkFunc(func(ev follow.Event) {
		switch {
		case ev.Kind == follow.KindStatus || ev.Kind == follow.KindPolled:
			polls.Add(1)
		case ev.Kind == follow.KindError:
			failures.Add(1)
		}
	}))
	byURL := map[string][]follow.Target{}
	var urls []string
	for _, r := range cfg.Requests {
		if byURL[r.URL] == nil {
			urls = append(urls, r.URL)
		}
		rec := &state.Record{TaskID: r.TaskID, Status: "working", PollInterval: state.Millis(cfg.Interval.Milliseconds())}
		byURL[r.URL] = append(byURL[r.URL], follow.Target{ID: r.TaskID, Record: rec})
	}
	for _, u := range urls {
		tr, err := rpc.NewHTTPTransport(u, rpc.HTTPOptions{HTTPClient: &http.Client{Transport: rpc.NewPool(false, 0)}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c := rpc.NewClient(tr, rpc.ClientOptions{Protocol: rpc.VersionModern, Info: rpc.Implementation{Name: "mcptask", Version: "bench"}})
		c.Assume(rpc.EraModern, "")
		e.Server(u, u).Follow(c, byURL[u]...)
	}
	e.Run(context.Background())
	fmt.Println(polls.Load(), failures.Load())
	return 0
}

// BenchmarkEngineVsBare is issue 13's check of the engine alone: the follow engine (a child
// process, no cobra, no sink but a counter) and the bare net/http poller of issue 7 (another
// child) follow the same 1,000 working tasks on 3 demo servers at a 1 s interval, at the same
// time for 30 s, so that whatever else loads the machine loads both. x-bare is the engine's
// CPU per poll over the bare poller's. Run with -benchtime 1x.
func BenchmarkEngineVsBare(b *testing.B) {
	const tasks, servers, watch = 1000, 3, 30 * time.Second
	recs := createForever(b, startDemos(b, servers), tasks)
	for b.Loop() {
		cfg := bareConfigFor(b, recs, watch)
		path := filepath.Join(b.TempDir(), "bare.json")
		data, _ := json.Marshal(cfg)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		var engine, bare childRun
		wg.Go(func() { engine = runChild(b, "BENCH_ENGINE="+path) })
		wg.Go(func() { bare = runChild(b, "BENCH_BARE_POLLER="+path) })
		wg.Wait()
		ePer, bPer := engine.cpu/time.Duration(engine.polls), bare.cpu/time.Duration(bare.polls)
		b.ReportMetric(float64(engine.polls), "engine-polls")
		b.ReportMetric(float64(bare.polls), "bare-polls")
		b.ReportMetric(float64(ePer.Microseconds()), "engine-µs/poll")
		b.ReportMetric(float64(bPer.Microseconds()), "bare-µs/poll")
		b.ReportMetric(float64(ePer)/float64(bPer), "x-bare")
		b.ReportMetric(float64(engine.rss)/1024, "engine-MB-rss")
	}
}

// childRun is what a child process reported and cost.
type childRun struct {
	polls, failures int
	cpu             time.Duration
	rss             int64 // KiB
}

// runChild runs this test binary as one of its helper processes (env selects which) and
// returns its count of polls and its rusage.
func runChild(b *testing.B, env string) childRun {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Errorf("%s: %v\n%s", env, err, tail(stderr.String()))
		return childRun{polls: 1}
	}
	var r childRun
	if _, err := fmt.Sscan(string(out), &r.polls, &r.failures); err != nil || r.polls == 0 || r.failures > 0 {
		b.Errorf("%s: %d polls, %d failures (%v): %s", env, r.polls, r.failures, err, out)
		r.polls = max(r.polls, 1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r.cpu, r.rss = time.Duration(ru.Utime.Nano()+ru.Stime.Nano()), ru.Maxrss
	return r
}

// createForever creates n tasks of the demo's forever tool, spread over urls, and returns their
// ledger records.
func createForever(b *testing.B, urls []string, n int) []state.Record {
	b.Helper()
	var recs []state.Record
	for i := range n {
		url := urls[i%len(urls)]
		tr, _ := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
		c := rpc.NewClient(tr, rpc.ClientOptions{Protocol: rpc.VersionModern, Info: rpc.Implementation{Name: "bench", Version: "1"}})
		c.Assume(rpc.EraModern, "")
		res, err := c.CallTool(context.Background(), rpc.CallParams{Name: "forever"})
		tr.Close()
		if err != nil || res.Task == nil {
			b.Fatalf("create task %d: %v", i, err)
		}
		recs = append(recs, state.Record{TaskID: res.Task.TaskID, Server: state.Server{URL: url}, Era: "2026-07-28", Protocol: "2026-07-28",
			Tool: "forever", CreatedAt: res.Task.CreatedAt, Status: "working", PollInterval: 1000})
	}
	return recs
}

// bareConfigFor is the bare poller's replay of the tasks/get requests of recs, for d.
func bareConfigFor(b *testing.B, recs []state.Record, d time.Duration) bareConfig {
	body, hdr := captureTasksGet(b, recs[0].TaskID)
	cfg := bareConfig{Interval: time.Second, Duration: d}
	for _, r := range recs {
		h := hdr.Clone()
		h.Set("Mcp-Name", r.TaskID)
		cfg.Requests = append(cfg.Requests, bareRequest{URL: r.Server.URL, TaskID: r.TaskID, Header: h,
			Body: bytes.ReplaceAll(body, []byte(recs[0].TaskID), []byte(r.TaskID))})
	}
	return cfg
}
