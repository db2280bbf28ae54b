package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestRelayKeepsEveryTask drives mcptask's own client through the proxy against the demo
// server, in both eras: the task is in the ledger the moment the host has its id, with what
// resume needs, and the statuses the host sees land in the record.
func TestRelayKeepsEveryTask(t *testing.T) {
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		t.Run(era, func(t *testing.T) {
			r := newRig(t, demoUpstream(t, demo.Options{}))
			c := client(t, r.url, era)
			ctx := t.Context()
			res, err := c.CallTool(ctx, rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 3}})
			if err != nil || res.Task == nil {
				t.Fatalf("call: %v %+v", err, res)
			}
			// No wait: the proxy wrote the record before it forwarded the CreateTaskResult.
			rec := record(t, r.store, res.Task.TaskID)
			if rec == nil {
				t.Fatalf("task %s is not in the ledger when the host learns of it", res.Task.TaskID)
			}
			if rec.Via != Via || rec.Era != era || rec.Protocol != era || rec.Tool != "sleep" || rec.Server.URL != r.up || rec.Status != "working" {
				t.Errorf("record %+v", rec)
			}
			if sid := c.SessionID(); (era == rpc.VersionLegacy) != (sid != "") || rec.SessionID != sid {
				t.Errorf("record session %q, host session %q", rec.SessionID, sid)
			}
			for {
				task, err := c.GetTask(ctx, res.Task.TaskID)
				if err != nil {
					t.Fatal(err)
				}
				if task.Status.Terminal() {
					break
				}
				time.Sleep(task.PollInterval)
			}
			waitFor(t, "the ledger to show the task completed", 5*time.Second, func() bool {
				rec := record(t, r.store, res.Task.TaskID)
				return rec != nil && rec.Status == "completed" && rec.StatusMessage == "done"
			})
			created := r.ev.of(EventCreated)
			if len(created) != 1 || !strings.Contains(created[0].Host, "proxy-test/1") || !created[0].Task.InLedger {
				t.Errorf("created events %+v", created)
			}
			if v := r.ev.rules(); len(v) > 0 {
				t.Errorf("violations between two conformant peers: %v", v)
			}
			checkRecord(t, r.rec.String())
		})
	}
}

// checkRecord checks every line of a record: JSON, a direction and a peer, a time.
func checkRecord(t *testing.T, rec string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(rec), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("record line is not JSON: %v: %s", err, l)
		}
		d, p := m["direction"], m["peer"]
		if (d != ToServer && d != ToHost) || (p != "host" && p != "server" && p != "proxy") || m["time"] == nil {
			t.Fatalf("record line without direction, peer or time: %s", l)
		}
		lines = append(lines, m)
	}
	return lines
}

// post sends body to url as a host would and returns the response.
func post(t *testing.T, ctx context.Context, url string, hdr http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw-host","version":"1"}}`

func modernCall(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{},%s}}`, id, modernMeta)
}

func modernHeaders(method, name string) http.Header {
	return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}, "Mcp-Name": {name}}
}

func createResult(id int, taskID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"task","taskId":%q,"status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000,"pollIntervalMs":1000}}`, id, taskID)
}

