package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/state"
)

// detachBody is the tools/call that `mcptask call forever --detach --protocol 2026-07-28`
// sends once server/discover and tools/list are cached: the same bytes, but for the id and
// the progress token, which have the same length.
const detachBody = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcptask","version":"devel"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"mcptask-c9a601c2-89be-40ae-ba06-8ae0995a7d03"},"arguments":{},"name":"forever"}}`

// BenchmarkDetachVsCurl is issue 21's target: a one-shot `mcptask call --detach` (the real
// binary, as a whole process) against `curl` POSTing the same tools/call with the same headers
// to the same demo server (a child process), in a ledger of 0 and of 5,000 records. Each
// iteration runs one of each, alternating which goes first, so both see the same machine.
// Target: at most 1.2x curl, whatever the ledger holds.
//
// BENCH_MCPTASK=path measures another build (the figures "before" in bench/README.md).
func BenchmarkDetachVsCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl is not installed")
	}
	bin := os.Getenv("BENCH_MCPTASK")
	if bin == "" {
		bin = buildMcptask(b)
	}
	url := startDemo(b)
	for _, n := range []int{0, 5000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			ledger := filepath.Join(dir, "tasks.json")
			if n > 0 {
				seedLedger(b, ledger, n)
			}
			env := append(os.Environ(), "MCPTASK_STATE="+ledger, "XDG_STATE_HOME="+filepath.Join(dir, "xdg"), "MCPTASK_NO_TUI=1", "CI=")
			detach := func() {
				cmd := exec.Command(bin, "call", "forever", "--detach", "--server", url, "--protocol", "2026-07-28")
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil || len(bytes.TrimSpace(out)) == 0 {
					b.Fatalf("mcptask call --detach: %v %s", err, out)
				}
			}
			post := func() {
				out, err := exec.Command(curl, "-s", "-X", "POST", url,
					"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
					"-H", "Mcp-Method: tools/call", "-H", "Mcp-Name: forever", "-H", "Mcp-Protocol-Version: 2026-07-28",
					"--data", detachBody).Output()
				if err != nil || !bytes.Contains(out, []byte(`"resultType":"task"`)) {
					b.Fatalf("curl tools/call: %v %s", err, out)
				}
			}
			detach() // fills the cache: server/discover and tools/list, as any earlier call would
			post()
			var m, c []time.Duration
			load := loadAvg()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range 2 {
					start := time.Now()
					if (i+j)%2 == 0 {
						detach()
						m = append(m, time.Since(start))
					} else {
						post()
						c = append(c, time.Since(start))
					}
				}
			}
			b.StopTimer()
			if f, err := state.Open(ledger).Load(); err != nil || len(f.Tasks) != n+1+b.N {
				b.Fatalf("the ledger holds %v records (%v), want %d", len(f.Tasks), err, n+1+b.N)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(percentile(m, 0.5)), "mcptask-p50-ms")
			b.ReportMetric(ms(percentile(c, 0.5)), "curl-p50-ms")
			b.ReportMetric(float64(percentile(m, 0.5))/float64(percentile(c, 0.5)), "x-curl-p50")
			b.ReportMetric(float64(sum(m))/float64(sum(c)), "x-curl-mean")
			b.ReportMetric((load+loadAvg())/2, "load-avg")
		})
	}
}

// seedLedger writes n working records over three servers, as many detached calls leave.
func seedLedger(b *testing.B, path string, n int) {
	b.Helper()
	ttl := state.Millis(3_600_000)
	created := time.Now().UTC()
	err := state.Open(path).Update(func(f *state.File) error {
		for i := range n {
			f.Tasks = append(f.Tasks, state.Record{
				TaskID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Server: state.Server{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", 8000+i%3)},
				Era: "2026-07-28", Protocol: "2026-07-28", Tool: "forever", CreatedAt: created, TTL: &ttl, PollInterval: 1000,
				Status: "working", StatusMessage: "started; runs until cancelled", LastUpdatedAt: created, SavedAt: created,
			})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func sum(d []time.Duration) time.Duration {
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return t
}
