package ci

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runner is a model of what GitHub's runner does with a job log (actions/runner,
// ActionCommandManager.TryProcessCommand with ActionCommand.TryParseV2 and TryParse): it splits
// lines as .NET's ReadLine does, recognises "::cmd props::data" after leading white space and
// "##[cmd props]data" anywhere, honours ::stop-commands::TOKEN until ::TOKEN::, and records the
// commands it would have run.
type runner struct {
	stopped bool
	token   string
	ran     []parsed
}

type parsed struct {
	cmd   string
	props map[string]string
	data  string
}

var registered = map[string]bool{"error": true, "warning": true, "notice": true, "group": true,
	"endgroup": true, "set-output": true, "set-env": true, "add-mask": true, "add-path": true,
	"save-state": true, "debug": true, "stop-commands": true}

func unescape(s string, property bool) string {
	r := []string{"%0D", "\r", "%0A", "\n"}
	if property {
		r = append(r, "%3A", ":", "%2C", ",")
	}
	r = append(r, "%25", "%")
	return strings.NewReplacer(r...).Replace(s)
}

func parseLine(line string, names map[string]bool) (parsed, bool) {
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, "::") {
		end := strings.Index(t[2:], "::")
		if end >= 0 {
			info := t[2 : 2+end]
			name, props, _ := strings.Cut(info, " ")
			if names[strings.ToLower(name)] {
				p := parsed{cmd: strings.ToLower(name), props: map[string]string{}, data: unescape(t[2+end+2:], false)}
				for _, kv := range strings.Split(props, ",") {
					if k, v, ok := strings.Cut(kv, "="); ok {
						p.props[k] = unescape(v, true)
					}
				}
				return p, true
			}
		}
	}
	if i := strings.Index(line, "##["); i >= 0 {
		if j := strings.Index(line[i:], "]"); j >= 0 {
			name, _, _ := strings.Cut(line[i+3:i+j], " ")
			if names[strings.ToLower(name)] {
				return parsed{cmd: strings.ToLower(name), data: line[i+j+1:]}, true
			}
		}
	}
	return parsed{}, false
}

func (r *runner) feed(log string) {
	for _, line := range regexp.MustCompile(`\r\n|\r|\n`).Split(log, -1) {
		names := registered
		if r.stopped {
			names = map[string]bool{strings.ToLower(r.token): true}
		}
		p, ok := parseLine(line, names)
		if !ok {
			continue
		}
		switch {
		case r.stopped:
			r.stopped, r.token = false, ""
		case p.cmd == "stop-commands":
			r.stopped, r.token = true, p.data
		default:
			r.ran = append(r.ran, p)
		}
	}
}

// attacks are server strings that try to run workflow commands.
var attacks = []string{
	"::error title=pwned::owned",
	"  ::set-output name=x::y",
	"done\n::add-mask::secret\nmore",
	"ok\r::warning::carriage return ends a .NET line",
	"text ##[set-env name=PATH]/evil (legacy syntax, anywhere in a line)",
	"\u00a0::notice::after a no-break space",
	"::STOP-COMMANDS::guess\n::error::x\n::guess::",
	"::endgroup::",
}

func TestNeutralizeStopsEveryInjection(t *testing.T) {
	for _, text := range attacks {
		var r runner
		out := Neutralize(GitHub, text)
		r.feed(out)
		if len(r.ran) != 0 {
			t.Errorf("%q: the runner would run %+v from\n%s", text, r.ran, out)
		}
		if !strings.Contains(out, text) {
			t.Errorf("%q: the text itself must reach the log unchanged; got\n%s", text, out)
		}
		// Commands after the block are honoured again: the block was closed.
		r.feed("::notice::after\n")
		if len(r.ran) != 1 || r.ran[0].data != "after" {
			t.Errorf("%q: the runner did not resume after the block: %+v", text, r.ran)
		}
	}
}

func TestNeutralizeLeavesHarmlessTextAlone(t *testing.T) {
	for _, text := range []string{"slept 3 seconds\n", "a::b is fine mid-line", "## heading", "[x] done", ""} {
		if got := Neutralize(GitHub, text); got != text {
			t.Errorf("Neutralize(%q) = %q, want it unchanged", text, got)
		}
	}
	if got := Neutralize(GitLab, attacks[0]); got != attacks[0] {
		t.Errorf("GitLab has no workflow commands; got %q", got)
	}
}

