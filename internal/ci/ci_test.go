package ci

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/mcptask/mcptask/internal/ci/citest"
	"github.com/mcptask/mcptask/internal/termsafe"
)

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
	// Every character .NET's TrimStart removes, not only ASCII space and tab.
	"\u3000::error::after an ideographic space",
	"\u2028::error::after a line separator (no line end to .NET)",
	"\u0085::error::after a next-line character",
	"\u1680\u2000\u205f::warning::after other Zs",
	// What ICU's culture-sensitive comparison looks through, and the byte order mark the
	// runner's StreamReader drops at the start of a stream.
	"\ufeff::error::after a byte order mark",
	"\u200b\u00ad::error::after zero-width characters",
	"::error:\u00ad:a soft hyphen between the closing colons",
	"x #\u200b#[set-env name=PATH]/evil",
	// OrdinalIgnoreCase maps U+017F (long s) to S.
	"::\u017fet-output name=x::y",
	"::echo::on",
}

func TestNeutralizeStopsEveryInjection(t *testing.T) {
	for _, text := range attacks {
		var r citest.Runner
		out := Neutralize(GitHub, text)
		r.Feed(out)
		if len(r.Ran) != 0 {
			t.Errorf("%q: the runner would run %+v from\n%s", text, r.Ran, out)
		}
		if !strings.Contains(out, text) {
			t.Errorf("%q: the text itself must reach the log unchanged; got\n%s", text, out)
		}
		// Commands after the block are honoured again: the block was closed.
		r.Feed("::notice::after\n")
		if len(r.Ran) != 1 || r.Ran[0].Data != "after" {
			t.Errorf("%q: the runner did not resume after the block: %+v", text, r.Ran)
		}
	}
}

func TestNeutralizeLeavesHarmlessTextAlone(t *testing.T) {
	for _, text := range []string{"slept 3 seconds\n", "a::b is fine mid-line", "## heading", "[x] done", "## [x] done", ": : spaced", "\u3000# #[", ""} {
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
	var r citest.Runner
	r.Feed(buf.String())
	if len(r.Ran) != 1 {
		t.Fatalf("want exactly the one annotation, ran %+v", r.Ran)
	}
	got := r.Ran[0]
	if got.Cmd != "error" || got.Props["title"] != "tool: a, b ::error::x" || got.Data != "50% done\n::set-output name=x::y" {
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
	var r citest.Runner
	r.Feed(buf.String())
	for _, p := range r.Ran {
		if p.Cmd != "group" && p.Cmd != "endgroup" {
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
		{"auto", env("TF_BUILD", "True"), Azure},
		{"auto", env("TEAMCITY_VERSION", "2025.03"), TeamCity},
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
	// GitHub's Markdown links bare URLs, www. names and addresses in text, and makes
	// :name: an emoji: none of it may stay live.
	var buf2 bytes.Buffer
	_ = WriteSummary(&buf2, "call", []Row{{TaskID: "t", Tool: "x", Outcome: "failed",
		Message: "see https://evil.example/login or www.evil.example, mail a@evil.example, ping @octocat :rocket:"}})
	row := strings.Split(strings.TrimSpace(buf2.String()), "\n")
	msg := row[len(row)-1]
	for _, bad := range []string{"https://", "www.", "a@evil", " @octocat", ":rocket:"} {
		if strings.Contains(msg, bad) {
			t.Errorf("row keeps a live autolink, mention or emoji %q: %s", bad, msg)
		}
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

// FuzzAnnotation plays the server against mcptask's own commands: whatever the title and the
// message hold, the runner reads exactly the one annotation (no property added, nothing after
// it), then exactly the one group, with the text it was given.
func FuzzAnnotation(f *testing.F) {
	f.Add("tool: a, b\n::error::x", "50% done\r\n::set-output name=x::y %0A %25")
	f.Add("t=1,line=2", ":\u00ad:warning::w\u2028##[error]x")
	f.Fuzz(func(t *testing.T, title, msg string) {
		var buf bytes.Buffer
		l := &Log{Sys: GitHub, W: &buf}
		l.Annotation(Warning, title, msg)
		l.Group(title)
		var r citest.Runner
		r.Feed(buf.String())
		if len(r.Ran) != 2 || r.Ran[0].Cmd != "warning" || r.Ran[1].Cmd != "group" || len(r.Ran[1].Props) != 0 {
			t.Fatalf("want one warning and one group, the runner reads %+v from %q", r.Ran, buf.String())
		}
		a := r.Ran[0]
		if len(a.Props) > 1 || a.Data != termsafe.String(msg) {
			t.Fatalf("the annotation reads back as %+v from %q", a, buf.String())
		}
		// A title the runner reads must be the title. It may read none: it drops a value that is
		// empty once its leading '=' are gone (Split('=', 2, RemoveEmptyEntries), citest.splitPair)
		// or that its culture-aware comparisons ignore altogether; a cosmetic loss, not a way in.
		// Characters those comparisons ignore may also be lost at the title's end, and with them
		// the white space they hid from the runner's Trim ("0 \u061a" reads as "0"), so both
		// sides are compared without them and without the white space left at the end.
		visible := func(s string) string {
			return strings.TrimRightFunc(strings.Map(func(r rune) rune {
				if citest.Ignorable(r) {
					return -1
				}
				return r
			}, s), citest.IsDotNetWhiteSpace)
		}
		want := strings.TrimLeft(strings.TrimRightFunc(termsafe.Line(title), citest.IsDotNetWhiteSpace), "=")
		if got, ok := a.Props["title"]; ok && visible(got) != visible(want) {
			t.Fatalf("title %q reads back as %q", want, got)
		}
	})
}

// TestAgentFolds: the letters the Azure and TeamCity prefixes are matched with are every rune
// a case-insensitive comparison takes for them.
func TestAgentFolds(t *testing.T) {
	for l, want := range agentFolds {
		var got []rune
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.ToUpper(r) == unicode.ToUpper(l) || unicode.ToLower(r) == l {
				got = append(got, r)
			}
		}
		if string(got) != want {
			t.Errorf("%c: %q, want %q", l, string(got), want)
		}
	}
}
