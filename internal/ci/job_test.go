package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestJobLogsEachEnd: on GitHub, a task's lines are grouped, its end closes its group and
// becomes an annotation whose level follows the outcome, and the summary gets one row per
// task, with the command that resumes it only for a task that keeps running.
func TestJobLogsEachEnd(t *testing.T) {
	var log strings.Builder
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	verdicts := map[string]Verdict{
		"t1": {Outcome: "completed", Server: "https://h/mcp", Status: "all done", Resume: "mcptask result t1"},
		"t2": {Outcome: "timeout", Server: "https://h/mcp", Status: "step 3", Resume: "mcptask result t2"},
		"t3": {Outcome: "failed", Server: "https://h/mcp", Status: "step 1", Problem: "task t3 failed: boom", Resume: "mcptask result t3"},
	}
	j := &Job{Log: &Log{Sys: GitHub, W: &log}, Start: t0, Verdict: func(o follow.Outcome) Verdict { return verdicts[o.TaskID] }}
	for i, id := range []string{"t1", "t2", "t3"} {
		j.Event(follow.Event{Kind: follow.KindCreated, Time: t0.Add(time.Duration(i) * time.Second), TaskID: id, Tool: "build"})
	}
	j.GroupFor("t1")
	j.GroupFor("t1") // the same task: no new group
	end := t0.Add(10 * time.Second)
	for _, id := range []string{"t1", "t2", "t3"} {
		j.Event(follow.Event{Kind: follow.KindResult, Time: end, TaskID: id, Outcome: &follow.Outcome{TaskID: id, Tool: "build", Server: "https://h/mcp"}})
	}
	want := "::group::task t1 (build)\n::endgroup::\n" +
		"::notice title=mcptask%3A build completed::task t1 on https://h/mcp, after 10s: all done\n" +
		"::warning title=mcptask%3A build timeout::task t2 on https://h/mcp, after 9s: step 3; it keeps running: mcptask result t2\n" +
		"::error title=mcptask%3A build failed::task t3 on https://h/mcp, after 8s: task t3 failed: boom\n"
	if log.String() != want {
		t.Errorf("job log:\n%s\nwant\n%s", log.String(), want)
	}

	path := filepath.Join(t.TempDir(), "summary.md")
	if err := j.Finish(path, "resume"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := string(b)
	if !strings.Contains(sum, "### mcptask resume: 3 tasks (1 completed, 1 failed, 1 timeout)") {
		t.Errorf("summary heading:\n%s", sum)
	}
	for _, line := range strings.Split(sum, "\n") {
		switch {
		case strings.Contains(line, "`t1`"), strings.Contains(line, "`t3`"):
			if strings.Contains(line, "mcptask result") {
				t.Errorf("a task that ended needs no resume command: %s", line)
			}
			if strings.Contains(line, "`t3`") && !strings.Contains(line, "step 1") {
				t.Errorf("the row shows the last status message before the problem: %s", line)
			}
		case strings.Contains(line, "`t2`"):
			if !strings.Contains(line, "`mcptask result t2`") {
				t.Errorf("a task still running gets the command that resumes it: %s", line)
			}
		}
	}
}

// TestJobOutsideCI: outside a CI job nothing is written and no end is judged, but the times
// are still tracked for the notifications.
func TestJobOutsideCI(t *testing.T) {
	var log strings.Builder
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	j := &Job{Log: &Log{Sys: None, W: &log}, Start: t0, Verdict: func(follow.Outcome) Verdict {
		t.Fatal("an end was judged outside CI")
		return Verdict{}
	}}
	j.Event(follow.Event{Kind: follow.KindCreated, Time: t0.Add(2 * time.Second), TaskID: "t1", Tool: "build"})
	j.GroupFor("t1")
	o := follow.Outcome{TaskID: "t1", Tool: "build"}
	j.Event(follow.Event{Kind: follow.KindResult, Time: t0.Add(5 * time.Second), TaskID: "t1", Outcome: &o})
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := j.Finish(path, "call"); err != nil {
		t.Fatal(err)
	}
	if log.String() != "" {
		t.Errorf("wrote to a plain log: %q", log.String())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a summary was written outside GitHub: %v", err)
	}
	if got := j.Took(o, t0.Add(5*time.Second)); got != 3*time.Second {
		t.Errorf("took %s since first seen, want 3s", got)
	}
}

// TestJobTook: a task's time counts from its creation when the server said it, else from when
// it was first seen, else from the run's start.
func TestJobTook(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	end := t0.Add(time.Minute)
	j := &Job{Log: &Log{}, Start: t0}
	j.Track(follow.Event{Time: t0.Add(30 * time.Second), TaskID: "seen"})
	cases := []struct {
		o    follow.Outcome
		want time.Duration
	}{
		{follow.Outcome{TaskID: "seen", Task: &rpc.Task{CreatedAt: t0.Add(10 * time.Second)}}, 50 * time.Second},
		{follow.Outcome{TaskID: "seen"}, 30 * time.Second},
		{follow.Outcome{TaskID: "other"}, time.Minute},
		// A creation time after the end (a server's clock) is not believed.
		{follow.Outcome{TaskID: "seen", Task: &rpc.Task{CreatedAt: end.Add(time.Hour)}}, 30 * time.Second},
	}
	for _, c := range cases {
		if got := j.Took(c.o, end); got != c.want {
			t.Errorf("%+v: took %s, want %s", c.o, got, c.want)
		}
	}
}

// TestStreamsStartAfterWrap: the streams pass everything on as is until Start says which
// system this is, and only then neutralise; a terminal's stdout is never wrapped.
func TestStreamsStartAfterWrap(t *testing.T) {
	var out, errOut strings.Builder
	s := Wrap(&out, &errOut, false)
	attack := "::error::x\n"
	_, _ = s.Out.Write([]byte(attack))
	_, _ = s.Err.Write([]byte(attack))
	if out.String() != attack || errOut.String() != attack {
		t.Fatalf("before Start the streams must pass text as is: %q %q", out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	s.Start(GitHub, false)
	_, _ = s.Out.Write([]byte(attack + "tail"))
	_, _ = s.Err.Write([]byte(attack))
	_, _ = s.Log().Write([]byte("::group::mine\n"))
	if strings.Contains(out.String(), "tail") {
		t.Errorf("stdout must hold a line until its end or Flush: %q", out.String())
	}
	s.Flush()
	if !strings.HasSuffix(out.String(), "tail") {
		t.Errorf("Flush must pass on the held line: %q", out.String())
	}
	checkGitHubLog(t, attack, out.String())
	mine := strings.Index(errOut.String(), "::group::mine\n")
	if mine < 0 {
		t.Fatalf("mcptask's own command must pass as is: %q", errOut.String())
	}
	checkGitHubLog(t, attack, errOut.String()[:mine])
	if s := Wrap(&out, &errOut, true); s.Out != &out {
		t.Errorf("a terminal's stdout was wrapped")
	}
}
