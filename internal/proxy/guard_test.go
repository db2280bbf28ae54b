package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
	"github.com/mcptask/mcptask/internal/state"
)

const bearer = "Bearer user-secret-4f1c"

// guarded is a proxy served the way `mcptask proxy` serves it (NewServer on a loopback
// listener), in front of the recording upstream, adding the user's bearer.
type guarded struct {
	p    *Proxy
	url  string // http://127.0.0.1:PORT/mcp
	port string
	up   *hostile.Server
	ev   *events
}

func startGuarded(t *testing.T, popts Options, hopts HTTPOptions, sopts ServerOptions) *guarded {
	t.Helper()
	g := &guarded{up: hostile.Start(t, "proxy-upstream", demo.Options{}), ev: &events{}}
	if hopts.Upstream == "" {
		hopts.Upstream = g.up.URL
	}
	popts.Server = state.Server{URL: hopts.Upstream}
	popts.OnEvent = g.ev.add
	g.p = New(popts)
	hopts.Header = http.Header{"Authorization": {bearer}}
	h, err := g.p.Handler(hopts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(h, sopts)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); g.p.Close() })
	_, g.port, _ = net.SplitHostPort(ln.Addr().String())
	g.url = "http://" + ln.Addr().String() + "/mcp"
	return g
}

func discover(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, id, modernMeta)
}

// send makes one request as a host or a page would; host and origin override the headers.
func (g *guarded) send(t *testing.T, method, path, host, origin, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, strings.TrimSuffix(g.url, "/mcp")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = modernHeaders("tools/list", "")
	req.Header.Del("Mcp-Name")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// refusedWith checks a refusal: its status and a JSON-RPC error without an id.
func refusedWith(t *testing.T, what string, resp *http.Response, body string, status int) {
	t.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != status || json.Unmarshal([]byte(body), &m) != nil || m.JSONRPC != "2.0" || m.ID != nil || m.Error.Message == "" {
		t.Errorf("%s: got %d %q, want %d and a JSON-RPC error without id", what, resp.StatusCode, body, status)
	}
}

// TestWebPagesGetNothing plays the web page: a DNS-rebinding request (the page's own name in
// Host), a cross-origin request, a sandboxed page (Origin: null) and requests to paths that
// are not the MCP endpoint. None may reach the server, and the user's bearer goes nowhere;
// a host on loopback keeps working, and gets the bearer added.
func TestWebPagesGetNothing(t *testing.T) {
	g := startGuarded(t, Options{}, HTTPOptions{}, ServerOptions{})
	attacks := []struct {
		name, method, path, host, origin string
		status                           int
	}{
		{"rebinding", "POST", "/mcp", "evil.example:" + g.port, "", http.StatusForbidden},
		{"rebinding with a loopback origin", "POST", "/mcp", "evil.example:" + g.port, "http://localhost:" + g.port, http.StatusForbidden},
		{"loopback name, another port", "POST", "/mcp", "127.0.0.1:1", "", http.StatusForbidden},
		{"cross-origin", "POST", "/mcp", "", "http://evil.example", http.StatusForbidden},
		{"cross-origin https", "POST", "/mcp", "", "https://evil.example:443", http.StatusForbidden},
		{"sandboxed page", "POST", "/mcp", "", "null", http.StatusForbidden},
		{"another path", "GET", "/admin", "", "", http.StatusNotFound},
		{"another path, POST", "POST", "/admin", "", "", http.StatusNotFound},
		{"another metadata document", "GET", "/.well-known/other", "", "", http.StatusNotFound},
		{"a dot segment", "GET", "/.well-known/oauth-protected-resource/../../admin", "", "", http.StatusNotFound},
		{"an encoded slash", "GET", "/.well-known/oauth-protected-resource%2F..%2F..%2Fadmin", "", "", http.StatusNotFound},
	}
	for i, a := range attacks {
		resp, body := g.send(t, a.method, a.path, a.host, a.origin, discover(i))
		refusedWith(t, a.name, resp, body, a.status)
	}
	if reqs := g.up.Requests(); len(reqs) > 0 {
		t.Fatalf("refused requests reached the server: %+v", reqs)
	}
	if g.up.Saw("user-secret-4f1c") {
		t.Fatal("the user's bearer reached the server with a refused request")
	}
	waitFor(t, "the refusals on stderr", 5*time.Second, func() bool {
		for _, ev := range g.ev.of(EventNotice) {
			if strings.Contains(ev.Text, "refused POST /mcp") && strings.Contains(ev.Text, "evil.example") {
				return true
			}
		}
		return false
	})

	// A host on loopback, with or without an Origin of its own, keeps working.
	for i, c := range []struct{ host, origin string }{{"", ""}, {"localhost:" + g.port, ""}, {"", "http://localhost:6274"}, {"", "http://127.0.0.1:" + g.port}, {"[::1]:" + g.port, ""}} {
		resp, body := g.send(t, "POST", "/mcp", c.host, c.origin, discover(100+i))
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
			t.Errorf("a host (Host %q, Origin %q): %d %s", c.host, c.origin, resp.StatusCode, body)
		}
	}
	if !g.up.Saw("user-secret-4f1c") {
		t.Error("the user's bearer was not added to the host's requests")
	}
	// Its OAuth metadata passes, without the user's credentials.
	resp, body := g.send(t, "GET", "/.well-known/oauth-protected-resource/mcp", "", "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "authorization_servers") {
		t.Errorf("protected resource metadata: %d %s", resp.StatusCode, body)
	}
	for _, r := range g.up.Requests() {
		if r.Path != "/mcp" && r.Header.Get("Authorization") != "" {
			t.Errorf("the user's bearer went to %s", r.Path)
		}
		if r.Path != "/mcp" && r.Path != "/.well-known/oauth-protected-resource/mcp" {
			t.Errorf("forwarded %s", r.Path)
		}
	}
}

