package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// bareConfig is what the bare poller replays: the tasks/get requests internal/rpc would send,
// one per task, at one interval, for a while.
type bareConfig struct {
	Interval time.Duration `json:"interval"`
	Duration time.Duration `json:"duration"`
	Requests []bareRequest `json:"requests"`
}

type bareRequest struct {
	URL    string      `json:"url"`
	TaskID string      `json:"taskId"`
	Body   []byte      `json:"body"`
	Header http.Header `json:"header"`
}

// barePoller is issue 7's baseline, run as a child process so that its CPU is its own: the
// same tasks/get requests as `mcptask resume`, on the same schedule (first polls spread over
// one interval, then one per interval, due times on the same 25 ms ticks), through a bare
// net/http client with the same pool, reading each answer and nothing more. It prints how
// many polls it made.
func barePoller(configPath string) int {
	cfg, err := readBareConfig(configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hc := &http.Client{Transport: rpc.NewPool(false, 0)}
	deadline := time.Now().Add(cfg.Duration)
	var polls, failures atomic.Int64
	var wg sync.WaitGroup
	for _, r := range cfg.Requests {
		wg.Go(func() {
			next := time.Now().Add(time.Duration(rand.Int64N(int64(cfg.Interval))))
			for {
				next = alignTick(next, 25*time.Millisecond)
				if next.After(deadline) {
					return
				}
				time.Sleep(time.Until(next)) // the load's own schedule, not a wait on a condition
				sent := time.Now()
				req, _ := http.NewRequest(http.MethodPost, r.URL, bytes.NewReader(r.Body))
				req.Header = r.Header.Clone()
				if resp, err := hc.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					polls.Add(1)
				} else {
					failures.Add(1)
				}
				next = sent.Add(cfg.Interval)
			}
		})
	}
	wg.Wait()
	fmt.Println(polls.Load(), failures.Load())
	return 0
}

// readBareConfig reads the replay a child process is given.
func readBareConfig(path string) (bareConfig, error) {
	var cfg bareConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, err
	}
	err = json.Unmarshal(data, &cfg)
	return cfg, err
}

// alignTick rounds t up to a multiple of tick on the wall clock, as mcptask's polls are.
func alignTick(t time.Time, tick time.Duration) time.Time {
	if r := time.Duration(t.UnixNano() % int64(tick)); r != 0 {
		return t.Add(tick - r)
	}
	return t
}
