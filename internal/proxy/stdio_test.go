package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
	"github.com/mcptask/mcptask/internal/state"
)

// TestMain lets the test binary play the parts of a stdio test in child processes:
// PROXY_TEST_ROLE=demo is the demo server on stdio, PROXY_TEST_ROLE=proxy is a stdio proxy in
// front of it (its ledger and record named by PROXY_TEST_LEDGER and PROXY_TEST_RECORD). The
// demo validates every frame both ways against the spec's schemas (those in
// PROXY_TEST_SPEC_DIR) and logs what fails to PROXY_TEST_SPEC_LOG, which the test checks
// (specEnv); PROXY_TEST_SPEC_SERVER_ONLY=1 checks only what the demo sends.
func TestMain(m *testing.M) {
	switch os.Getenv("PROXY_TEST_ROLE") {
	case "demo":
		srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond, Store: os.Getenv("PROXY_TEST_STORE")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var in io.Reader = os.Stdin
		var out io.Writer = os.Stdout
		if log := os.Getenv("PROXY_TEST_SPEC_LOG"); log != "" {
			s := spectest.ChildStream(os.Getenv("PROXY_TEST_SPEC_DIR"), log, os.Getenv("PROXY_TEST_SPEC_SERVER_ONLY") == "1")
			in, out = s.ClientReader(in), s.ServerWriter(out)
		}
		_ = srv.ServeStdio(context.Background(), in, out)
		srv.Close()
		os.Exit(0)
	case "proxy":
		os.Exit(runTestProxy())
	case "tagger":
		os.Exit(runTagger(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// specEnv returns the environment that makes a demo child validate its frames, and fails t
// when the test ends with what the child logged, except the failures that contain one of
// known. Without the schemas the test skips (fails under CI=true), as spectest.Load does.
func specEnv(t *testing.T, serverOnly bool, known ...string) []string {
	t.Helper()
	dir, err := spectest.SpecDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("spectest: %v", err)
		}
		t.Skipf("spectest: %v", err)
	}
	log := filepath.Join(t.TempDir(), "spec-errors.log")
	t.Cleanup(func() {
		errs, err := spectest.ReadLog(log)
		if err != nil {
			t.Error(err)
		}
	next:
		for _, e := range errs {
			for _, k := range known {
				if strings.Contains(e, k) {
					continue next
				}
			}
			t.Errorf("a stdio frame does not match the spec schema: %s", e)
		}
	})
	env := []string{"PROXY_TEST_SPEC_DIR=" + dir, "PROXY_TEST_SPEC_LOG=" + log}
	if serverOnly {
		env = append(env, "PROXY_TEST_SPEC_SERVER_ONLY=1")
	}
	return env
}

// quickExit keeps a -race child from sleeping a second at exit (the race detector's default),
// which would slow every stdio test down.
const quickExit = "GORACE=atexit_sleep_ms=0"

func runTestProxy() int {
	argv := []string{os.Args[0]}
	dir, _ := os.Getwd()
	opts := Options{Server: state.Server{Command: argv, Dir: dir}}
	if p := os.Getenv("PROXY_TEST_LEDGER"); p != "" {
		opts.Ledger = ledger.New(state.Open(p), ledger.Options{})
	}
	if p := os.Getenv("PROXY_TEST_RECORD"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return 1
		}
		defer f.Close()
		opts.Record = f
	}
	opts.OnEvent = func(ev Event) {
		if ev.Kind == EventViolation {
			fmt.Fprintf(os.Stderr, "violation %s/%s\n", ev.Violation.Rule, ev.Violation.Peer)
		}
	}
	p := New(opts)
	defer p.Close()
	code, err := p.RunStdio(context.Background(), StdioOptions{Argv: argv, Env: []string{"PROXY_TEST_ROLE=demo", quickExit}, In: os.Stdin, Out: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// TestStdioRelayKeepsEveryTask: mcptask's client starts the proxy as its stdio server, the
// proxy starts the demo server; in both eras the task is in the ledger when the host has its
// id, recorded with the command that reaches the server again.
func TestStdioRelayKeepsEveryTask(t *testing.T) {
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		t.Run(era, func(t *testing.T) {
			dir := t.TempDir()
			ledger, recPath := filepath.Join(dir, "tasks.json"), filepath.Join(dir, "rec.ndjson")
			tr, err := rpc.NewStdioTransport(t.Context(), rpc.StdioOptions{Argv: []string{os.Args[0]},
				Env: append(specEnv(t, false), "PROXY_TEST_ROLE=proxy", "PROXY_TEST_LEDGER="+ledger, "PROXY_TEST_RECORD="+recPath, quickExit)})
			if err != nil {
				t.Fatal(err)
			}
			c := rpc.NewClient(tr, rpc.ClientOptions{Protocol: era, Info: rpc.Implementation{Name: "stdio-host", Version: "1"}, ProbeTimeout: 5 * time.Second})
			if err := c.Connect(t.Context()); err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 2}})
			if err != nil || res.Task == nil {
				t.Fatalf("call: %v %+v", err, res)
			}
			rec := record(t, state.Open(ledger), res.Task.TaskID)
			if rec == nil {
				t.Fatalf("task %s is not in the ledger when the host learns of it", res.Task.TaskID)
			}
			if rec.Via != Via || rec.Era != era || rec.Tool != "sleep" || len(rec.Server.Command) != 1 || rec.Server.Command[0] != os.Args[0] || rec.SessionID != "" {
				t.Errorf("record %+v", rec)
			}
			for {
				task, err := c.GetTask(t.Context(), res.Task.TaskID)
				if err != nil {
					t.Fatal(err)
				}
				if task.Status.Terminal() {
					break
				}
				time.Sleep(task.PollInterval)
			}
			c.Close() // the host goes: the proxy shuts the server down and exits
			rec = record(t, state.Open(ledger), res.Task.TaskID)
			if rec == nil || rec.Status != "completed" {
				t.Errorf("after the proxy exited the record is %+v, want completed", rec)
			}
			data, _ := os.ReadFile(recPath)
			lines := checkRecord(t, string(data))
			var hostFrames, serverFrames int
			for _, l := range lines {
				if l["kind"] == "frame" && l["peer"] == "host" {
					hostFrames++
				}
				if l["kind"] == "frame" && l["peer"] == "server" {
					serverFrames++
				}
			}
			if hostFrames < 3 || serverFrames < 3 {
				t.Errorf("record has %d host frames and %d server frames", hostFrames, serverFrames)
			}
		})
	}
}