// TestAllowedHostAndOrigin: a user who serves the proxy under another name, or to a
// browser-based host, says so; only what they named is accepted.
func TestAllowedHostAndOrigin(t *testing.T) {
	g := startGuarded(t, Options{}, HTTPOptions{AllowedHosts: []string{"proxy.internal"}, AllowedOrigins: []string{"https://app.example"}}, ServerOptions{})
	ok := []struct{ host, origin string }{{"proxy.internal:" + g.port, ""}, {"proxy.internal", ""}, {"", "https://app.example"}, {"", "https://APP.example:443"}}
	for i, c := range ok {
		// The demo behind checks Origin itself (and refuses these): the proxy's part is to
		// forward them.
		before := len(g.up.Requests())
		resp, body := g.send(t, "POST", "/mcp", c.host, c.origin, discover(i))
		if len(g.up.Requests()) != before+1 {
			t.Errorf("allowed (Host %q, Origin %q) was not forwarded: %d %s", c.host, c.origin, resp.StatusCode, body)
		}
	}
	for i, c := range []struct{ host, origin string }{{"other.internal:" + g.port, ""}, {"", "https://app.example.evil"}, {"", "http://app.example"}} {
		resp, body := g.send(t, "POST", "/mcp", c.host, c.origin, discover(10+i))
		refusedWith(t, fmt.Sprintf("Host %q, Origin %q", c.host, c.origin), resp, body, http.StatusForbidden)
	}
	if _, err := New(Options{}).Handler(HTTPOptions{Upstream: g.up.URL, AllowedOrigins: []string{"app.example"}}); err == nil {
		t.Error("an origin without a scheme was accepted as --allowed-origin")
	}
}

// TestBodiesAreBounded: a body over the cap is refused (announced or chunked) without reaching
// the server, and when the bytes the proxy holds reach its total budget, new requests get 503
// until the held ones are done.
func TestBodiesAreBounded(t *testing.T) {
	g := startGuarded(t, Options{MaxHeld: heldChunk}, HTTPOptions{MaxBody: 4096, BodyTimeout: 5 * time.Second}, ServerOptions{})
	big := discover(1)[:len(discover(1))-1] + `,"pad":"` + strings.Repeat("x", 5000) + `"}`
	resp, body := g.send(t, "POST", "/mcp", "", "", big)
	refusedWith(t, "an announced large body", resp, body, http.StatusRequestEntityTooLarge)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", g.url, io.MultiReader(strings.NewReader(big))) // no length: chunked
	req.Header = modernHeaders("tools/list", "")
	req.Header.Set("Content-Type", "application/json")
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	refusedWith(t, "a chunked large body", resp2, string(b), http.StatusRequestEntityTooLarge)
	if len(g.up.Requests()) > 0 {
		t.Fatal("an oversized body reached the server")
	}

	// A host sends half a body and waits: it holds the whole budget.
	conn, err := net.Dial("tcp", "127.0.0.1:"+g.port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := discover(2)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: %d\r\n\r\n%s", g.port, len(msg), msg[:10])
	waitFor(t, "the half body to be held", 5*time.Second, func() bool { return g.p.mem.used.Load() > 0 })
	resp, body = g.send(t, "POST", "/mcp", "", "", discover(3))
	refusedWith(t, "a request past the budget", resp, body, http.StatusServiceUnavailable)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	fmt.Fprint(conn, msg[10:])
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the held request: %v %v", r, err)
	}
	r.Body.Close()
	waitFor(t, "the budget to be given back", 5*time.Second, func() bool { return g.p.mem.used.Load() == 0 })
	if resp, body := g.send(t, "POST", "/mcp", "", "", discover(4)); resp.StatusCode != http.StatusOK {
		t.Errorf("after the budget was given back: %d %s", resp.StatusCode, body)
	}
}

