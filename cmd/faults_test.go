package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestPollSurvivesRetryAfterAndSilence puts a faulty proxy in front of the demo server: the
// first tasks/get gets 503 with Retry-After: 1, the second is never answered. The wait must
// honour Retry-After, give up on the silent request by itself, and still finish the task.
func TestPollSurvivesRetryAfterAndSilence(t *testing.T) {
	old := requestTimeout
	requestTimeout = 300 * time.Millisecond
	defer func() { requestTimeout = old }()

	release := make(chan struct{})
	defer close(release)
	url, getTimes := faultProxy(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			if p.method != "tasks/get" || p.n > 2 {
				return false
			}
			if p.n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return true
			}
			select { // never answer; the client must give up on its own
			case <-r.Context().Done():
			case <-release:
			}
			return true
		})

	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--server", url, "--timeout", "30s", "--jsonl")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, "slept") || !strings.Contains(r.Stdout, `"transient":true`) {
		t.Fatalf("code %d\nstdout %q\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	gets := getTimes()
	if len(gets) < 3 {
		t.Fatalf("only %d tasks/get", len(gets))
	}
	if gap := gets[1].Sub(gets[0]); gap < time.Second {
		t.Errorf("the poll after a 503 with Retry-After: 1 came %s later; it must wait at least 1s", gap)
	}
	if !strings.Contains(r.Stderr, "HTTP 503") || !strings.Contains(r.Stderr, "retrying") {
		t.Errorf("the failures are not shown:\n%s", r.Stderr)
	}
}

// TestRecordWritesTheWireAndFlagsViolations: --record keeps every exchange as NDJSON with
// secrets redacted, and a server that breaks a rule it can be seen breaking gets a violation
// line and a warning, without failing the call.
func TestRecordWritesTheWireAndFlagsViolations(t *testing.T) {
	// The lie: modern tasks/get answers also carry the 2025-11-25 "ttl" field.
	url, _ := faultProxy(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			if p.method != "tasks/get" {
				return false
			}
			rec := httptest.NewRecorder()
			p.next.ServeHTTP(rec, r)
			out := strings.Replace(rec.Body.String(), `"taskId"`, `"ttl":1000,"taskId"`, 1)
			w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
			w.WriteHeader(rec.Code)
			io.WriteString(w, out)
			return true
		})

	file := filepath.Join(t.TempDir(), "wire.ndjson")
	r := runCLI(t, t.Context(), map[string]string{"TOK": "bearer-secret"}, "call", "sleep", "--arg", "seconds=2", "--server", url,
		"--protocol", "2026-07-28", "--bearer-env", "TOK", "--record", file)
	if r.Code != ExitOK {
		t.Fatalf("code %d\n%s", r.Code, r.Stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "bearer-secret") {
		t.Fatal("the recording holds the bearer token")
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not NDJSON: %q", line)
		}
		kinds[ev["kind"].(string)]++
		if ev["kind"] == "violation" && ev["rule"] != "era-fields" {
			t.Errorf("unexpected violation %v", ev)
		}
	}
	if kinds["http-request"] < 3 || kinds["http-response"] < 3 || kinds["http-exchange"] != kinds["http-request"] || kinds["violation"] != 1 {
		t.Errorf("record kinds %v", kinds)
	}
	if !strings.Contains(r.Stderr, "broke rule era-fields") {
		t.Errorf("no warning on stderr:\n%s", r.Stderr)
	}
}

// TestStdioServerRestartedMidWatch: a stdio server that dies in the middle of a wait is
// started again with the same command; with --store its tasks survive and the task finishes.
func TestStdioServerRestartedMidWatch(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	store := filepath.Join(t.TempDir(), "store.json")
	server := demoStdio(t, "--step", "30ms", "--store", store, "--exit-after", "5")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=100", "--stdio", server, "--protocol", era, "--timeout", "60s")
			if r.Code != ExitOK || !strings.Contains(r.Stdout, "slept 100 seconds") {
				t.Fatalf("code %d\nstdout %q\nstderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, "started again") {
				t.Errorf("the restart is not reported:\n%s", r.Stderr)
			}
		})
	}
}