// sseUpstream answers a tools/call with an SSE stream: a progress notification, flushed, then
// (once release is closed) the CreateTaskResult. sent gets the time each event was flushed.
func sseUpstream(t *testing.T, release <-chan struct{}, sent chan<- time.Time) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": keep-alive\n\n")
		fmt.Fprintf(w, "id: 1\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
		w.(http.Flusher).Flush()
		sent <- time.Now()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "id: 2\ndata: %s\n\n", createResult(1, "sse-task-1"))
		w.(http.Flusher).Flush()
		sent <- time.Now()
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestSSEReachesTheHostAtOnce: an SSE event reaches the host within 50 ms of the server
// flushing it (measured with timestamps on both sides), and the CreateTaskResult carried on the
// stream is in the ledger by the time the host reads it.
func TestSSEReachesTheHostAtOnce(t *testing.T) {
	release, sent := make(chan struct{}), make(chan time.Time, 2)
	r := newRig(t, sseUpstream(t, release, sent))
	resp := post(t, t.Context(), r.url, modernHeaders("tools/call", "slow"), modernCall(1))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	readEvent := func() (string, time.Time) {
		var ev strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v (so far %q)", err, ev.String())
			}
			ev.WriteString(line)
			if line == "\n" && strings.Contains(ev.String(), "data:") {
				return ev.String(), time.Now()
			}
		}
	}
	// The upstream waits for us before it sends the second event: a proxy that buffered the
	// stream would never deliver the first, and the test would fail here.
	first, got := readEvent()
	gap := got.Sub(<-sent)
	if !strings.Contains(first, "notifications/progress") || !strings.HasPrefix(first, ": keep-alive\n\nid: 1\n") {
		t.Fatalf("first event %q", first)
	}
	if gap > 50*time.Millisecond {
		t.Errorf("the event reached the host %s after the server sent it; want at most 50ms", gap)
	}
	close(release)
	second, got := readEvent()
	gap = got.Sub(<-sent)
	if !strings.Contains(second, "sse-task-1") {
		t.Fatalf("second event %q", second)
	}
	if rec := record(t, r.store, "sse-task-1"); rec == nil || rec.Era != rpc.VersionModern || rec.Tool != "slow" {
		t.Fatalf("the task on the stream is not in the ledger when the host reads it: %+v", rec)
	}
	if gap > 200*time.Millisecond { // it includes the fsync'd ledger write
		t.Errorf("the CreateTaskResult reached the host %s after the server sent it", gap)
	}
	t.Logf("event delivered %s after the server flushed it", gap)
}

