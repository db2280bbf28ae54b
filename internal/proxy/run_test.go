package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

var proxyingLine = regexp.MustCompile(`mcptask: proxying (http://\S+/mcp) -> (\S+)\n`)

// startRun runs Run until the test ends and returns the endpoint it printed, its stderr, and a
// func that stops it and returns what Run returned.
func startRun(t *testing.T, o Options, r RunOptions) (endpoint string, stderr *lockedBuffer, stop func() error) {
	t.Helper()
	stderr = &lockedBuffer{}
	r.Stderr = stderr
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, o, r); done <- err }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				t.Error("Run did not return after its context ended")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	var m []string
	waitFor(t, "the proxy to print its endpoint", 10*time.Second, func() bool {
		m = proxyingLine.FindStringSubmatch(stderr.String())
		return m != nil
	})
	return m[1], stderr, stop
}

// TestRunHTTP: Run serves the server on a free loopback port, says where on stderr (with the
// ledger's path), relays a host's call, writes the task to the ledger (signed with Sign) and a
// line for it on stderr, and returns nil once its context ends.
func TestRunHTTP(t *testing.T) {
	up := demoUpstream(t, demo.Options{})
	st := state.Open(filepath.Join(t.TempDir(), "tasks.json"))
	sign := func(r *state.Record) { r.MAC = "signed-by-the-run" }
	endpoint, stderr, stop := startRun(t, Options{Server: state.Server{URL: up}}, RunOptions{URL: up, Ledger: st, Sign: sign})
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Errorf("endpoint %s, want 127.0.0.1 and a free port", endpoint)
	}
	if !strings.Contains(stderr.String(), "the hosts' tasks go to the ledger "+st.Path()) || strings.Contains(stderr.String(), "warning") {
		t.Errorf("stderr does not name the ledger:\n%s", stderr)
	}
	c := client(t, endpoint, rpc.VersionModern)
	res, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 1}})
	if err != nil || res.Task == nil {
		t.Fatalf("call through the proxy: %v %+v", err, res)
	}
	if rec := record(t, st, res.Task.TaskID); rec == nil || rec.Via != Via || rec.MAC != "signed-by-the-run" {
		t.Errorf("the task is not in the ledger as the proxy's, signed: %+v", rec)
	}
	waitFor(t, "the task's line on stderr", 5*time.Second, func() bool {
		return strings.Contains(stderr.String(), res.Task.TaskID+" created by ")
	})
	if err := stop(); err != nil {
		t.Errorf("Run returned %v after its context ended, want nil", err)
	}
}

// TestRunView: with a View, the events go to the view's queue instead of stderr, the view gets
// the endpoint, the server and the ledger, and the proxy stops when the view returns.
func TestRunView(t *testing.T) {
	up := demoUpstream(t, demo.Options{})
	st := state.Open(filepath.Join(t.TempDir(), "tasks.json"))
	infos := make(chan ViewInfo, 1)
	got := &events{}
	quit := make(chan struct{})
	view := func(ctx context.Context, v ViewInfo, q *EventQueue) error {
		infos <- v
		go q.Run(got.add)
		defer q.Close(time.Second)
		select {
		case <-ctx.Done():
		case <-quit:
		}
		return nil
	}
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := Run(t.Context(), Options{}, RunOptions{URL: up, Listen: "127.0.0.1:0", Ledger: st, View: view, Stderr: stderr})
		done <- err
	}()
	var v ViewInfo
	select {
	case v = <-infos:
	case <-time.After(10 * time.Second):
		t.Fatal("the view was not started")
	}
	if !strings.HasPrefix(v.Endpoint, "http://127.0.0.1:") || v.Upstream != up || v.Ledger != st.Path() {
		t.Errorf("view info %+v", v)
	}
	c := client(t, v.Endpoint, rpc.VersionModern)
	res, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 1}})
	if err != nil || res.Task == nil {
		t.Fatalf("call through the proxy: %v %+v", err, res)
	}
	waitFor(t, "the view to get the task", 5*time.Second, func() bool { return len(got.of(EventCreated)) > 0 })
	if strings.Contains(stderr.String(), " created by ") {
		t.Errorf("a view is on, yet the events went to stderr too:\n%s", stderr)
	}
	close(quit)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after the view was quit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the view was quit")
	}
}

// TestRunStdioOverHTTP: a stdio server (a real child process) is served to HTTP hosts on the
// same kind of listener, and the record names the in-process backend, not a network address.
func TestRunStdioOverHTTP(t *testing.T) {
	argv := []string{os.Args[0]}
	endpoint, stderr, stop := startRun(t, Options{},
		RunOptions{Argv: argv, Env: []string{"PROXY_TEST_ROLE=demo", quickExit}, Listen: "127.0.0.1:0"})
	if !strings.Contains(stderr.String(), "serving the stdio server "+argv[0]+" over HTTP") || !strings.Contains(stderr.String(), "-> "+stdioBackendURL) {
		t.Errorf("stderr:\n%s", stderr)
	}
	c := client(t, endpoint, rpc.VersionLegacy)
	if _, _, err := c.ListTools(t.Context()); err != nil {
		t.Fatalf("tools/list through the proxy to the stdio server: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
}

// TestRunStdio: the stdio proxy relays its host's frames to a real server process and returns
// the server's exit code once the host closes its end.
func TestRunStdio(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}` + "\n")
	done := make(chan error, 1)
	go func() {
		code, err := Run(t.Context(), Options{}, RunOptions{Argv: []string{os.Args[0]}, Env: []string{"PROXY_TEST_ROLE=demo", quickExit}, In: inR, Out: out, Stderr: &lockedBuffer{}})
		if err == nil && code != 0 {
			err = fmt.Errorf("exit code %d", code)
		}
		done <- err
	}()
	waitFor(t, "the server's answer through the proxy", 10*time.Second, func() bool { return strings.Contains(out.String(), `"id":1`) })
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the host closed stdin")
	}
}

// TestRunUsageErrors: flags that do not fit a shape of the proxy, and a --listen that is no
// address, are UsageErrors and nothing is served.
func TestRunUsageErrors(t *testing.T) {
	for name, r := range map[string]RunOptions{
		"drop --listen":  {URL: "http://127.0.0.1:1/mcp", HostStdio: true, Listen: "127.0.0.1:0"},
		"give --server":  {Argv: []string{"x"}, HostStdio: true},
		"want HOST:PORT": {URL: "http://127.0.0.1:1/mcp", Listen: "7070"},
	} {
		r.Stderr = &lockedBuffer{}
		_, err := Run(t.Context(), Options{}, r)
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), name) {
			t.Errorf("%+v: %v, want a exitcode.UsageError saying %q", r, err, name)
		}
	}
}
