package cmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the mcptask binary: with MCPTASK_TEST_MAIN=1 it
// runs mcptask itself (so `--stdio '<test binary> demo serve --stdio'` starts a real child
// process speaking stdio).
func TestMain(m *testing.M) {
	if os.Getenv("MCPTASK_TEST_MAIN") == "1" {
		if code, ok := specStdioMain(); ok { // a demo child whose frames are checked (spec_test.go)
			os.Exit(code)
		}
		os.Exit(mainLogged())
	}
	// testscript scripts run "mcptask" as this binary too. RunMain never returns (it exits
	// with what m.Run gives), so what must happen after the tests happens in afterTests.Run.
	os.Exit(testscript.RunMain(afterTests{m}, map[string]func() int{"mcptask": mainLogged}))
}

// afterTests runs the tests, then checks every exit code the commands returned against their
// help (exitlog_test.go) and removes the binary the tests built.
type afterTests struct{ m *testing.M }

func (a afterTests) Run() int {
	exits, done := startExitLog()
	defer done()
	code := a.m.Run()
	removeBuiltBinary()
	if code == 0 && !checkExitLog(exits) {
		code = 1
	}
	return code
}

var eras = []string{"2026-07-28", "2025-11-25"}

func TestCallPlainResult(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			r := runCLI(t, t.Context(), nil, "call", "echo", "--arg", "text=hello there", "--server", url, "--protocol", era)
			if r.Code != ExitOK || r.Stdout != "hello there\n" {
				t.Fatalf("code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			if n := countMethod(rec, "tasks/get"); n != 0 {
				t.Errorf("a plain result was polled %d times", n)
			}
		})
	}
}

func TestCallTaskToCompletion(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=3", "--server", url, "--protocol", era)
			if r.Code != ExitOK {
				t.Fatalf("code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "slept") {
				t.Errorf("stdout %q: want the tool's text result", r.Stdout)
			}
			if !strings.Contains(r.Stderr, "task created") || !strings.Contains(r.Stderr, " working") {
				t.Errorf("stderr lacks the progress lines:\n%s", r.Stderr)
			}
			if countMethod(rec, "tasks/get") == 0 {
				t.Errorf("the task was never polled")
			}
			if era == "2025-11-25" && countMethod(rec, "tasks/result") != 1 {
				t.Errorf("2025-11-25: want exactly one tasks/result, got methods %v", rec.Methods())
			}
			if era == "2026-07-28" && countMethod(rec, "tasks/result") != 0 {
				t.Errorf("2026-07-28 has no tasks/result, but it was sent")
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--args", `{"seconds":1}`, "--server", url, "--protocol", era, "--json")
			if r.Code != ExitOK {
				t.Fatalf("code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			m := decodeJSON(t, r.Stdout)
			if m["type"] != "result" || m["status"] != "completed" || m["era"] != era || m["taskId"] == "" {
				t.Errorf("envelope = %v", m)
			}
			res, _ := m["result"].(map[string]any)
			if res == nil || res["content"] == nil {
				t.Errorf("result is not the CallToolResult: %v", m["result"])
			}
		})
	}
}

func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		code int
		want string
	}{
		{"tool_error", nil, ExitTaskFailed, "isError"},
		{"fail", nil, ExitTaskFailed, "failed"},
		{"ask", nil, ExitInputRequired, "needs input"},
	}
	for _, era := range eras {
		for _, tt := range tests {
			// Without a way to answer here, elicitation is still declared (a later 'mcptask
			// update' answers), so the task asks in both eras and the call ends with exit 5.
			t.Run(era+"/"+tt.tool, func(t *testing.T) {
				url, _ := demoServer(t, demo.Options{})
				args := append([]string{"call", tt.tool, "--server", url, "--protocol", era}, tt.args...)
				r := runCLI(t, t.Context(), nil, args...)
				if r.Code != tt.code || !strings.Contains(r.Stderr, tt.want) {
					t.Fatalf("code %d (want %d), stderr:\n%s", r.Code, tt.code, r.Stderr)
				}
			})
		}
	}
}

