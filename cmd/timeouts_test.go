package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// Issue 20, class 7 (time) and class 9 (the checker bounds its own work): servers that try to
// hold mcptask up. Each test runs the real binary (this test binary standing in for it) and
// asserts that it ends within a bound, with the exit code of the table and a message that
// names the server and what mcptask was waiting for.

// silentStdioArg makes this binary a stdio "server" that reads everything and never answers.
const silentStdioArg = "mcptask-test-silent-stdio"

func init() {
	if len(os.Args) > 1 && os.Args[1] == silentStdioArg {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// runBinary runs mcptask as a child process with args and env, and kills it if it is still
// running after hard (the test then fails: a hang is exactly what these tests catch).
func runBinary(t *testing.T, hard time.Duration, env map[string]string, args ...string) (cliResult, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hard)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.WaitDelay = time.Second
	base := []string{"MCPTASK_TEST_MAIN=1", "MCPTASK_STATE=" + testLedger(t), "XDG_STATE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "MCPTASK_") && name != "XDG_STATE_HOME" && name != "HOME" && name != "CI" &&
			name != "GITHUB_ACTIONS" && name != "GITLAB_CI" {
			base = append(base, kv)
		}
	}
	for k, v := range env {
		base = append(base, k+"="+v)
	}
	cmd.Env = base
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("mcptask %s was still running after %s (killed)\nstderr:\n%s", strings.Join(args, " "), hard, errOut.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}, took
}

// bounded is how long a run given a 1 s bound may take in all: the bound, plus the start of
// a process built with -race on a busy machine. Shorter than hostile.SlowDiscoveryDelay, so a
// server that answers the opening late is not simply waited for.
const bounded = 4 * time.Second

// shortConnect shortens the default bound on a server's first answer, so that the tests of
// "no --timeout" are fast.
var shortConnect = map[string]string{"MCPTASK_CONNECT_TIMEOUT": "1s"}

// opening is the request of the opening a silent server leaves unanswered, by era.
var opening = map[string]string{"2026-07-28": "server/discover", "2025-11-25": "initialize"}

type timeCase struct {
	name string
	env  map[string]string
	args []string
	code int
	want []string // in stderr
}

func runTimeCases(t *testing.T, cases []timeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, took := runBinary(t, 30*time.Second, tc.env, tc.args...)
			if took > bounded {
				t.Errorf("took %s, want at most %s", took, bounded)
			}
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d", r.Code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
			}
		})
	}
}

