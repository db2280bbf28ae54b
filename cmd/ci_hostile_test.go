package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/ci/citest"
	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
)

// ciRun is one run of the real mcptask binary (this test binary, as TestMain lets it be) in a
// CI job's environment, with its streams as the runner gets them: two pipes.
type ciRun struct {
	args           []string
	stdout, stderr string
	code           int
}

func runCIJob(t *testing.T, env []string, args ...string) ciRun {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append([]string{
		"MCPTASK_TEST_MAIN=1",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"MCPTASK_STATE=" + testLedger(t),
		"NO_COLOR=1",
	}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return ciRun{args: args, stdout: out.String(), stderr: errOut.String(), code: code}
}

var stopToken = regexp.MustCompile(`^mcptask-[0-9a-f]{32}$`)

// checkGitHubJob reads a run's streams as GitHub's runner does (citest.Runner, one per stream:
// the runner reads each pipe with its own reader) and fails on any command that is not
// mcptask's own: log groups of a task, alternating with their ends, and annotations titled
// "mcptask: …" whose message starts with "task ". It returns mcptask's own commands.
func checkGitHubJob(t *testing.T, run ciRun) []citest.Command {
	t.Helper()
	var own []citest.Command
	for _, stream := range []struct{ name, text string }{{"stderr", run.stderr}, {"stdout", run.stdout}} {
		var r citest.Runner
		r.Feed(stream.text)
		inGroup := false
		for _, c := range r.Ran {
			ok := false
			switch c.Cmd {
			case "group":
				ok, inGroup = !inGroup && strings.HasPrefix(c.Data, "task "), true
			case "endgroup":
				ok, inGroup = inGroup && c.Data == "", false
			case "error", "warning", "notice":
				ok = strings.HasPrefix(c.Props["title"], "mcptask: ") && strings.HasPrefix(c.Data, "task ") && len(c.Props) == 1
			}
			if !ok {
				t.Errorf("%v: the runner would run a command the server wrote on %s: %+v\n%s", run.args, stream.name, c, excerpt(stream.text, c.Data))
			}
			own = append(own, c)
		}
		for _, tok := range r.Stops {
			if !stopToken.MatchString(tok) {
				t.Errorf("%v: the server paused the runner's commands on %s (token %q)", run.args, stream.name, tok)
			}
		}
		if r.Stopped() {
			t.Errorf("%v: %s ends inside a stop-commands block", run.args, stream.name)
		}
	}
	return own
}

// excerpt finds the line of text around needle, for a failure message.
func excerpt(text, needle string) string {
	if i := strings.Index(text, needle); needle != "" && i >= 0 {
		start := max(0, i-200)
		return "…" + text[start:min(len(text), i+len(needle)+50)] + "…"
	}
	return ""
}

func annotations(cs []citest.Command) []citest.Command {
	var out []citest.Command
	for _, c := range cs {
		if c.Cmd == "error" || c.Cmd == "warning" || c.Cmd == "notice" {
			out = append(out, c)
		}
	}
	return out
}

// TestCIJobLogTakesNoCommandFromAServer plays the server of class 1: every string it sends
// carries workflow commands behind every Unicode white-space and format character, legacy
// ##[ forms, stop-commands, GitLab section markers and Markdown. mcptask runs as a real process
// with GITHUB_ACTIONS=true; its stdout and stderr go through the runner model and its job
// summary is read as Markdown. No command of the server's may run, and mcptask's own (the log
// group of a task, the annotation of its end) must.
func TestCIJobLogTakesNoCommandFromAServer(t *testing.T) {
	srv := hostile.Start(t, "ci-commands", demo.Options{})
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary}
	for _, tc := range []struct {
		args  []string
		code  int
		level string // the annotation mcptask writes ("" for none)
	}{
		{[]string{"call", "sleep", "--arg", "seconds=0.1"}, ExitOK, "notice"},
		{[]string{"call", "tool_error", "--arg", "message=bad"}, ExitTaskFailed, "error"},
		{[]string{"call", "fail", "--arg", "message=boom"}, ExitTaskFailed, "error"},
		{[]string{"call", "forever", "--timeout", "2s"}, ExitTimeout, "warning"},
		{[]string{"call", "sleep", "--arg", "seconds=0.1", "--jsonl"}, ExitOK, "notice"},
		{[]string{"call", "sleep", "--arg", "seconds=0.1", "--json"}, ExitOK, "notice"},
		{[]string{"call", "echo", "--arg", "text=hi"}, ExitOK, ""},
		{[]string{"call", "no_such_tool"}, -1, ""},
		{[]string{"tools"}, ExitOK, ""},
	} {
		run := runCIJob(t, env, append(tc.args, "--server", srv.URL)...)
		if tc.code >= 0 && run.code != tc.code {
			t.Errorf("%v: exit %d, want %d\nstderr: %.2000s", tc.args, run.code, tc.code, run.stderr)
			continue
		}
		if !strings.Contains(run.stdout+run.stderr, "pwned") {
			t.Errorf("%v: the server's text did not reach the log at all; the test proves nothing", tc.args)
		}
		own := checkGitHubJob(t, run)
		anns := annotations(own)
		if tc.level != "" && (len(anns) != 1 || anns[0].Cmd != tc.level) {
			t.Errorf("%v: want mcptask's one %s annotation to run, got %+v", tc.args, tc.level, anns)
		}
		if tc.level != "" && len(own) < 3 {
			t.Errorf("%v: want the task's log group to run too, got %+v", tc.args, own)
		}
	}

	// The job summary: one row per task, each exactly seven cells, no live Markdown or HTML.
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		if n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)); n != 8 {
			t.Errorf("server text split a summary row into %d borders: %.300s", n, line)
		}
		for _, bad := range []string{"![", "<img", "https://evil", "www.evil", "](", "\r", "\x1b"} {
			if strings.Contains(line, bad) {
				t.Errorf("summary row keeps live %q: %.300s", bad, line)
			}
		}
	}
	if rows != 6 {
		t.Errorf("want a summary row for each of the 6 tasks, got %d:\n%.3000s", rows, b)
	}
}