func TestCallTimeoutLeavesTaskRunning(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			// --timeout counts from the start of the command, connecting included: 2s lets a
			// loaded machine create the task before it runs out.
			r := runCLI(t, t.Context(), nil, "call", "forever", "--server", url, "--protocol", era, "--timeout", "2s")
			if r.Code != ExitTimeout {
				t.Fatalf("code %d, want %d; stderr:\n%s", r.Code, ExitTimeout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, "keeps running") || !strings.Contains(r.Stderr, "mcptask result") {
				t.Errorf("stderr does not say how to follow the task:\n%s", r.Stderr)
			}
		})
	}
}

func TestDetachGetResultCancel(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--detach", "--server", url, "--protocol", era)
			id := strings.TrimSpace(r.Stdout)
			if r.Code != ExitOK || id == "" || strings.ContainsAny(id, " \n") {
				t.Fatalf("--detach: code %d, stdout %q (want only the id), stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			g := runCLI(t, t.Context(), nil, "get", id, "--server", url, "--protocol", era, "--json")
			if g.Code != ExitOK || decodeJSON(t, g.Stdout)["taskId"] != id {
				t.Fatalf("get: code %d stdout %s stderr %s", g.Code, g.Stdout, g.Stderr)
			}
			res := runCLI(t, t.Context(), nil, "result", id, "--server", url, "--protocol", era)
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "slept") {
				t.Fatalf("result: code %d stdout %q stderr %s", res.Code, res.Stdout, res.Stderr)
			}

			// A task that runs until cancelled.
			r = runCLI(t, t.Context(), nil, "call", "forever", "--detach", "--server", url, "--protocol", era)
			id = strings.TrimSpace(r.Stdout)
			c := runCLI(t, t.Context(), nil, "cancel", id, "--server", url, "--protocol", era)
			if c.Code != ExitOK {
				t.Fatalf("cancel: code %d stderr %s", c.Code, c.Stderr)
			}
			if era == "2026-07-28" && !strings.Contains(c.Stderr, "cooperative") {
				t.Errorf("2026-07-28 cancel must say cancellation is cooperative:\n%s", c.Stderr)
			}
			if era == "2025-11-25" && !strings.Contains(c.Stdout, "cancelled") {
				t.Errorf("2025-11-25 cancel must show the cancelled task: %q", c.Stdout)
			}
			res = runCLI(t, t.Context(), nil, "result", id, "--server", url, "--protocol", era, "--timeout", "10s")
			if res.Code != ExitCancelled {
				t.Fatalf("result of a cancelled task: code %d, want %d; stderr %s", res.Code, ExitCancelled, res.Stderr)
			}
		})
	}
}

func TestUnknownTaskIsExpired(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			for _, verb := range []string{"get", "result", "cancel"} {
				r := runCLI(t, t.Context(), nil, verb, "no-such-task", "--server", url, "--protocol", era, "--json")
				if r.Code != ExitExpired {
					t.Errorf("%s: code %d, want %d; stderr %s", verb, r.Code, ExitExpired, r.Stderr)
				}
				if !strings.Contains(r.Stderr, `"error":"expired"`) || !strings.Contains(r.Stderr, `"rpcCode":-32602`) {
					t.Errorf("%s: the JSON error line lacks the name or rpcCode: %s", verb, r.Stderr)
				}
			}
		})
	}
}

func TestAutoDetectsEra(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), nil, "call", "echo", "--arg", "text=x", "--server", url, "--json")
	if r.Code != ExitOK || decodeJSON(t, r.Stdout)["era"] != "2026-07-28" {
		t.Fatalf("auto against a dual-era server must pick 2026-07-28: %s %s", r.Stdout, r.Stderr)
	}
	if m := rec.Methods(); len(m) == 0 || m[0] != "server/discover" {
		t.Errorf("first message = %v, want server/discover", m)
	}
}