// TestTimeoutBoundsTheOpening: a server that accepts the connection, reads the request and
// never answers (silent-handshake), or sends headers and then nothing (stall-after-headers),
// or answers the opening only after longer than the bound (slow-discovery). --timeout bounds
// everything from the start of the command (exit 124); without it, --connect-timeout
// ($MCPTASK_CONNECT_TIMEOUT) bounds the first answer (exit 1). In both eras, for call, get,
// result, cancel, tools, list --remote, watch and check.
func TestTimeoutBoundsTheOpening(t *testing.T) {
	silent := hostile.Start(t, "silent-handshake", demo.Options{})
	stall := hostile.Start(t, "stall-after-headers", demo.Options{})
	slow := hostile.Start(t, "slow-discovery", demo.Options{})
	const id = "786512e2-9e0d-44bd-8f29-789f320fe840"
	var cases []timeCase
	for _, era := range eras {
		step := opening[era]
		noAnswer := []string{silent.URL, "did not answer " + step + " within 1s", "--connect-timeout"}
		cases = append(cases,
			timeCase{"call-timeout/" + era, nil, []string{"call", "echo", "--arg", "text=hi", "--server", silent.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{silent.URL, step}},
			timeCase{"call-default/" + era, shortConnect, []string{"call", "echo", "--arg", "text=hi", "--server", silent.URL, "--protocol", era},
				ExitFailure, noAnswer},
			timeCase{"get-default/" + era, shortConnect, []string{"get", id, "--server", silent.URL, "--protocol", era},
				ExitFailure, noAnswer},
			timeCase{"list-remote-default/" + era, shortConnect, []string{"list", "--remote", "--server", silent.URL, "--protocol", era},
				ExitFailure, noAnswer},
			timeCase{"result-timeout/" + era, nil, []string{"result", id, "--server", silent.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{silent.URL, step}},
			timeCase{"cancel-default/" + era, shortConnect, []string{"cancel", id, "--server", silent.URL, "--protocol", era},
				ExitFailure, noAnswer},
			timeCase{"tools-default/" + era, shortConnect, []string{"tools", "--server", silent.URL, "--protocol", era},
				ExitFailure, noAnswer},
			timeCase{"watch-timeout/" + era, nil, []string{"watch", id, "--server", silent.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{silent.URL, step}},
			timeCase{"check-default/" + era, shortConnect, []string{"check", "--server", silent.URL, "--protocol", era},
				ExitFailure, []string{silent.URL}},
			timeCase{"check-budget/" + era, nil, []string{"check", "--server", silent.URL, "--protocol", era, "--budget", "1s"},
				ExitFailure, []string{silent.URL}},
			timeCase{"stall-call-timeout/" + era, nil, []string{"call", "echo", "--arg", "text=hi", "--server", stall.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{stall.URL, step}},
			timeCase{"stall-get-default/" + era, shortConnect, []string{"get", id, "--server", stall.URL, "--protocol", era},
				ExitFailure, []string{stall.URL, "did not answer " + step}},
			timeCase{"slow-call-timeout/" + era, nil, []string{"call", "echo", "--arg", "text=hi", "--server", slow.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{slow.URL, step}},
		)
	}
	// --protocol auto: the probe and the fallback share the one bound.
	cases = append(cases,
		timeCase{"call-timeout/auto", nil, []string{"call", "echo", "--arg", "text=hi", "--server", silent.URL, "--timeout", "1s"},
			ExitTimeout, []string{silent.URL, "server/discover"}},
		timeCase{"slow-call-default/auto", shortConnect, []string{"call", "echo", "--arg", "text=hi", "--server", slow.URL},
			ExitFailure, []string{slow.URL, "did not answer server/discover within 1s"}},
		timeCase{"connect-timeout-flag", nil, []string{"get", id, "--server", silent.URL, "--connect-timeout", "1s"},
			ExitFailure, []string{silent.URL, "did not answer server/discover within 1s"}},
		timeCase{"connect-timeout-negative", nil, []string{"get", id, "--server", silent.URL, "--connect-timeout", "-1s"},
			ExitUsage, []string{"--connect-timeout -1s"}},
		timeCase{"connect-timeout-env-bad", map[string]string{"MCPTASK_CONNECT_TIMEOUT": "soon"}, []string{"get", id, "--server", silent.URL},
			ExitUsage, []string{"$MCPTASK_CONNECT_TIMEOUT"}},
	)
	runTimeCases(t, cases)
}

// TestTimeoutBoundsOAuth: a server whose authorization server never answers its metadata
// requests. OAuth discovery happens inside the opening, so the same bounds hold: --timeout
// (exit 124) and, without it, --connect-timeout (exit 1), each saying it ended during OAuth.
func TestTimeoutBoundsOAuth(t *testing.T) {
	s := hostile.Start(t, "silent-authorization-server", demo.Options{})
	var cases []timeCase
	for _, era := range eras {
		cases = append(cases,
			timeCase{"call-timeout/" + era, nil, []string{"call", "echo", "--server", s.URL, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{s.URL, opening[era], "during OAuth"}},
			timeCase{"call-default/" + era, shortConnect, []string{"call", "echo", "--server", s.URL, "--protocol", era},
				ExitFailure, []string{s.URL, "did not answer " + opening[era] + " within 1s", "during OAuth"}},
		)
	}
	runTimeCases(t, cases)
}

// TestTimeoutBoundsAStdioHandshake: a stdio child that reads every request and never answers
// (not even initialize) is given up on the same way.
func TestTimeoutBoundsAStdioHandshake(t *testing.T) {
	child := strings.Join(quoteAll([]string{os.Args[0], silentStdioArg}), " ")
	server := "stdio:" + os.Args[0] + " " + silentStdioArg
	var cases []timeCase
	for _, era := range append([]string{"auto"}, eras...) {
		step := opening[era]
		if era == "auto" {
			step = "server/discover"
		}
		cases = append(cases,
			timeCase{"call-timeout/" + era, nil, []string{"call", "echo", "--stdio", child, "--protocol", era, "--timeout", "1s"},
				ExitTimeout, []string{server, step}},
			timeCase{"call-default/" + era, shortConnect, []string{"call", "echo", "--stdio", child, "--protocol", era},
				ExitFailure, []string{server, "did not answer " + step + " within 1s"}},
			timeCase{"get-default/" + era, shortConnect, []string{"get", "786512e2", "--stdio", child, "--protocol", era},
				ExitFailure, []string{server, "did not answer"}},
		)
	}
	runTimeCases(t, cases)
}

// TestNoAnswerIsAStableJSONError: the --json error of a server that never answered carries
// the table's name for exit 1 and reason "no_answer", so a script can tell it from others.
func TestNoAnswerIsAStableJSONError(t *testing.T) {
	silent := hostile.Start(t, "silent-handshake", demo.Options{})
	r, took := runBinary(t, 30*time.Second, shortConnect, "call", "echo", "--server", silent.URL, "--json")
	if took > bounded || r.Code != ExitFailure {
		t.Fatalf("exit %d after %s\n%s", r.Code, took, r.Stderr)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stderr)), &e); err != nil {
		t.Fatalf("stderr is not one JSON error: %v\n%s", err, r.Stderr)
	}
	if e["type"] != "error" || e["error"] != "error" || e["reason"] != "no_answer" || !strings.Contains(e["message"].(string), silent.URL) {
		t.Errorf("error object %v", e)
	}
}

// TestCheckBudgetAgainstCyclicSchemas: tools whose inputSchemas are $ref cycles, chains,
// deep nests and 10^15-item arrays cost the checker a bounded effort: `check --budget 8s`
// ends in time, in each era, reports those tools as not called (with why: cannot build, or
// cut by the budget), and fails no rule on their account.
func TestCheckBudgetAgainstCyclicSchemas(t *testing.T) {
	s := hostile.Start(t, "cyclic-schema", demo.Options{})
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			// 8s, not less: a quarter of the budget bounds the handshake (a silent server), and
			// on a loaded 2-core machine a race-built server took over a second to answer it.
			r, took := runBinary(t, 60*time.Second, nil, "check", "--server", s.URL, "--protocol", era, "--budget", "8s", "--json")
			t.Logf("check --budget 8s took %s", took)
			if took > 8*time.Second+bounded {
				t.Errorf("check --budget 8s took %s", took)
			}
			var doc struct {
				Results []struct{ ID, Era, Status, Seen string } `json:"results"`
				Tools   []struct {
					Era, Name, Why string
					Called         bool
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("exit %d: check --json: %v\nstdout %s\nstderr %s", r.Code, err, r.Stdout, r.Stderr)
			}
			if r.Code != ExitOK {
				t.Errorf("exit %d, want 0 (budget cuts are skips, never failures)\n%s", r.Code, r.Stderr)
			}
			for _, res := range doc.Results {
				if res.Status == "fail" {
					t.Errorf("%s %s failed: %s", res.Era, res.ID, res.Seen)
				}
			}
			n, schemas := 0, hostile.CyclicSchemas()
			for _, tool := range doc.Tools {
				if _, hostileTool := schemas[tool.Name]; !hostileTool {
					continue
				}
				n++
				if tool.Called || (!strings.Contains(tool.Why, "cannot build its arguments") && !strings.Contains(tool.Why, "cut by the time budget")) {
					t.Errorf("%s %s: called %v, why %q", tool.Era, tool.Name, tool.Called, tool.Why)
				}
			}
			if n != len(schemas) {
				t.Errorf("%d of the %d hostile tools reported\n%s", n, len(schemas), r.Stdout)
			}
		})
	}
}

// TestLoginAtTheBrowserPausesTheConnectBound: a person logging in at the browser takes their
// own time; --connect-timeout must not cut the login short (the login has its own bound),
// while the server's own silence still would.
func TestLoginAtTheBrowserPausesTheConnectBound(t *testing.T) {
	o := newOAuthServer(t)
	env := authTestEnv(t)
	env["MCPTASK_BROWSER"] = "print"
	env["MCPTASK_CONNECT_TIMEOUT"] = "1s"
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	streams := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	streams.SetTTY(true, false, true) // a person at a terminal; results into a pipe
	f := NewFactory(streams)
	f.Getenv = func(k string) string {
		if k == "MCPTASK_STATE" {
			return testLedger(t)
		}
		return env[k]
	}
	done := make(chan int, 1)
	go func() {
		done <- Run(t.Context(), f, []string{"call", "echo", "--arg", "text=logged in", "--server", o.URL})
	}()
	var authURL string
	waitFor(t, "the authorization URL on stderr", 10*time.Second, func() bool {
		for _, l := range strings.Split(errOut.String(), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, strings.TrimSuffix(o.URL, "/mcp")+"/authorize?") {
				authURL = l
				return true
			}
		}
		return false
	})
	// The person takes twice --connect-timeout to log in.
	select {
	case code := <-done:
		t.Fatalf("call ended (exit %d) while the person was logging in\n%s", code, errOut.String())
	case <-time.After(2 * time.Second):
	}
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-done:
		if code != ExitOK || out.String() != "logged in\n" {
			t.Fatalf("exit %d, stdout %q\n%s", code, out.String(), errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("call did not finish after the login")
	}
}