// TestServerDownMidWatch: the HTTP server goes away while tasks are being followed and comes
// back (from its store, on the same address); the wait backs off, says so, and finishes.
func TestServerDownMidWatch(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store.json")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	url := "http://" + addr + "/mcp"
	var mu sync.Mutex
	gets := 0
	start := func(ln net.Listener) (*demo.Server, *http.Server) {
		srv, err := demo.New(demo.Options{Store: store, StepDelay: 40 * time.Millisecond, PollInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		inner := specChecked(t, srv.Handler(), false)
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m := r.Header.Get("Mcp-Method"); m == "tasks/get" || m == "subscriptions/listen" {
				mu.Lock()
				gets++ // a poll, or the push stream reopened
				mu.Unlock()
			}
			inner.ServeHTTP(w, r)
		})}
		go hs.Serve(ln)
		return srv, hs
	}
	srv, hs := start(ln)
	var ids []string
	for range 2 {
		r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=40", "--detach", "--server", url)
		ids = append(ids, strings.TrimSpace(r.Stdout))
	}
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	f.Getenv = func(k string) string {
		if k == "MCPTASK_STATE" {
			return testLedger(t)
		}
		return ""
	}
	done := make(chan cliResult, 1)
	go func() {
		code := Run(t.Context(), f, []string{"watch", ids[0], ids[1], "--timeout", "60s"})
		done <- cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
	}()
	waitFor(t, "the first polls", 10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return gets >= 2 })
	hs.Close() // the server goes away
	srv.Close()
	waitFor(t, "a failed poll to be reported", 20*time.Second, func() bool { return strings.Contains(errOut.String(), "poll failed") })
	mu.Lock()
	before := gets
	mu.Unlock()
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv2, hs2 := start(ln2)
	defer func() { hs2.Close(); srv2.Close() }()
	r := <-done
	if r.Code != ExitOK || strings.Count(r.Stdout, "slept 40 seconds") != 2 {
		t.Fatalf("code %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets <= before {
		t.Errorf("neither a poll nor a listen stream reached the restarted server")
	}
}