// A server that only speaks 2025-11-25 answers the probe the way real ones do; auto must fall
// back to initialize.
func TestAutoFallsBackToLegacy(t *testing.T) {
	srv, err := demo.New(demo.Options{StepDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	checked := specChecked(t, srv.Handler(), false) // the demo's side; the refusal below is the test's
	legacyOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
			return
		}
		checked.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(legacyOnly)
	defer hs.Close()
	r := runCLI(t, t.Context(), nil, "call", "echo", "--arg", "text=x", "--server", hs.URL, "--json")
	if r.Code != ExitOK || decodeJSON(t, r.Stdout)["era"] != "2025-11-25" {
		t.Fatalf("code %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestUsageErrorsSendNothing(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	tests := [][]string{
		{"call", "echo", "--args", "{not json", "--server", url},
		{"call", "echo", "--args", "[1,2]", "--server", url},
		{"call", "echo", "--args", "@/no/such/file.json", "--server", url},
		{"call", "echo", "--arg", "novalue", "--server", url},
		{"call", "echo", "--server", "ftp://example.com"},
		{"call", "echo", "--server", url, "--stdio", "x"},
		{"call", "echo", "--server", url, "--protocol", "2024-11-05"},
		{"call", "echo", "--server", url, "--bearer-env", "MCPTASK_TEST_UNSET_TOKEN"},
		{"call"},
		{"get", "a", "b", "--server", url},
		{"call", "echo", "--no-such-flag"},
	}
	for _, args := range tests {
		r := runCLI(t, t.Context(), nil, args...)
		if r.Code != ExitUsage {
			t.Errorf("%v: code %d, want %d; stderr %s", args, r.Code, ExitUsage, r.Stderr)
		}
	}
	if m := rec.Methods(); len(m) != 0 {
		t.Errorf("usage errors sent messages: %v", m)
	}
}

func TestAuthRefused(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer hs.Close()
	r := runCLI(t, t.Context(), map[string]string{"TOKEN": "s3cret-token-value"}, "tools", "--server", hs.URL, "--bearer-env", "TOKEN", "--trace")
	if r.Code != ExitAuth {
		t.Fatalf("code %d, want %d; stderr %s", r.Code, ExitAuth, r.Stderr)
	}
	if strings.Contains(r.Stderr+r.Stdout, "s3cret-token-value") {
		t.Errorf("the bearer token was printed:\n%s", r.Stderr)
	}
}

func TestTraceRedactsSecrets(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	r := runCLI(t, t.Context(), map[string]string{"TOKEN": "tok-123456"},
		"call", "echo", "--arg", "text=x", "--server", url, "--trace",
		"--header", "X-Api-Key: key-abcdef", "--bearer-env", "TOKEN")
	if r.Code != ExitOK {
		t.Fatalf("code %d stderr %s", r.Code, r.Stderr)
	}
	for _, secret := range []string{"tok-123456", "key-abcdef"} {
		if strings.Contains(r.Stderr, secret) {
			t.Errorf("trace shows secret %q", secret)
		}
	}
	if !strings.Contains(r.Stderr, "X-Api-Key") || !strings.Contains(r.Stderr, "tools/call") {
		t.Errorf("trace lacks header names or frames:\n%.2000s", r.Stderr)
	}
}

func TestStdioBothEras(t *testing.T) {
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	server := demoStdio(t, "--step", "20ms")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--stdio", server, "--protocol", era, "--json")
			if r.Code != ExitOK {
				t.Fatalf("code %d stderr %s", r.Code, r.Stderr)
			}
			if m := decodeJSON(t, r.Stdout); m["status"] != "completed" || m["era"] != era {
				t.Errorf("envelope %v", m)
			}
		})
	}
	t.Run("auto", func(t *testing.T) {
		r := runCLI(t, t.Context(), nil, "tools", "--stdio", server, "--json")
		if r.Code != ExitOK || decodeJSON(t, r.Stdout)["era"] != "2026-07-28" {
			t.Fatalf("code %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("server exits early", func(t *testing.T) {
		r := runCLI(t, t.Context(), nil, "tools", "--stdio", "sh -c 'echo boom-on-stderr >&2; exit 3'")
		if r.Code != ExitFailure || !strings.Contains(r.Stderr, "boom-on-stderr") {
			t.Fatalf("code %d; the error must show the server's stderr:\n%s", r.Code, r.Stderr)
		}
	})
}

func TestExitCodesHelp(t *testing.T) {
	r := runCLI(t, t.Context(), nil, "help", "exit-codes")
	for _, e := range exitCodeTable {
		if !strings.Contains(r.Stdout, fmt.Sprintf("%3d  %s", e.Code, e.Name)) {
			t.Errorf("help exit-codes lacks %d %s:\n%s", e.Code, e.Name, r.Stdout)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exitCodeTable {
		row := fmt.Sprintf("| %d | %s |", e.Code, e.Name)
		if !strings.Contains(string(readme), row) {
			t.Errorf("README exit-code table lacks %q", row)
		}
	}
}