// TestSlowHostsAreCut plays slowloris: a host that never finishes its headers, and one that
// trickles its body, are cut by the timeouts, and nothing reaches the server.
func TestSlowHostsAreCut(t *testing.T) {
	g := startGuarded(t, Options{}, HTTPOptions{BodyTimeout: 300 * time.Millisecond}, ServerOptions{ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	closed := func(what string, conn net.Conn) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		if err != nil && (!errorAs(err, &ne) || ne.Timeout()) {
			t.Errorf("%s: the connection was not closed by the proxy: %v", what, err)
		}
	}
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", "127.0.0.1:"+g.port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	c1 := dial()
	fmt.Fprintf(c1, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: app", g.port)
	closed("headers never finished", c1)

	c2 := dial()
	fmt.Fprintf(c2, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\"", g.port)
	closed("a body that never ends", c2)

	c3 := dial() // an idle kept-alive connection
	closed("an idle connection", c3)
	if len(g.up.Requests()) > 0 {
		t.Fatalf("a slow host's request reached the server: %+v", g.up.Requests())
	}
}

// TestSessionFloodIsBounded: a flood of new session ids (or client names) does not grow the
// proxy's host map past its cap; the proxy says so once, and honest traffic still passes.
func TestSessionFloodIsBounded(t *testing.T) {
	g := startGuarded(t, Options{}, HTTPOptions{}, ServerOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for i := range maxHosts + 200 {
		req, _ := http.NewRequestWithContext(ctx, "POST", g.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", fmt.Sprintf("flood-%06d", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	g.p.mu.Lock()
	n := len(g.p.hosts)
	g.p.mu.Unlock()
	if n > maxHosts {
		t.Fatalf("the proxy tracks %d hosts after the flood, more than its cap %d", n, maxHosts)
	}
	forgot := 0
	for _, ev := range g.ev.of(EventNotice) {
		if strings.Contains(ev.Text, "forgot the one seen least recently") {
			forgot++
		}
	}
	if forgot != 1 {
		t.Errorf("%d notices of forgotten hosts, want 1", forgot)
	}
	if resp, body := g.send(t, "POST", "/mcp", "", "", discover(1)); resp.StatusCode != http.StatusOK {
		t.Errorf("a host after the flood: %d %s", resp.StatusCode, body)
	}
}

func errorAs(err error, target any) bool { return errors.As(err, target) }

// TestStalledHostIsCut: a host that opens a stream and stops reading is cut off after the
// write stall, and the server's stream is closed with it, instead of the proxy holding both
// for ever.
func TestStalledHostIsCut(t *testing.T) {
	ended := make(chan error, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		line := []byte(": " + strings.Repeat("k", 1021) + "\n")
		for range 256 << 10 { // 256 MiB at most
			if _, err := w.Write(line); err != nil {
				ended <- err
				return
			}
			http.NewResponseController(w).Flush()
		}
		ended <- nil
	}))
	t.Cleanup(up.Close)
	g := startGuarded(t, Options{}, HTTPOptions{Upstream: up.URL + "/mcp", WriteStall: 300 * time.Millisecond}, ServerOptions{})
	conn, err := net.Dial("tcp", "127.0.0.1:"+g.port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n", g.port)
	// The host reads nothing more.
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the server sent its whole stream to a host that reads nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a host that stopped reading held the server's stream for 30 s; the write stall is 300 ms")
	}
}

// maxWriter counts what it is given and remembers its largest write.
type maxWriter struct {
	total, largest int
}

func (m *maxWriter) Write(p []byte) (int, error) {
	m.total += len(p)
	m.largest = max(m.largest, len(p))
	return len(p), nil
}

// TestStdioLineIsBounded: a host (and then the server, here cat echoing it) sends one line many
// times the inspection cap. It is forwarded whole and unchanged, but the proxy never holds more
// than the cap of it at once.
func TestStdioLineIsBounded(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat")
	}
	const capBytes, size = 1 << 20, 24 << 20
	ev := &events{}
	p := New(Options{MaxInspect: capBytes, OnEvent: ev.add})
	out := &maxWriter{}
	line := io.MultiReader(io.LimitReader(repeatByte('x'), size-1), strings.NewReader("\n"))
	code, err := p.RunStdio(t.Context(), StdioOptions{Argv: []string{"cat"}, In: line, Out: out, Stderr: io.Discard})
	if err != nil || code != 0 {
		t.Fatalf("RunStdio: %d %v", code, err)
	}
	if out.total != size {
		t.Errorf("the host got %d bytes back, want %d", out.total, size)
	}
	if limit := capBytes + 64<<10; out.largest > limit {
		t.Errorf("the proxy wrote %d bytes at once: it held the line, more than its cap %d", out.largest, limit)
	}
	var n int
	for _, e := range ev.of(EventNotice) {
		if strings.Contains(e.Text, "larger than") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d notices of an uninspected frame, want 2 (one each way)", n)
	}
}

type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestSSEEventsShareTheBudget: an event stream's events count against the proxy's memory
// budget too; one past it passes uninspected and whole, and the budget is given back.
func TestSSEEventsShareTheBudget(t *testing.T) {
	event := "id: 1\ndata: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("y", 100<<10) + `"}}` + "\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, event)
	}))
	t.Cleanup(up.Close)
	g := startGuarded(t, Options{MaxHeld: 64 << 10}, HTTPOptions{Upstream: up.URL + "/mcp"}, ServerOptions{})
	resp, body := g.send(t, "GET", "/mcp", "", "", "")
	if resp.StatusCode != http.StatusOK || body != event {
		t.Fatalf("the host got %d and %d bytes, want the event whole (%d bytes)", resp.StatusCode, len(body), len(event))
	}
	waitFor(t, "the budget to be given back", 5*time.Second, func() bool { return g.p.mem.used.Load() == 0 })
	found := false
	for _, ev := range g.ev.of(EventNotice) {
		found = found || strings.Contains(ev.Text, "its limit")
	}
	if !found {
		t.Error("no notice of the event passed uninspected")
	}
}

// TestNoCorsGETGetsNothing plays a web page's no-cors GET of the MCP endpoint: no Origin,
// Host 127.0.0.1:PORT (it is the proxy's own address), the page's query string, and at most
// the Accept header a page may set. It is refused (405) before anything is forwarded, so the
// user's bearer goes nowhere; a host's GET for its event stream (Accept: text/event-stream and
// Mcp-Session-Id) is forwarded as before.
func TestNoCorsGETGetsNothing(t *testing.T) {
	g := startGuarded(t, Options{}, HTTPOptions{}, ServerOptions{})
	get := func(hdr map[string]string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, g.url+"?steal=1", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if hdr["Mcp-Session-Id"] == "" {
			refusedWith(t, "a page's GET", resp, string(b), http.StatusMethodNotAllowed)
		}
		return resp
	}
	for _, hdr := range []map[string]string{{"Accept": "*/*"}, {"Accept": "text/event-stream"}, {"Accept": "text/event-stream", "Content-Type": "text/plain"}} {
		if r := get(hdr); r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("a page's GET with %v: %d, want 405", hdr, r.StatusCode)
		}
	}
	if reqs := g.up.Requests(); len(reqs) > 0 || g.up.Saw("user-secret-4f1c") {
		t.Fatalf("a page's GET reached the server: %+v", reqs)
	}
	get(map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25"})
	if reqs := g.up.Requests(); len(reqs) != 1 || reqs[0].Method != http.MethodGet {
		t.Fatalf("a host's GET for its stream was not forwarded: %+v", reqs)
	}
}