func TestNeutralizeTokensAreUnguessable(t *testing.T) {
	a, b := Neutralize(GitHub, "::error::x"), Neutralize(GitHub, "::error::x")
	if a == b {
		t.Fatal("two blocks used the same token")
	}
	if !regexp.MustCompile(`^::stop-commands::mcptask-[0-9a-f]{32}\n`).MatchString(a) {
		t.Fatalf("token is not 128 random bits: %q", a)
	}
}

func TestAnnotationCannotBeBrokenOutOf(t *testing.T) {
	var buf bytes.Buffer
	l := &Log{Sys: GitHub, W: &buf}
	title := "tool: a, b\n::error::x"
	msg := "50% done\r\n::set-output name=x::y\x1b[31m"
	l.Annotation(Error, title, msg)
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("an annotation must be one line: %q", buf.String())
	}
	var r runner
	r.feed(buf.String())
	if len(r.ran) != 1 {
		t.Fatalf("want exactly the one annotation, ran %+v", r.ran)
	}
	got := r.ran[0]
	if got.cmd != "error" || got.props["title"] != "tool: a, b ::error::x" || got.data != "50% done\n::set-output name=x::y" {
		t.Errorf("the runner reads %+v; want the title and message back as text (escapes stripped)", got)
	}
}

func TestGroups(t *testing.T) {
	var buf bytes.Buffer
	l := &Log{Sys: GitHub, W: &buf}
	l.Group("task abc (sleep)")
	l.Group("task def\n::error::x")
	l.EndGroup()
	l.EndGroup()
	want := "::group::task abc (sleep)\n::endgroup::\n::group::task def ::error::x\n::endgroup::\n"
	if buf.String() != want {
		t.Errorf("GitHub groups:\n%q\nwant\n%q", buf.String(), want)
	}
	var r runner
	r.feed(buf.String())
	for _, p := range r.ran {
		if p.cmd != "group" && p.cmd != "endgroup" {
			t.Errorf("a group title ran %+v", p)
		}
	}

	buf.Reset()
	now := time.Unix(1795544077, 0)
	g := &Log{Sys: GitLab, W: &buf, Now: func() time.Time { return now }}
	g.Group("Task abc (sleep)")
	g.EndGroup()
	want = "\x1b[0Ksection_start:1795544077:mcptask_1_task_abc_sleep[collapsed=true]\r\x1b[0KTask abc (sleep)\n" +
		"\x1b[0Ksection_end:1795544077:mcptask_1_task_abc_sleep\r\x1b[0K\n"
	if buf.String() != want {
		t.Errorf("GitLab sections:\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestDetect(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		mode string
		env  func(string) string
		want System
	}{
		{"auto", env("GITHUB_ACTIONS", "true"), GitHub},
		{"auto", env("GITLAB_CI", "true"), GitLab},
		{"auto", env("CI", "true"), None},
		{"none", env("GITHUB_ACTIONS", "true"), None},
		{"github", env(), GitHub},
	} {
		if got, err := Detect(tc.mode, tc.env); err != nil || got != tc.want {
			t.Errorf("Detect(%q) = %v, %v; want %v", tc.mode, got, err, tc.want)
		}
	}
	if _, err := Detect("jenkins", env()); err == nil || !strings.Contains(err.Error(), "auto, github, gitlab or none") {
		t.Errorf("an unknown --ci must name the choices; got %v", err)
	}
}

func TestSummaryEscapesServerText(t *testing.T) {
	var buf bytes.Buffer
	rows := []Row{
		{TaskID: "t-1", Tool: "build", Server: "http://127.0.0.1:8080/mcp", Outcome: "completed", Took: 3200 * time.Millisecond, Message: "done"},
		{TaskID: "t|2`x", Tool: "deploy", Server: "stdio:srv", Outcome: "timeout", Took: 90 * time.Second,
			Message: "![img](http://evil/x.png) <script>alert(1)</script> | col\nnext", Resume: "mcptask resume t|2`x"},
	}
	if err := WriteSummary(&buf, "resume", rows); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "### mcptask resume: 2 tasks (1 completed, 1 timeout)\n") {
		t.Errorf("heading: %q", strings.SplitN(out, "\n", 2)[0])
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	// Seven cells: the unescaped pipes of a row are its eight borders.
	if n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(last, -1)); n != 8 {
		t.Errorf("server text split the row into %d borders: %s", n, last)
	}
	for _, bad := range []string{"![img]", "<script>", "](http"} {
		if strings.Contains(last, bad) {
			t.Errorf("row keeps live Markdown/HTML %q: %s", bad, last)
		}
	}
	if !strings.Contains(last, "| ⏳ timeout | 1m30s |") || !strings.Contains(last, "`mcptask resume t\\|2'x`") {
		t.Errorf("row: %s", last)
	}
}
