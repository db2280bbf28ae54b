package bench

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcptask/mcptask/internal/state"
)

// BenchmarkLiveVsPlain1000 is issue 13's target: what a person watching 1,000 tasks on a
// terminal pays against what a CI job pays for the same tasks. The real binary resumes 1,000
// working tasks (the forever tool) on 3 demo servers (child processes) at a 1 s interval,
// twice at the same time for 30 s, so that whatever else loads the machine loads both: once in
// the live view, under a pseudo-terminal of 120x40 with colour, until q detaches it; once
// plain, its progress and results going nowhere, until --timeout ends it. Both poll only
// (--no-push): the polling path is what is measured. It reports each run's CPU as a share of
// one core and its peak resident memory, their ratios, and how many Views the live view drew
// per frame of its 15 a second (MCPTASK_DEBUG_LOG). Run with -benchtime 1x;
// BENCH_LIVE_CPUPROFILE and BENCH_PLAIN_CPUPROFILE name files for the two runs' CPU profiles;
// BENCH_TASKS=N follows N tasks for 10 s instead (the fixed cost of the view, with a few).
func BenchmarkLiveVsPlain1000(b *testing.B) {
	const servers = 3
	tasks, watch := 1000, 30*time.Second
	if n, err := strconv.Atoi(os.Getenv("BENCH_TASKS")); err == nil {
		tasks, watch = n, 10*time.Second
	}
	bin := buildBinary(b)
	recs := createForever(b, startDemos(b, servers), tasks)
	for b.Loop() {
		liveLedger, plainLedger := filepath.Join(b.TempDir(), "live.json"), filepath.Join(b.TempDir(), "plain.json")
		for _, p := range []string{liveLedger, plainLedger} {
			if err := state.Open(p).Update(func(f *state.File) error { f.Tasks = recs; return nil }); err != nil {
				b.Fatal(err)
			}
		}
		viewLog := filepath.Join(b.TempDir(), "view.log")
		var wg sync.WaitGroup
		var live, plain procRun
		wg.Go(func() { live = runLive(b, bin, liveLedger, viewLog, watch) })
		wg.Go(func() { plain = runPlain(b, bin, plainLedger, watch) })
		wg.Wait()
		b.ReportMetric(100*live.share(), "live-%cpu")
		b.ReportMetric(100*plain.share(), "plain-%cpu")
		b.ReportMetric(live.share()/plain.share(), "x-cpu")
		b.ReportMetric(float64(live.rss)/1024, "live-MB")
		b.ReportMetric(float64(plain.rss)/1024, "plain-MB")
		b.ReportMetric(float64(live.rss)/float64(plain.rss), "x-rss")
		views, frames := viewCount(b, viewLog)
		b.ReportMetric(float64(views)/float64(frames), "views/frame")
		b.ReportMetric(float64(live.out)/1024/live.wall.Seconds(), "live-KB/s-drawn")
	}
}

// procRun is what one run of the binary cost.
type procRun struct {
	cpu, wall time.Duration
	rss       int64 // KiB
	out       int64 // bytes written to the terminal
}

func (p procRun) share() float64 { return float64(p.cpu) / float64(p.wall) }

func usage(cmd *exec.Cmd, wall time.Duration) procRun {
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return procRun{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), wall: wall, rss: ru.Maxrss}
}

// runLive runs `mcptask resume` in the live view under a pseudo-terminal for d, then types q.
func runLive(b *testing.B, bin, ledger, viewLog string, d time.Duration) procRun {
	cmd := exec.Command(bin, "resume", "--no-push")
	cmd.Env = append(os.Environ(), "MCPTASK_STATE="+ledger, "MCPTASK_DEBUG_LOG="+viewLog, "TERM=xterm-256color", "NO_COLOR=", "CI=")
	if p := os.Getenv("BENCH_LIVE_CPUPROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "MCPTASK_CPUPROFILE="+p)
	}
	start := time.Now()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		b.Errorf("live: %v", err)
		return procRun{cpu: 1, wall: 1, rss: 1}
	}
	defer tty.Close()
	var drawn int64
	drained := make(chan struct{})
	go func() { // the terminal: it reads everything the view draws
		defer close(drained)
		n, _ := io.Copy(io.Discard, tty)
		drawn = n
	}()
	timer := time.NewTimer(d)
	<-timer.C // the measured run's own length, not a wait for a condition
	_, _ = tty.Write([]byte("q"))
	err = cmd.Wait()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		b.Errorf("live: %v (want exit 130 on detach)", err)
	}
	tty.Close()
	<-drained
	r := usage(cmd, wall)
	r.out = drawn
	return r
}

// runPlain runs `mcptask resume` without a terminal until --timeout d ends it.
func runPlain(b *testing.B, bin, ledger string, d time.Duration) procRun {
	cmd := exec.Command(bin, "resume", "--no-push", "--timeout", d.String())
	cmd.Env = append(os.Environ(), "MCPTASK_STATE="+ledger)
	if p := os.Getenv("BENCH_PLAIN_CPUPROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "MCPTASK_CPUPROFILE="+p)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 124 {
		b.Errorf("plain: %v (want exit 124 at the timeout)\n%s", err, tail(stderr.String()))
		return procRun{cpu: 1, wall: 1, rss: 1}
	}
	return usage(cmd, wall)
}

var viewLine = regexp.MustCompile(`live view: (\d+) views in \S+ \((\d+) frames`)

// viewCount reads how many Views the live view drew, and in how many frames, from its debug log.
func viewCount(b *testing.B, path string) (int, int) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Errorf("view log: %v", err)
		return 0, 1
	}
	m := viewLine.FindSubmatch(data)
	if m == nil {
		b.Errorf("no view count in the log:\n%s", tail(string(data)))
		return 0, 1
	}
	views, _ := strconv.Atoi(string(m[1]))
	frames, _ := strconv.Atoi(string(m[2]))
	if frames == 0 {
		return views, 1
	}
	return views, frames
}
