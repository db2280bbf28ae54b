package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestAnswersWithoutAHuman: --answer answers a task's question in both eras (2026-07-28
// tasks/update, 2025-11-25 elicitation/create on tasks/result) and an MRTR round of tools/call.
func TestAnswersWithoutAHuman(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t, demo.Options{})
			key := "name"
			if era == "2025-11-25" {
				key = "elicitation"
			}
			r := runCLI(t, t.Context(), nil, "call", "ask", "--server", url, "--protocol", era, "--answer", key+`={"name":"Ada"}`)
			if r.Code != ExitOK || !strings.Contains(r.Stdout, "Hello, Ada!") {
				t.Fatalf("call ask --answer: code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if era == "2026-07-28" && countMethod(rec, "tasks/update") != 1 {
				t.Errorf("want one tasks/update, got %v", rec.Methods())
			}
		})
	}
	t.Run("answers file", func(t *testing.T) {
		url, _ := demoServer(t, demo.Options{})
		file := filepath.Join(t.TempDir(), "answers.json")
		os.WriteFile(file, []byte(`{"name": {"action": "accept", "content": {"name": "Grace"}}}`), 0o600)
		r := runCLI(t, t.Context(), nil, "call", "ask", "--server", url, "--answers", file)
		if r.Code != ExitOK || !strings.Contains(r.Stdout, "Hello, Grace!") {
			t.Fatalf("code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("MRTR", func(t *testing.T) {
		url, rec := demoServer(t, demo.Options{})
		r := runCLI(t, t.Context(), nil, "call", "confirm", "--server", url, "--answer", `confirm={"ok":true}`)
		if r.Code != ExitOK || !strings.Contains(r.Stdout, "confirmed") {
			t.Fatalf("code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
		}
		if countMethod(rec, "tools/call") != 2 {
			t.Errorf("want the call retried once with inputResponses: %v", rec.Methods())
		}
	})
	t.Run("schema mismatch sends nothing", func(t *testing.T) {
		url, rec := demoServer(t, demo.Options{})
		r := runCLI(t, t.Context(), nil, "call", "confirm", "--server", url, "--answer", `confirm={"ok":"yes"}`)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, `"ok"`) {
			t.Fatalf("code %d stderr %s", r.Code, r.Stderr)
		}
		if countMethod(rec, "tools/call") != 1 {
			t.Errorf("a bad answer must not be sent: %v", rec.Methods())
		}
	})
	t.Run("bad JSON", func(t *testing.T) {
		url, rec := demoServer(t, demo.Options{})
		r := runCLI(t, t.Context(), nil, "call", "ask", "--server", url, "--answer", `name={nope`)
		if r.Code != ExitUsage || len(rec.Methods()) != 0 {
			t.Fatalf("code %d methods %v", r.Code, rec.Methods())
		}
	})
}

// TestUpdateCommand: a detached task waiting for input is answered by `mcptask update` in a
// later invocation, then its result is fetched.
func TestUpdateCommand(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			key := "name"
			if era == "2025-11-25" {
				key = "elicitation"
			}
			// The tool needs the capability declared at creation; --answer on call declares it,
			// and --detach leaves the question for later.
			r := runCLI(t, t.Context(), nil, "call", "ask", "--detach", "--server", url, "--protocol", era, "--answer", "unused={}")
			id := strings.TrimSpace(r.Stdout)
			if r.Code != ExitOK || id == "" {
				t.Fatalf("call --detach: %d %s", r.Code, r.Stderr)
			}
			waitFor(t, "the task to ask", 5e9, func() bool {
				g := runCLI(t, t.Context(), nil, "get", id, "--json")
				return strings.Contains(g.Stdout, `"status":"input_required"`)
			})
			if era == "2026-07-28" {
				u := runCLI(t, t.Context(), nil, "update", id, "--answer", `nope={"name":"x"}`)
				if u.Code != ExitUsage || !strings.Contains(u.Stderr, "name") {
					t.Errorf("a key the task does not ask for: code %d stderr %s", u.Code, u.Stderr)
				}
			}
			u := runCLI(t, t.Context(), nil, "update", id, "--answer", key+`={"name":"Ada"}`)
			if u.Code != ExitOK {
				t.Fatalf("update: code %d stderr %s", u.Code, u.Stderr)
			}
			res := runCLI(t, t.Context(), nil, "result", id, "--timeout", "30s")
			if res.Code != ExitOK || !strings.Contains(res.Stdout, "Hello, Ada!") {
				t.Fatalf("result after update: code %d stdout %q stderr %s", res.Code, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestUpdateByFieldsAndProgram: `mcptask update` answers the deploy question, keyed at run
// time, by its field name, and with a program (--on-input exec); a program that fails is exit
// 5 and sends nothing, so the task still waits for the next answer.
func TestUpdateByFieldsAndProgram(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			url, _ := demoServer(t, demo.Options{})
			start := func() string {
				r := runCLI(t, t.Context(), nil, "call", "deploy", "--detach", "--server", url, "--protocol", era, "--answer", "unused={}")
				id := strings.TrimSpace(r.Stdout)
				if r.Code != ExitOK || id == "" {
					t.Fatalf("call --detach: %d %s", r.Code, r.Stderr)
				}
				waitFor(t, "the task to ask", 5e9, func() bool {
					g := runCLI(t, t.Context(), nil, "get", id, "--json")
					return strings.Contains(g.Stdout, `"status":"input_required"`)
				})
				return id
			}
			result := func(id, want string) {
				t.Helper()
				res := runCLI(t, t.Context(), nil, "result", id, "--timeout", "30s")
				if res.Code != ExitOK || strings.TrimSpace(res.Stdout) != want {
					t.Fatalf("result: code %d stdout %q stderr %s", res.Code, res.Stdout, res.Stderr)
				}
			}

			id := start()
			u := runCLI(t, t.Context(), nil, "update", id, "--answer", `confirm={"confirm":true}`, "--json")
			if u.Code != ExitOK || !strings.Contains(u.Stdout, `"answered":["`) {
				t.Fatalf("update by field name: code %d stdout %s stderr %s", u.Code, u.Stdout, u.Stderr)
			}
			result(id, "deployed")

			id = start()
			u = runCLI(t, t.Context(), nil, "update", id, "--on-input", `exec:sh -c "echo 'no key for you' >&2; exit 4"`)
			if u.Code != ExitInputRequired || !strings.Contains(u.Stderr, "was not answered") || !strings.Contains(u.Stderr, "no key for you") {
				t.Fatalf("update with a failing program: code %d stderr %s", u.Code, u.Stderr)
			}
			g := runCLI(t, t.Context(), nil, "get", id, "--json")
			if !strings.Contains(g.Stdout, `"status":"input_required"`) {
				t.Fatalf("after a failing program the task is not waiting: %s", g.Stdout)
			}
			u = runCLI(t, t.Context(), nil, "update", id, "--on-input", `exec:sh -c "cat >/dev/null; echo '{\"confirm\":false}'"`)
			if u.Code != ExitOK {
				t.Fatalf("update with a program: code %d stderr %s", u.Code, u.Stderr)
			}
			result(id, "not deployed")
		})
	}
}