// TestWatchTakesPushUpdates: on 2026-07-28 watch opens subscriptions/listen, and the task's
// end arrives by push long before its 30 s poll interval would have found it.
func TestWatchTakesPushUpdates(t *testing.T) {
	url, rec := demoServer(t, demo.Options{PollInterval: 30 * time.Second, StepDelay: 100 * time.Millisecond})
	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=5", "--detach", "--server", url, "--protocol", "2026-07-28")
	id := strings.TrimSpace(r.Stdout)
	start := time.Now()
	w := runCLI(t, t.Context(), nil, "watch", id, "--timeout", "20s", "--jsonl")
	if w.Code != ExitOK || !strings.Contains(w.Stdout, "slept 5 seconds") || !strings.Contains(w.Stdout, `"via":"push"`) {
		t.Fatalf("watch: %d\n%s\n%s", w.Code, w.Stdout, w.Stderr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("watch took %s; push should end it within a second of the task", took)
	}
	if countMethod(rec, "subscriptions/listen") == 0 {
		t.Errorf("no subscriptions/listen was opened: %v", rec.Methods())
	}
	if n := countMethod(rec, "tasks/get"); n > 3 {
		t.Errorf("%d tasks/get while push was live; polling should have relaxed", n)
	}
}

// TestLegacyStatusNotificationsTakenAsUpdates: a 2025-11-25 server's unsolicited
// notifications/tasks/status (here the demo over stdio, which sends one per change) reach the
// wait as updates: with a 30 s poll interval the task is seen finishing by push, long before
// the next poll would have come.
func TestLegacyStatusNotificationsTakenAsUpdates(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	store := filepath.Join(t.TempDir(), "store.json")
	server := demoStdio(t, "--step", "40ms", "--poll-interval", "30s", "--store", store)
	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=10", "--detach", "--stdio", server, "--protocol", "2025-11-25")
	id := strings.TrimSpace(r.Stdout)
	if r.Code != ExitOK || id == "" {
		t.Fatalf("create: %d\n%s", r.Code, r.Stderr)
	}
	w := runCLI(t, t.Context(), nil, "watch", id, "--timeout", "20s", "--jsonl")
	if w.Code != ExitOK || !strings.Contains(w.Stdout, "slept 10 seconds") {
		t.Fatalf("watch: %d\n%s\n%s", w.Code, w.Stdout, w.Stderr)
	}
	for _, line := range strings.Split(w.Stdout, "\n") {
		if strings.Contains(line, `"type":"status"`) && strings.Contains(line, `"status":"completed"`) {
			if !strings.Contains(line, `"via":"push"`) {
				t.Errorf("the end of the task was not seen by push: %s", line)
			}
			return
		}
	}
	t.Errorf("no completed status event:\n%s", w.Stdout)
}

// cutAfterFirst passes the first write (the acknowledgement) and fails every later one, so
// the server ends the listen stream right after acknowledging it.
type cutAfterFirst struct {
	http.ResponseWriter
	n int
}

func (c *cutAfterFirst) Write(p []byte) (int, error) {
	c.n++
	if c.n > 1 {
		return 0, io.ErrClosedPipe
	}
	return c.ResponseWriter.Write(p)
}

func (c *cutAfterFirst) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

// TestPushStreamLostFallsBackToPolling: the listen stream drops right after its
// acknowledgement and cannot be reopened; polling takes over and the task still finishes,
// its updates marked as polled.
func TestPushStreamLostFallsBackToPolling(t *testing.T) {
	var mu sync.Mutex
	listens := 0
	url, _ := faultProxy(t, demo.Options{StepDelay: 50 * time.Millisecond, PollInterval: 300 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			if p.method != "subscriptions/listen" {
				return false
			}
			mu.Lock()
			listens++
			n := listens
			mu.Unlock()
			if n > 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no more subscriptions"}}`)
				return true
			}
			p.next.ServeHTTP(&cutAfterFirst{ResponseWriter: w}, r)
			return true
		})
	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=20", "--detach", "--server", url, "--protocol", "2026-07-28")
	id := strings.TrimSpace(r.Stdout)
	w := runCLI(t, t.Context(), nil, "watch", id, "--timeout", "30s", "--jsonl")
	if w.Code != ExitOK || !strings.Contains(w.Stdout, "slept 20 seconds") {
		t.Fatalf("watch: %d\n%s\n%s", w.Code, w.Stdout, w.Stderr)
	}
	if !strings.Contains(w.Stdout, `"via":"poll"`) || strings.Contains(w.Stdout, `"via":"push"`) {
		t.Errorf("updates must be marked as polled:\n%s", w.Stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	if listens < 1 {
		t.Errorf("no listen stream was tried")
	}
}

// TestGarbageMarksOneTaskOthersCarryOn: one server answers tasks/get with garbage; its task
// ends the resume with a clear error and is marked in the ledger, still resumable, while the
// task on the healthy server finishes.
func TestGarbageMarksOneTaskOthersCarryOn(t *testing.T) {
	good, _ := demoServer(t, demo.Options{})
	var mu sync.Mutex
	broken := false
	bad, _ := faultProxy(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			mu.Lock()
			b := broken
			mu.Unlock()
			if !b || p.method != "tasks/get" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"taskId":`) // cut short
			return true
		})
	a := strings.TrimSpace(runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--detach", "--server", good).Stdout)
	b := strings.TrimSpace(runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--detach", "--server", bad).Stdout)
	mu.Lock()
	broken = true
	mu.Unlock()
	r := runCLI(t, t.Context(), nil, "resume", "--json", "--timeout", "30s")
	if r.Code != ExitFailure {
		t.Fatalf("resume: code %d, want %d\n%s", r.Code, ExitFailure, r.Stderr)
	}
	codes := map[string]float64{}
	msgs := map[string]string{}
	for _, x := range decodeJSON(t, r.Stdout)["tasks"].([]any) {
		m := x.(map[string]any)
		codes[m["taskId"].(string)] = m["code"].(float64)
		msgs[m["taskId"].(string)], _ = m["message"].(string)
	}
	if codes[a] != ExitOK || codes[b] != ExitFailure || !strings.Contains(msgs[b], "malformed") {
		t.Fatalf("codes %v messages %v", codes, msgs)
	}
	recs := unshown(ledgerRecords(t, testLedger(t)))
	if len(recs) != 1 || recs[0].TaskID != b || !strings.Contains(recs[0].LastError, "malformed") {
		t.Fatalf("the broken task must stay unfinished, marked with its error: %+v", recs)
	}
	l := runCLI(t, t.Context(), nil, "list")
	if !strings.Contains(l.Stdout, "! ") {
		t.Errorf("list does not show the error:\n%s", l.Stdout)
	}
}

// TestRateLimitedPollWaitsRetryAfter: a 429 with Retry-After is honoured like a 503, and the
// task still finishes.
func TestRateLimitedPollWaitsRetryAfter(t *testing.T) {
	url, gets := faultProxy(t, demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			if p.method != "tasks/get" || p.n != 1 {
				return false
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		})
	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--server", url, "--protocol", "2026-07-28", "--no-push")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, "slept") || !strings.Contains(r.Stderr, "HTTP 429") {
		t.Fatalf("code %d\nstdout %q\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if g := gets(); len(g) < 2 || g[1].Sub(g[0]) < time.Second {
		t.Errorf("the poll after a 429 with Retry-After: 1 came too soon: %v", g)
	}
}

// proxied is what faultProxy tells a fault about the request at hand.
type proxied struct {
	method string       // the JSON-RPC method
	n      int          // how many tasks/get arrived so far, this one included
	next   http.Handler // the demo server
}

// faultProxy starts a demo server with opts behind a proxy that hands every request to fault
// first; fault returns true when it answered the request itself. The proxy records when each
// tasks/get arrives; the second result returns those times so far.
func faultProxy(t *testing.T, opts demo.Options, fault func(w http.ResponseWriter, r *http.Request, p proxied) bool) (string, func() []time.Time) {
	t.Helper()
	srv, err := demo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Checked before the faults: what the demo itself sends must be valid, whatever the
	// faults make of it.
	inner := specChecked(t, srv.Handler(), false)
	var mu sync.Mutex
	var gets []time.Time
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		if m.Method == "tasks/get" {
			gets = append(gets, time.Now())
		}
		p := proxied{method: m.Method, n: len(gets), next: inner}
		mu.Unlock()
		if !fault(w, r, p) {
			inner.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		proxy.Close()
		srv.Close()
	})
	return proxy.URL + "/mcp", func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(gets)
	}
}

// TestPollIntervalCountsFromTheRequest: on a slow server the interval runs from when a poll
// went out, not from when its answer came back, so a task is polled at its interval and not
// at the interval plus the latency; and never sooner than the interval.
func TestPollIntervalCountsFromTheRequest(t *testing.T) {
	const interval, latency = 300 * time.Millisecond, 150 * time.Millisecond
	url, getTimes := faultProxy(t, demo.Options{StepDelay: time.Hour, PollInterval: interval},
		func(w http.ResponseWriter, r *http.Request, p proxied) bool {
			if p.method == "tasks/get" {
				time.Sleep(latency) // the injected fault: a slow answer
			}
			return false
		})
	r := runCLI(t, t.Context(), nil, "call", "forever", "--server", url, "--protocol", "2026-07-28", "--no-push", "--timeout", "3s")
	if r.Code != ExitTimeout {
		t.Fatalf("code %d, want %d\nstderr %s", r.Code, ExitTimeout, r.Stderr)
	}
	gets := getTimes()
	if len(gets) < 5 {
		t.Fatalf("only %d polls in 3s at a %s interval", len(gets), interval)
	}
	// The first poll follows the task's creation; from the second on the cadence is steady.
	// The times are when the polls reached the server: one that was slow to arrive (a loaded
	// machine) makes the next gap look shorter by as much, so a little slack is allowed; a
	// client that polled early would be far below it.
	const slack = 50 * time.Millisecond
	for i := 2; i < len(gets); i++ {
		if gap := gets[i].Sub(gets[i-1]); gap < interval-slack {
			t.Errorf("poll %d came %s after the previous one; the interval is %s", i, gap, interval)
		}
	}
	mean := gets[len(gets)-1].Sub(gets[1]) / time.Duration(len(gets)-2)
	if mean > interval+latency/2 {
		t.Errorf("mean gap %s: polls wait for the answer before counting the interval (%s + %s latency)", mean, interval, latency)
	}
}

// TestFaultyAnswersLeaveTheTaskResumable: whatever a server answers to tasks/get, mcptask
// ends with a clear error and the right exit code, the task stays in the ledger marked with
// what went wrong, and once the server behaves again the same task resumes. Each case is a
// fault injected by a proxy in front of the demo server.
func TestFaultyAnswersLeaveTheTaskResumable(t *testing.T) {
	old := requestTimeout
	defer func() { requestTimeout = old }()

	jsonBody := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
	}
	cases := []struct {
		name  string
		fault http.HandlerFunc
		code  int
		// want is in the error message; marked says the ledger record carries it.
		want   string
		marked bool
	}{
		{"not JSON", jsonBody("<html>502 Bad Gateway</html>"), ExitFailure, "not a JSON object", true},
		{"truncated", jsonBody(`{"jsonrpc":"2.0","id":%REQ%,"result":{"taskId":`), ExitFailure, "unexpected end of JSON input", true},
		{"wrong types", jsonBody(`{"jsonrpc":"2.0","id":%REQ%,"result":{"taskId":7,"status":"working"}}`), ExitFailure, "cannot unmarshal number", true},
		{"no status", jsonBody(`{"jsonrpc":"2.0","id":%REQ%,"result":{"taskId":"%ID%"}}`), ExitFailure, `invalid status "<missing>"`, true},
		{"another task", jsonBody(`{"jsonrpc":"2.0","id":%REQ%,"result":{"taskId":"someone-else","status":"working"}}`), ExitFailure, `server answered for task "someone-else"`, true},
		{"another request", jsonBody(`{"jsonrpc":"2.0","id":"nope","result":{"taskId":"%ID%","status":"working"}}`), ExitFailure, `does not match request id`, true},
		{"oversized body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(strings.Repeat(" ", 1<<20))
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":`)
			for range 33 { // past the 32 MiB cap
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, ExitFailure, "larger than", true},
		{"endless SSE line", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: ")
			chunk := []byte(strings.Repeat("a", 1<<20))
			for range 17 { // past the 16 MiB line cap
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, ExitFailure, "exceeds size limit", true},
		{"endless SSE stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for { // keep-alives, never the response
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					io.WriteString(w, ": still thinking\n\n")
					fl.Flush()
				}
			}
		}, ExitTimeout, "timeout after", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Only the endless stream needs the per-poll deadline to end it; reading 32 MiB
			// under the race detector must not run into it.
			requestTimeout = 10 * time.Second
			if tc.code == ExitTimeout {
				requestTimeout = 300 * time.Millisecond
			}
			var mu sync.Mutex
			var id string
			faulty := false
			url, _ := faultProxy(t, demo.Options{StepDelay: time.Hour, PollInterval: 100 * time.Millisecond},
				func(w http.ResponseWriter, r *http.Request, p proxied) bool {
					mu.Lock()
					f, tid := faulty, id
					mu.Unlock()
					if !f || p.method != "tasks/get" {
						return false
					}
					var req struct {
						ID json.RawMessage `json:"id"`
					}
					_ = json.NewDecoder(r.Body).Decode(&req)
					tc.fault(&idWriter{ResponseWriter: w, id: tid, req: string(req.ID)}, r)
					return true
				})
			created := runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url, "--protocol", "2026-07-28")
			mu.Lock()
			id, faulty = strings.TrimSpace(created.Stdout), true
			mu.Unlock()
			if created.Code != ExitOK || id == "" {
				t.Fatalf("create: code %d\n%s", created.Code, created.Stderr)
			}

			// The faults that end in an error must not need the timeout; only the endless
			// stream runs into it.
			timeout := "60s"
			if tc.code == ExitTimeout {
				timeout = "2s"
			}
			r := runCLI(t, t.Context(), nil, "resume", "--json", "--no-push", "--timeout", timeout)
			if r.Code != tc.code {
				t.Fatalf("resume: code %d, want %d\nstdout %s\nstderr %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			tasks := decodeJSON(t, r.Stdout)["tasks"].([]any)
			msg, _ := tasks[0].(map[string]any)["message"].(string)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("the error must name the problem (%q): %q", tc.want, msg)
			}
			recs := ledgerRecords(t, testLedger(t))
			if len(recs) != 1 || recs[0].TaskID != id {
				t.Fatalf("the task must stay in the ledger: %+v", recs)
			}
			if tc.marked && !strings.Contains(recs[0].LastError, tc.want) {
				t.Errorf("the record must be marked with the error: %q", recs[0].LastError)
			}

			// The server behaves again: the same task resumes, and its mark is cleared.
			mu.Lock()
			faulty = false
			mu.Unlock()
			again := runCLI(t, t.Context(), nil, "resume", "--timeout", "0")
			if again.Code != ExitStillRunning {
				t.Fatalf("resume after the fault: code %d, want %d (still running)\n%s", again.Code, ExitStillRunning, again.Stderr)
			}
			if recs := ledgerRecords(t, testLedger(t)); len(recs) != 1 || recs[0].LastError != "" || recs[0].Status != "working" {
				t.Errorf("after a good poll the record must be working and unmarked: %+v", recs)
			}
		})
	}
}

// idWriter puts the task id in place of %ID%, and the request's id in place of %REQ%, in
// what a fault writes.
type idWriter struct {
	http.ResponseWriter
	id, req string
}

func (w *idWriter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("%")) {
		out := bytes.ReplaceAll(b, []byte("%ID%"), []byte(w.id))
		out = bytes.ReplaceAll(out, []byte("%REQ%"), []byte(w.req))
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *idWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }
