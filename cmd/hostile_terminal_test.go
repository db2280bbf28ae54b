package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// runMcptask runs the real mcptask (this test binary as its main, MCPTASK_TEST_MAIN) as a
// child process with no TTY, the test's own ledger, no CI environment and the extra
// environment env ("K=V").
func runMcptask(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "CI", k == "GITHUB_ACTIONS", k == "GITLAB_CI", k == "GITHUB_STEP_SUMMARY", strings.HasPrefix(k, "MCPTASK_"):
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "MCPTASK_TEST_MAIN=1", "MCPTASK_STATE="+testLedger(t), "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("mcptask %s: %v", strings.Join(args, " "), err)
	}
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// assertNoTerminalControls fails when stdout or stderr of r holds anything a server must not
// put on a terminal (hostile.TerminalForbidden), or when stderr, where mcptask speaks, holds a
// line that a server forged. (On stdout a result's own lines are the server's to write.)
func assertNoTerminalControls(t *testing.T, what string, r cliResult) {
	t.Helper()
	for name, s := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr} {
		if c := hostile.TerminalForbidden(s); c >= 0 {
			i := strings.IndexRune(s, c)
			t.Errorf("%s: %s holds %U at byte %d: …%q…", what, name, c, i, s[max(0, i-60):min(len(s), i+60)])
		}
		for _, line := range strings.Split(s, "\n") {
			if name == "stderr" && strings.HasPrefix(line, "mcptask: all good") {
				t.Errorf("%s: the server forged a line on %s: %q", what, name, line)
			}
		}
	}
}

// TestHostileTerminal plays a server that puts escape sequences, C1 controls, a forged line and
// bidi and invisible format characters into every string it sends (status messages, a failed
// task's error, elicitation prompts, results, tool names, version lists, JSON-RPC errors), in
// both eras, and asserts that nothing of it reaches stdout or stderr in text mode, --trace
// included, while --json keeps the server's data exact.
func TestHostileTerminal(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := hostile.Start(t, "terminal-escapes", demo.Options{})
			base := []string{"--server", s.URL, "--protocol", era}

			r := runMcptask(t, nil, append([]string{"call", "sleep", "--arg", "seconds=2", "--arg", "steps=2"}, base...)...)
			mustCode(t, r, ExitOK, "call sleep")
			assertNoTerminalControls(t, "call sleep", r)
			// The attack did arrive: the status lines and the result show what is left of it.
			if !strings.Contains(r.Stderr, "all good") || !strings.Contains(r.Stdout, "all good") {
				t.Fatalf("the payload never reached the client:\nstdout %q\nstderr %q", r.Stdout, r.Stderr)
			}

			r = runMcptask(t, nil, append([]string{"call", "fail", "--arg", "message=nope"}, base...)...)
			mustCode(t, r, ExitTaskFailed, "call fail")
			assertNoTerminalControls(t, "call fail", r)
			if !strings.Contains(r.Stderr, "nope") {
				t.Errorf("the failed task's error is not shown: %q", r.Stderr)
			}

			r = runMcptask(t, nil, append([]string{"call", "ask"}, base...)...)
			assertNoTerminalControls(t, "call ask", r)

			r = runMcptask(t, nil, append([]string{"call", "sleep", "--arg", "seconds=30", "--detach"}, base...)...)
			mustCode(t, r, ExitOK, "call --detach")
			id := strings.TrimSpace(r.Stdout)
			for _, args := range [][]string{{"get", id}, {"get", id, "--trace"}, {"list"}, {"list", "--all"}, {"cancel", id}} {
				r = runMcptask(t, nil, args...)
				assertNoTerminalControls(t, strings.Join(args, " "), r)
			}
		})
	}
}

func TestHostileTerminalToolNames(t *testing.T) {
	s := hostile.Start(t, "terminal-escapes-in-tool-names", demo.Options{})
	r := runMcptask(t, nil, "tools", "--server", s.URL)
	mustCode(t, r, ExitOK, "tools")
	assertNoTerminalControls(t, "tools", r)
	if !strings.Contains(r.Stdout, "all good") {
		t.Fatalf("the payload never reached the client: %q", r.Stdout)
	}
}

// TestHostileTerminalVersions: a server/discover that lists only hostile versions makes an
// era-detection error that quotes them; the quote is cleaned.
func TestHostileTerminalVersions(t *testing.T) {
	s := hostile.Start(t, "terminal-escapes-in-versions", demo.Options{})
	r := runMcptask(t, nil, "tools", "--server", s.URL, "--protocol", "2026-07-28")
	mustCode(t, r, ExitFailure, "tools")
	assertNoTerminalControls(t, "tools", r)
	if !strings.Contains(r.Stderr, "2099-01-01") {
		t.Fatalf("the version list is not in the error: %q", r.Stderr)
	}
}

// TestHostileTerminalRPCError: a JSON-RPC error's message is cleaned on the "mcptask:" line;
// with --json its data is passed on exactly as the server sent it.
func TestHostileTerminalRPCError(t *testing.T) {
	s := hostile.Start(t, "terminal-escapes-in-rpc-error", demo.Options{})
	r := runMcptask(t, nil, "call", "echo", "--arg", "text=hi", "--server", s.URL)
	assertNoTerminalControls(t, "call echo", r)
	// The message says "unknown flag", as cobra's usage errors do: a server's words still
	// make exit 1, not the usage error's 2.
	if r.Code != ExitFailure || !strings.HasPrefix(r.Stderr, "mcptask: ") || !strings.Contains(r.Stderr, "server error -32603: boom") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}

	r = runMcptask(t, nil, "call", "echo", "--arg", "text=hi", "--server", s.URL, "--json")
	var e struct {
		Message string `json:"message"`
		RPCData struct {
			Detail string `json:"detail"`
		} `json:"rpcData"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stderr)), &e); err != nil {
		t.Fatalf("stderr is not the JSON error: %v\n%s", err, r.Stderr)
	}
	if e.RPCData.Detail != hostile.TerminalPayload {
		t.Errorf("--json changed the server's data: %q", e.RPCData.Detail)
	}
	if !strings.Contains(e.Message, "boom") {
		t.Errorf("--json message: %q", e.Message)
	}
}