// TestStdioTransparent sends the same frames to the demo server directly and through the
// proxy and compares the bytes that come back; a garbage line goes through as it is.
func TestStdioTransparent(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	// The garbage line is sent on purpose: only the demo's frames must be valid (its answer to
	// the garbage has no id: the MCP schemas allow a string, an integer or none, not null).
	spec := specEnv(t, true)
	talk := func(env ...string) ([]string, string) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(append(os.Environ(), spec...), append(env, quickExit)...)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(out)
		var got []string
		for _, f := range frames {
			fmt.Fprintln(in, f)
			if strings.Contains(f, `"id"`) {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("no answer to %s: %v", f, err)
				}
				got = append(got, line)
			}
		}
		// The answer to the garbage line, if any, comes after the last one asked for.
		in.Close()
		rest, _ := io.ReadAll(br)
		if len(rest) > 0 {
			got = append(got, string(rest))
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		return got, stderr.String()
	}
	direct, _ := talk("PROXY_TEST_ROLE=demo")
	proxied, stderr := talk("PROXY_TEST_ROLE=proxy")
	if strings.Join(direct, "") != strings.Join(proxied, "") {
		t.Errorf("direct:\n%s\nthrough the proxy:\n%s", strings.Join(direct, ""), strings.Join(proxied, ""))
	}
	if !strings.Contains(stderr, "violation malformed/host") {
		t.Errorf("the garbage line was not reported: %s", stderr)
	}
}

// TestStdioServerStderrIsCleaned: a stdio server that writes a window-title sequence, a
// bidirectional override and a C1 control to its stderr has its lines reach the proxy's
// stderr (often a terminal) without them, the text itself kept line by line.
func TestStdioServerStderrIsCleaned(t *testing.T) {
	var errOut lockedBuffer
	p := New(Options{})
	defer p.Close()
	_, err := p.RunStdio(t.Context(), StdioOptions{
		Argv: []string{"sh", "-c", `printf 'one \033]0;pwned\007two\n\342\200\256three\302\233\n' >&2`},
		In:   strings.NewReader(""), Out: io.Discard, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	got := errOut.String()
	if strings.ContainsAny(got, "\x1b\x07\u202e\u009b") || !strings.Contains(got, "one ") || !strings.Contains(got, "three\n") {
		t.Fatalf("the server's stderr reached the proxy's as %q", got)
	}
}
