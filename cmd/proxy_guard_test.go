package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
	"github.com/mcptask/mcptask/internal/proxy"
)

// proxyEnv runs `mcptask proxy args...` in-process with env and the given streams, and returns
// its endpoint once it listens. It stops when the test ends.
func proxyEnv(t *testing.T, ios *IOStreams, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errOut := ios.ErrOut.(*lockedBuffer)
	f := NewFactory(ios)
	f.Getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "MCPTASK_STATE" {
			return testLedger(t)
		}
		return ""
	}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, f, append([]string{"proxy"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("the proxy exited %d:\n%s", code, errOut.String())
		}
	})
	var endpoint string
	waitFor(t, "the proxy to listen", 10*time.Second, func() bool {
		_, rest, ok := strings.Cut(errOut.String(), "mcptask: proxying ")
		endpoint, _, _ = strings.Cut(rest, " ")
		return ok
	})
	return endpoint
}

// hostPost sends a 2026-07-28 request to the proxy as a host (or a page) would.
func hostPost(ctx context.Context, endpoint, host, origin, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", strings.Split(strings.Split(body, `"method":"`)[1], `"`)[0])
	if _, rest, ok := strings.Cut(body, `"name":"`); ok {
		req.Header.Set("Mcp-Name", strings.Split(rest, `"`)[0])
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

const hostMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw-host","version":"1"}}`

// TestProxyRefusesWebPages plays a web page against `mcptask proxy --bearer-env`: a request
// rebinding the page's name to the proxy's port and a cross-origin request get 403, a request
// for another path 404, and none reaches the server or carries the user's bearer; a host on
// loopback gets through, with the bearer added.
func TestProxyRefusesWebPages(t *testing.T) {
	up := hostile.Start(t, "proxy-upstream", demo.Options{})
	const secret = "cmd-level-secret-93ab"
	errOut := &lockedBuffer{}
	endpoint := proxyEnv(t, &IOStreams{In: strings.NewReader(""), Out: &lockedBuffer{}, ErrOut: errOut},
		map[string]string{"TOK": secret}, "--server", up.URL, "--bearer-env", "TOK", "--allowed-origin", "https://app.example")
	port := endpoint[strings.LastIndex(endpoint, ":")+1 : strings.LastIndex(endpoint, "/")]
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + hostMeta + `}}`
	for _, a := range []struct {
		name, url, host, origin string
		status                  int
	}{
		{"rebinding", endpoint, "evil.example:" + port, "", http.StatusForbidden},
		{"cross-origin", endpoint, "", "http://evil.example", http.StatusForbidden},
		{"another path", strings.TrimSuffix(endpoint, "/mcp") + "/admin", "", "", http.StatusNotFound},
		{"another metadata path", strings.TrimSuffix(endpoint, "/mcp") + "/.well-known/other", "", "", http.StatusNotFound},
	} {
		code, body, err := hostPost(t.Context(), a.url, a.host, a.origin, list)
		if err != nil || code != a.status || !strings.Contains(body, `"jsonrpc":"2.0"`) || strings.Contains(body, `"id"`) {
			t.Errorf("%s: %d %s %v, want %d and a JSON-RPC error", a.name, code, body, err, a.status)
		}
	}
	if n := len(up.Requests()); n > 0 {
		t.Fatalf("%d refused requests reached the server", n)
	}
	if up.Saw(secret) {
		t.Fatal("the user's bearer reached the server with a page's request")
	}
	waitFor(t, "the refusals on stderr", 5*time.Second, func() bool {
		s := errOut.String()
		return strings.Contains(s, "refused POST /mcp") && strings.Contains(s, "evil.example") && strings.Contains(s, "refused POST /admin")
	})
	// A host, and the browser-based host the user allowed, get through.
	for _, origin := range []string{"", "https://app.example"} {
		before := len(up.Requests())
		if code, body, err := hostPost(t.Context(), endpoint, "", origin, list); err != nil || len(up.Requests()) != before+1 {
			t.Errorf("a host (Origin %q): %d %s %v", origin, code, body, err)
		}
	}
	if !up.Saw(secret) {
		t.Error("the user's bearer was not added to the host's requests")
	}
}

// stuckTerminal is a terminal that stops taking output once paused (ctrl+s, a hung terminal
// emulator, a pty nobody reads): every write blocks until the test ends.
type stuckTerminal struct {
	lockedBuffer
	mu      sync.Mutex
	paused  bool
	blocked int
	release chan struct{}
}

func (s *stuckTerminal) Write(p []byte) (int, error) {
	s.mu.Lock()
	paused := s.paused
	s.mu.Unlock()
	if paused {
		s.mu.Lock()
		s.blocked++
		s.mu.Unlock()
		<-s.release
	}
	return s.lockedBuffer.Write(p)
}

func (s *stuckTerminal) pause() { s.mu.Lock(); s.paused = true; s.mu.Unlock() }

func (s *stuckTerminal) stuck() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.blocked > 0 }

// TestProxyStuckViewDoesNotHoldTraffic: the live view's terminal stops taking output, and the
// relayed traffic goes on as before; the events the view could not take are dropped (and
// counted), not waited for. Before, the view's buffer filled and the relay blocked on it.
func TestProxyStuckViewDoesNotHoldTraffic(t *testing.T) {
	old := proxy.EventBuffer
	proxy.EventBuffer = 8 // what a busy proxy fills in a moment
	t.Cleanup(func() { proxy.EventBuffer = old })
	up := hostile.Start(t, "proxy-upstream", demo.Options{})
	term := &stuckTerminal{release: make(chan struct{})}
	inR, inW := io.Pipe()
	ios := &IOStreams{In: inR, Out: term, ErrOut: &lockedBuffer{}}
	ios.SetTTY(true, true, true)
	ios.SetSize(100, 30)
	// Cleanups run last-in first-out: unblock the terminal before the proxy is stopped.
	endpoint := proxyEnv(t, ios, map[string]string{"NO_COLOR": "1"}, "--server", up.URL, "--no-ledger")
	t.Cleanup(func() { close(term.release); inW.Close() })
	waitFor(t, "the view", 10*time.Second, func() bool { return strings.Contains(term.String(), "no tasks yet") })
	term.pause()

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Each task a host creates is an event for the view: the first makes the view draw, and
	// its write to the terminal hangs.
	for i := range 40 {
		if i == 1 {
			waitFor(t, "the view to hang on its terminal", 10*time.Second, term.stuck)
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":1},%s}}`, i, hostMeta)
		code, answer, err := hostPost(ctx, endpoint, "", "", body)
		if err != nil {
			t.Fatalf("request %d through the proxy while its view is stuck: %v", i, err)
		}
		if i == 0 && (code != http.StatusOK || !strings.Contains(answer, `"resultType":"task"`)) {
			t.Fatalf("the demo did not create a task: %d %s", code, answer)
		}
	}
}