// TestTransparent compares what a host sees through the proxy with what it sees directly: the
// same status, headers and bytes, and the server gets the host's headers, secrets included.
func TestTransparent(t *testing.T) {
	var seen atomic.Pointer[http.Request]
	var seenBody atomic.Pointer[[]byte]
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Store(r)
		seenBody.Store(&b)
		w.Header().Set("Mcp-Session-Id", "sess-123")
		w.Header().Set("X-Server", "yes")
		w.Header().Add("Set-Cookie", "a=1")
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 8\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\",\"params\":{\"taskId\":\"t\",\"status\":\"working\",\"createdAt\":\"2026-01-01T00:00:00Z\",\"lastUpdatedAt\":\"2026-01-01T00:00:00Z\",\"ttl\":null}}\n\n")
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTeapot)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"odd   spacing kept"}}`)
		}
	}))
	defer hs.Close()
	r := newRig(t, hs.URL+"/mcp")
	hdr := http.Header{"Authorization": {"Bearer top-secret"}, "Mcp-Session-Id": {"sess-123"}, "Mcp-Protocol-Version": {"2025-11-25"},
		"Mcp-Method": {"tools/call"}, "Mcp-Name": {"x"}, "Mcp-Param-Region": {"eu"}, "Last-Event-Id": {"7"},
		"Accept": {"application/json, text/event-stream"}}
	body := `{"jsonrpc":"2.0", "id":7,"method":"tools/call","params":{"name":"x"}}`
	type view struct {
		status int
		header http.Header
		body   string
	}
	do := func(method, url string) view {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		h := resp.Header.Clone()
		h.Del("Date")
		return view{resp.StatusCode, h, string(b)}
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		direct := do(method, hs.URL+"/mcp")
		directReq, directBody := seen.Load(), *seenBody.Load()
		proxied := do(method, r.url)
		proxReq, proxBody := seen.Load(), *seenBody.Load()
		if direct.status != proxied.status || direct.body != proxied.body || fmt.Sprint(direct.header) != fmt.Sprint(proxied.header) {
			t.Errorf("%s: direct %+v\nproxied %+v", method, direct, proxied)
		}
		if !bytes.Equal(directBody, proxBody) {
			t.Errorf("%s: the server got %q through the proxy, %q directly", method, proxBody, directBody)
		}
		for _, k := range []string{"Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region", "Last-Event-Id", "Content-Type"} {
			if directReq.Header.Get(k) != proxReq.Header.Get(k) {
				t.Errorf("%s: header %s: %q through the proxy, %q directly", method, k, proxReq.Header.Get(k), directReq.Header.Get(k))
			}
		}
		if proxReq.Header.Get("X-Forwarded-For") != "" || proxReq.Host != directReq.Host {
			t.Errorf("%s: the proxy added X-Forwarded-For or changed Host: %v %q", method, proxReq.Header, proxReq.Host)
		}
	}
	rec := r.rec.String()
	if strings.Contains(rec, "top-secret") || strings.Contains(rec, "a=1") {
		t.Errorf("the record holds a secret:\n%s", rec)
	}
	trace := r.trace.String()
	if strings.Contains(trace, "top-secret") || !strings.Contains(trace, "] POST ") || !strings.Contains(trace, "Authorization: [redacted]") ||
		!strings.Contains(trace, "] HTTP 418") || !strings.Contains(trace, `"odd   spacing kept"`) {
		t.Errorf("the trace:\n%s", trace)
	}
	checkRecord(t, rec)
}

// TestFaults: the server dies mid-stream, a host disconnects mid-stream, a garbage body, a
// garbage answer, a 10 MB body. Each is forwarded as it is (and reported), and the proxy goes
// on serving other hosts.
func TestFaults(t *testing.T) {
	hostGone := make(chan struct{}, 1)
	var big atomic.Int64
	var garbage atomic.Pointer[[]byte]
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.Header.Get("X-Fault") {
		case "die":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection breaks without ending the stream
		case "host-gone":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				hostGone <- struct{}{}
			case <-time.After(10 * time.Second):
			}
		case "garbage-body":
			garbage.Store(&b)
			w.WriteHeader(http.StatusBadRequest)
		case "garbage-answer":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":")
		case "big":
			big.Store(int64(len(b)))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"fine"}]}}`)
		}
	}))
	defer hs.Close()
	r := newRig(t, hs.URL+"/mcp")
	fault := func(kind string) http.Header { return http.Header{"X-Fault": {kind}} }
	healthy := func() {
		t.Helper()
		resp := post(t, t.Context(), r.url, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "fine") {
			t.Fatalf("the proxy stopped serving: %d %s", resp.StatusCode, b)
		}
	}

	// The server dies mid-stream: the host gets the event that came, then the same break.
	resp := post(t, t.Context(), r.url, fault("die"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "notifications/message") || err == nil || errors.Is(err, io.EOF) {
		t.Errorf("server died mid-stream: the host read %q, err %v; want the event and then a broken stream", b, err)
	}
	healthy()

	// A host disconnects mid-stream: the server sees its request end.
	ctx, cancel := context.WithCancel(t.Context())
	resp = post(t, ctx, r.url, fault("host-gone"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.HasPrefix(line, "data:") {
		t.Fatalf("first line %q", line)
	}
	cancel()
	select {
	case <-hostGone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the host leave")
	}
	healthy()

	// A garbage body goes to the server byte for byte, and its answer back.
	junk := "this is {not json\x00\xff"
	resp = post(t, t.Context(), r.url, fault("garbage-body"), junk)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || garbage.Load() == nil || string(*garbage.Load()) != junk {
		t.Errorf("garbage body: status %d, the server got %q", resp.StatusCode, garbage.Load())
	}
	// A garbage answer reaches the host unchanged.
	resp = post(t, t.Context(), r.url, fault("garbage-answer"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" {
		t.Errorf("garbage answer reached the host as %q", b)
	}
	healthy()

	// A 10 MB body, while another host is served at the same time.
	arg := strings.Repeat("x", 10<<20)
	done := make(chan *http.Response, 1)
	go func() {
		done <- post(t, t.Context(), r.url, fault("big"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"blob":"`+arg+`"}}}`)
	}()
	healthy()
	resp = <-done
	resp.Body.Close()
	if resp.StatusCode != 200 || big.Load() != int64(len(arg)+len(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"blob":""}}}`)) {
		t.Errorf("10 MB body: status %d, the server got %d bytes", resp.StatusCode, big.Load())
	}
	healthy()

	rules := strings.Join(r.ev.rules(), " ")
	for _, want := range []string{"malformed/host", "malformed/server"} {
		if !strings.Contains(rules, want) {
			t.Errorf("violations %q lack %s", rules, want)
		}
	}
	checkRecord(t, r.rec.String())
}

// TestUnreachableServer: a server that is down gets the host a 502 naming it, and a notice.
func TestUnreachableServer(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	up := hs.URL + "/mcp"
	hs.Close()
	r := newRig(t, up)
	resp := post(t, t.Context(), r.url, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "could not be reached") {
		t.Errorf("status %d body %q", resp.StatusCode, b)
	}
	if n := r.ev.of(EventNotice); len(n) != 1 || !strings.Contains(n[0].Text, up) {
		t.Errorf("notices %+v", n)
	}
}

// TestResumedStreamCarriesTheTask: a 2025-11-25 server's SSE answer to tools/call breaks after
// an event id; the host resumes with GET and Last-Event-ID, and the CreateTaskResult arrives
// on that GET. The proxy still writes the task to the ledger before the host reads it.
func TestResumedStreamCarriesTheTask(t *testing.T) {
	var lastEventID atomic.Pointer[string]
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodGet {
			id := r.Header.Get("Last-Event-Id")
			lastEventID.Store(&id)
			fmt.Fprintf(w, "id: 2\ndata: %s\n\n", `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"resumed-task","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}}`)
			return
		}
		fmt.Fprint(w, "id: 1\nretry: 10\ndata: \n\n") // a priming event, then the connection breaks
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer hs.Close()
	r := newRig(t, hs.URL+"/mcp")
	legacy := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {"sess-r"}}
	resp := post(t, t.Context(), r.url, legacy, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, r.url, nil)
	req.Header = legacy.Clone()
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-Id", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	line := ""
	for !strings.HasPrefix(line, "data:") {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatalf("the resumed stream ended: %v", err)
		}
	}
	if rec := record(t, r.store, "resumed-task"); rec == nil || rec.SessionID != "sess-r" || rec.Tool != "slow" || rec.Era != rpc.VersionLegacy {
		t.Fatalf("after reading %q the ledger holds %+v", line, rec)
	}
	resp.Body.Close()
	if id := lastEventID.Load(); id == nil || *id != "1" {
		t.Errorf("the server got Last-Event-ID %v", id)
	}
}

// TestLedgerFailureForwardsAnyway: when the ledger cannot be written, the host still gets its
// task (holding it back would break the host) and the failure is reported, naming the task.
func TestLedgerFailureForwardsAnyway(t *testing.T) {
	up := demoUpstream(t, demo.Options{})
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	p := New(Options{Server: state.Server{URL: up}, Ledger: ledger.New(state.Open(filepath.Join(blocker, "tasks.json")), ledger.Options{}), OnEvent: ev.add})
	h, _ := p.Handler(HTTPOptions{Upstream: up})
	hs := httptest.NewServer(h)
	defer hs.Close()
	c := client(t, hs.URL+"/mcp", rpc.VersionModern)
	res, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 1}})
	if err != nil || res.Task == nil {
		t.Fatalf("the host did not get its task: %v", err)
	}
	n := ev.of(EventNotice)
	if len(n) == 0 || !strings.Contains(n[0].Text, res.Task.TaskID) || !strings.Contains(n[0].Text, "ledger failed") {
		t.Errorf("notices %+v", n)
	}
	if c := ev.of(EventCreated); len(c) != 1 || c[0].Task.InLedger {
		t.Errorf("created %+v: want one, not in the ledger", c)
	}
}