// TestCIJobLogTakesNoCommandFromTaskIDs: a task id is server text too, printed alone on
// stdout by --detach and inside hints, groups and annotations.
func TestCIJobLogTakesNoCommandFromTaskIDs(t *testing.T) {
	srv := hostile.Start(t, "ci-commands-in-ids", demo.Options{})
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + filepath.Join(t.TempDir(), "summary.md")}
	for _, args := range [][]string{
		{"call", "sleep", "--arg", "seconds=0.1", "--detach"},
		{"call", "sleep", "--arg", "seconds=0.1"},
		{"call", "forever", "--timeout", "2s"},
	} {
		run := runCIJob(t, env, append(args, "--server", srv.URL)...)
		// mcptask may refuse such an id (its message must then be as safe); when it takes
		// it, the id must have reached the log, or the test proves nothing.
		if (run.code == ExitOK || run.code == ExitTimeout) && !strings.Contains(run.stdout+run.stderr, "pwned-id") {
			t.Errorf("%v: the server's id did not reach the log at all (exit %d): %.1000s", args, run.code, run.stderr)
		}
		checkGitHubJob(t, run)
	}
}

// TestGitLabJobLogTakesNoSectionFromAServer: in a GitLab job (stdout and stderr end up in one
// trace), the server's section markers open and close nothing; mcptask's own sections, one
// start and one end per task, are all there is.
func TestGitLabJobLogTakesNoSectionFromAServer(t *testing.T) {
	srv := hostile.Start(t, "ci-commands", demo.Options{})
	for _, args := range [][]string{
		{"call", "sleep", "--arg", "seconds=0.1"},
		{"call", "tool_error", "--arg", "message=bad"},
		{"call", "fail"},
		{"call", "sleep", "--arg", "seconds=0.1", "--jsonl"},
	} {
		run := runCIJob(t, []string{"GITLAB_CI=true"}, append(args, "--server", srv.URL)...)
		if !strings.Contains(run.stdout+run.stderr, "pwned") {
			t.Errorf("%v: the server's text did not reach the log at all", args)
		}
		var g citest.GitLab
		g.Feed(run.stderr)
		g.Feed(run.stdout)
		seen := map[string][]string{}
		for _, m := range g.Markers {
			if !strings.HasPrefix(m.Name, "mcptask_") {
				t.Errorf("%v: GitLab acts on the server's marker %+v", args, m)
			}
			seen[m.Name] = append(seen[m.Name], m.Action)
		}
		if len(seen) == 0 {
			t.Errorf("%v: mcptask's own section is missing:\n%.2000s", args, run.stderr)
		}
		for name, acts := range seen {
			if strings.Join(acts, " ") != "start end" {
				t.Errorf("%v: section %s has markers %v, want exactly its start and end", args, name, acts)
			}
		}
	}
}

// TestAgentJobLogsTakeNoCommandFromAServer plays the ci-commands server, whose every string
// also carries Azure Pipelines logging commands (##vso[…]) and TeamCity service messages
// (##teamcity[…]), anywhere in a line, in other cases and behind ignorable characters. In an
// Azure job (TF_BUILD=True), a TeamCity build (TEAMCITY_VERSION) and with every --ci mode
// that writes for a CI system, text and --json, neither agent (citest.Azure, citest.TeamCity,
// fed each stream) acts on anything mcptask wrote.
func TestAgentJobLogsTakeNoCommandFromAServer(t *testing.T) {
	srv := hostile.Start(t, "ci-commands", demo.Options{})
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{[]string{"TF_BUILD=True"}, nil},
		{[]string{"TF_BUILD=True"}, []string{"--json"}},
		{[]string{"TEAMCITY_VERSION=2025.03"}, nil},
		{[]string{"TEAMCITY_VERSION=2025.03"}, []string{"--jsonl"}},
		{[]string{"TF_BUILD=True"}, []string{"--ci", "github"}},
		{[]string{"TF_BUILD=True"}, []string{"--ci", "gitlab", "--json"}},
	} {
		for _, call := range [][]string{
			{"call", "sleep", "--arg", "seconds=0.1"},
			{"call", "fail", "--arg", "message=boom"},
			{"call", "tool_error", "--arg", "message=bad"},
		} {
			args := append(append(call, tc.args...), "--server", srv.URL)
			run := runCIJob(t, tc.env, args...)
			if !strings.Contains(run.stdout+run.stderr, "pwned") {
				t.Errorf("%v %v: the server's text did not reach the log at all", tc.env, args)
			}
			for _, stream := range []string{run.stdout, run.stderr} {
				var az citest.Azure
				var tcy citest.TeamCity
				az.Feed(stream)
				tcy.Feed(stream)
				if len(az.Commands) != 0 || len(tcy.Messages) != 0 {
					t.Errorf("%v %v: the agents act on %v %v:\n%s", tc.env, args, az.Commands, tcy.Messages, excerpt(stream, "vso["))
				}
			}
			if !strings.Contains(run.stdout+run.stderr, "vso[") || !strings.Contains(run.stdout+run.stderr, "teamcity[") {
				t.Errorf("%v %v: the defused commands must stay readable", tc.env, args)
			}
		}
	}
}
