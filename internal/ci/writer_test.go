package ci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/mcptask/mcptask/internal/ci/citest"
)

// checkGitHubLog feeds out to the runner model and fails on any command it would run, a
// stop-commands block that is not mcptask's or that stays open.
func checkGitHubLog(t testing.TB, in, out string) {
	t.Helper()
	var r citest.Runner
	r.Feed(out)
	if len(r.Ran) != 0 {
		t.Fatalf("%q: the runner would run %+v from\n%q", in, r.Ran, out)
	}
	for _, tok := range r.Stops {
		if !regexp.MustCompile(`^mcptask-[0-9a-f]{32}$`).MatchString(tok) {
			t.Fatalf("%q: a stop-commands block that is not mcptask's: %q in\n%q", in, tok, out)
		}
	}
	if r.Stopped() {
		t.Fatalf("%q: the log ends inside a stop-commands block:\n%q", in, out)
	}
}

// TestWriterStopsInjectionsSplitAcrossWrites: a command whose line comes in pieces (the way
// a result is printed block by block) is still neutralised, because the writer holds a line
// until it ends; and nothing harmless is changed.
func TestWriterStopsInjectionsSplitAcrossWrites(t *testing.T) {
	for _, exact := range []bool{true, false} {
		for _, text := range attacks {
			for cut := 0; cut <= len(text); cut++ {
				var buf bytes.Buffer
				w := &Writer{W: &buf, Sys: GitHub, Exact: exact}
				_, _ = w.Write([]byte("result: "))
				_, _ = w.Write([]byte("\n" + text[:cut]))
				_, _ = w.Write([]byte(text[cut:]))
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				checkGitHubLog(t, text, buf.String())
				for _, line := range lineBreaks.Split(text, -1) {
					got, want := buf.String(), line
					if !exact { // stderr: the defusing backslashes aside, every line arrives
						got, want = strings.ReplaceAll(got, `\`, ""), strings.ReplaceAll(want, `\`, "")
					}
					if !strings.Contains(got, want) {
						t.Fatalf("%q cut at %d (exact %v): every line of the text must reach the log; got\n%s", text, cut, exact, buf.String())
					}
				}
			}
		}
	}
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: GitHub}
	_, _ = w.Write([]byte("2026-11-25T10:00:00Z abc working step 1\n"))
	if got := buf.String(); got != "2026-11-25T10:00:00Z abc working step 1\n" {
		t.Errorf("a complete harmless line passes at once and unchanged, got %q", got)
	}
	_, _ = w.Write([]byte("no end yet"))
	if buf.Len() != len("2026-11-25T10:00:00Z abc working step 1\n") {
		t.Errorf("a line without its end waits for it: %q", buf.String())
	}
	_ = w.Flush()
	if !strings.HasSuffix(buf.String(), "no end yet") {
		t.Errorf("Flush passes the rest on: %q", buf.String())
	}
}

// TestDefuseIsReadable: stderr's defused lines say what the server sent, with the runner's
// own kind of backslash.
func TestDefuseIsReadable(t *testing.T) {
	for in, want := range map[string]string{
		"  ::error::x":          `  \::error::x`,
		"a ##[set-env name=A]b": `a ##[\set-env name=A]b`,
		"fine: a::b":            "fine: a::b",
	} {
		if got := Defuse(in); got != want {
			t.Errorf("Defuse(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterKeepsJSONReadable: in JSON mode, and for a JSON line on stderr, the legacy ##[
// form is escaped inside strings, so the runner runs nothing and a JSON reader gets the very
// same string back.
func TestWriterKeepsJSONReadable(t *testing.T) {
	for _, jsonMode := range []bool{true, false} { // --jsonl on stdout; a JSON line on stderr
		var buf bytes.Buffer
		w := &Writer{W: &buf, Sys: GitHub, JSON: jsonMode, Exact: jsonMode}
		in, _ := json.Marshal(map[string]string{"text": "x ##[set-env name=PATH]/evil\n::error::y #\u00ad#[error]z"})
		_, _ = w.Write(append(in, '\n'))
		checkGitHubLog(t, string(in), buf.String())
		var back map[string]string
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["text"] != "x ##[set-env name=PATH]/evil\n::error::y #\u00ad#[error]z" {
			t.Errorf("the JSON must read back the same: %v %q", err, back["text"])
		}
	}
}

// TestWriterPassesThroughOutsideCI: a log no CI system reads is left alone.
func TestWriterPassesThroughOutsideCI(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: None}
	_, _ = w.Write([]byte("::error::x"))
	if buf.String() != "::error::x" {
		t.Errorf("got %q", buf.String())
	}
}

// gitlabAttacks are server strings that try to open, close or fake a GitLab section.
var gitlabAttacks = []string{
	"section_start:1795544077:evil[collapsed=true]\r\x1b[0KFake header",
	"done section_end:1795544077:mcptask_1_task\r\x1b[0K",
	"\x1b[0Ksection_start:1:x\r\x1b[0K\x1b[0Ksection_end:2:x\r\x1b[0K",
}

// TestWriterStopsGitLabSections: server text cannot open or close a section, even split over
// writes; escape sequences that are not a marker's (colours) are kept.
func TestWriterStopsGitLabSections(t *testing.T) {
	for _, text := range gitlabAttacks {
		for cut := 0; cut <= len(text); cut++ {
			var buf bytes.Buffer
			w := &Writer{W: &buf, Sys: GitLab}
			_, _ = w.Write([]byte(text[:cut]))
			_, _ = w.Write([]byte(text[cut:] + "\n"))
			_ = w.Flush()
			var g citest.GitLab
			g.Feed(buf.String())
			if len(g.Markers) != 0 {
				t.Fatalf("%q cut at %d: GitLab would act on %+v in\n%q", text, cut, g.Markers, buf.String())
			}
		}
	}
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: GitLab}
	_, _ = w.Write([]byte("\x1b[31mred\x1b[0m ::error::x\n"))
	if buf.String() != "\x1b[31mred\x1b[0m ::error::x\n" {
		t.Errorf("GitLab: harmless text must pass unchanged, got %q", buf.String())
	}
}

// TestTrustedWritesAroundHeldLines: mcptask's own commands never land inside a line the
// writer holds.
func TestTrustedWritesAroundHeldLines(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: GitHub}
	_, _ = w.Write([]byte("server text without an end "))
	_, _ = w.Trusted().Write([]byte("::group::task x\n"))
	_, _ = w.Write([]byte("::error::x\n"))
	var r citest.Runner
	r.Feed(buf.String())
	if len(r.Ran) != 1 || r.Ran[0].Cmd != "group" {
		t.Errorf("want only mcptask's group to run, got %+v from %q", r.Ran, buf.String())
	}
}

// seedRunes are every character the runner or ICU might skip before a command: Unicode white
// space (Go's and .NET's), every format character (Cf), the C0 and C1 controls.
func seedRunes() []rune {
	var rs []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) || citest.IsDotNetWhiteSpace(r) || unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// FuzzWriter plays the server against the writer: whatever text comes, split anywhere, the
// runner model runs nothing from the log (stdout, stderr or JSON), and GitLab sees no marker.
// Its seeds put a command behind every white-space, format and control character; they run
// with every `go test`.
func FuzzWriter(f *testing.F) {
	for _, r := range seedRunes() {
		c := string(r)
		f.Add(c+"::error::x", uint16(1), uint8(r%4))
		f.Add("a\n"+c+"#"+c+"#[set-env name=A]b", uint16(3), uint8((r+1)%4))
		f.Add(":"+c+":warning::w", uint16(0), uint8((r+2)%4))
		f.Add("s"+c+"section_end:1:mcptask_1_x\r\x1b[0K", uint16(2), uint8((r+3)%4))
	}
	for _, a := range attacks {
		f.Add(a, uint16(len(a)/2), uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, cut uint16, mode uint8) {
		c := int(cut) % (len(text) + 1)
		var buf bytes.Buffer
		w := &Writer{W: &buf, Sys: GitHub}
		switch mode % 4 {
		case 0: // stdout: results byte for byte
			w.Exact = true
		case 1: // stderr
		case 2: // --jsonl
			w.JSON, w.Exact = true, true
			b, _ := json.Marshal(map[string]string{"text": text})
			text = string(b) + "\n"
			c = int(cut) % (len(text) + 1)
		case 3:
			w.Sys = GitLab
		}
		_, _ = w.Write([]byte(text[:c]))
		_, _ = w.Write([]byte(text[c:]))
		_ = w.Flush()
		out := buf.String()
		if w.Sys == GitLab {
			var g citest.GitLab
			g.Feed(out)
			if len(g.Markers) != 0 {
				t.Fatalf("%q: GitLab acts on %+v in %q", text, g.Markers, out)
			}
			return
		}
		checkGitHubLog(t, text, out)
		switch {
		case w.JSON:
			var back map[string]string
			var orig map[string]string
			_ = json.Unmarshal([]byte(text), &orig)
			if err := json.Unmarshal([]byte(out), &back); err != nil || back["text"] != orig["text"] {
				t.Fatalf("%q: JSON does not read back: %v %q", text, err, out)
			}
		case w.Exact:
			var r citest.Runner
			r.Feed(out)
			bare := out
			for _, tok := range r.Stops {
				bare = strings.Replace(bare, "::stop-commands::"+tok+"\n", "", 1)
				bare = strings.Replace(bare, "::"+tok+"::\n", "", 1)
			}
			// Azure and TeamCity prefixes are the one change stdout gets (DefuseAgents).
			if want := DefuseAgents(text, false); bare != want && bare != want+"\n" {
				t.Fatalf("%q: stdout must carry the text unchanged: %q", text, out)
			}
		}
		if mode%4 == 1 && strings.Count(out, "\n") != strings.Count(text, "\n") {
			t.Fatalf("%q: stderr lines added or lost: %q", text, fmt.Sprint(out))
		}
	})
}

// TestSkipCoversWhatTheRunnerSkips: the writer looks through at least every character the
// runner model does: what TrimStart removes before the colons, and what ICU's collation
// ignores anywhere.
func TestSkipCoversWhatTheRunnerSkips(t *testing.T) {
	lead := regexp.MustCompile(`^` + leadSkip + `$`)
	inner := regexp.MustCompile(`^` + innerSkip + `$`)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Cs, r) || r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		if (citest.IsDotNetWhiteSpace(r) || citest.Ignorable(r)) && !lead.MatchString(s) {
			t.Errorf("%U: the runner skips it before a command, the writer does not", r)
		}
		if citest.Ignorable(r) && !inner.MatchString(s) {
			t.Errorf("%U: ICU looks through it inside \"::\" or \"##[\", the writer does not", r)
		}
	}
}

// agentAttacks are Azure Pipelines logging commands and TeamCity service messages as a
// server would hide them: anywhere in a line, in other cases, with letters Unicode folds to
// the prefix's, behind ignorable characters, split by a lone "\r", inside JSON.
var agentAttacks = []string{
	"##vso[task.setvariable variable=PWNED]pwned",
	"status: ##vso[task.prependpath]/tmp/evil",
	"x ##VSO[task.complete result=Succeeded;]done",
	"#\u00ad#v\u200bso[task.setvariable variable=A]b",
	"##v\u017fo[task.setvariable variable=A]b",
	"ok\r##vso[task.complete result=Succeeded]x",
	`{"text":"##vso[task.setvariable variable=A]b"}`,
	"##teamcity[buildStatus status='SUCCESS' text='pwned']",
	"log ##teamcity[setParameter name='env.PATH' value='/evil']",
	"##TEAMCITY[buildProblem description='x']",
	"##teamc\u0131ty[enableServiceMessages]",
	"#\u200d#teamcity[message text='a|]b' status='ERROR']",
}

// fuzzAgent runs text through a Writer of each kind (stdout, stderr, --jsonl, each CI
// system) cut at cut, and fails when the agent model read acts on what came out, or when
// stdout or a JSON line lost or changed anything but a prefix.
func fuzzAgent(t *testing.T, text string, cut uint16, mode uint8, commands func(out string) []string) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: []System{GitHub, GitLab, Azure, TeamCity}[mode/3%4]}
	switch mode % 3 {
	case 0:
		w.Exact = true
	case 2:
		w.JSON, w.Exact = true, true
		b, _ := json.Marshal(map[string]string{"text": text})
		text = string(b) + "\n"
	}
	c := int(cut) % (len(text) + 1)
	_, _ = w.Write([]byte(text[:c]))
	_, _ = w.Write([]byte(text[c:]))
	_ = w.Flush()
	out := buf.String()
	if got := commands(out); len(got) != 0 {
		t.Fatalf("%q (%v, mode %d): the agent acts on %q in %q", text, w.Sys, mode%3, got, out)
	}
	if w.JSON {
		var back, orig map[string]string
		_ = json.Unmarshal([]byte(text), &orig)
		if err := json.Unmarshal([]byte(out), &back); err != nil || back["text"] != orig["text"] {
			t.Fatalf("%q: JSON does not read back: %v %q", text, err, out)
		}
	}
}

func agentSeeds(f *testing.F) {
	for _, a := range agentAttacks {
		for mode := range 12 {
			f.Add(a, uint16(len(a)/2), uint8(mode))
		}
	}
	for _, r := range seedRunes() {
		c := string(r)
		f.Add("#"+c+"#vso[task.setvariable variable=A]b", uint16(1), uint8(r%12))
		f.Add("a ##"+c+"teamcity[buildStatus text='x']", uint16(3), uint8((r+5)%12))
	}
}

// FuzzAzure: no output of the writer, in any mode and CI system, holds an Azure Pipelines
// logging command the agent model would run.
func FuzzAzure(f *testing.F) {
	agentSeeds(f)
	f.Fuzz(func(t *testing.T, text string, cut uint16, mode uint8) {
		fuzzAgent(t, text, cut, mode, func(out string) []string {
			var a citest.Azure
			a.Feed(out)
			return a.Commands
		})
	})
}

// FuzzTeamCity: no output of the writer holds a TeamCity service message the model would
// act on.
func FuzzTeamCity(f *testing.F) {
	agentSeeds(f)
	f.Fuzz(func(t *testing.T, text string, cut uint16, mode uint8) {
		fuzzAgent(t, text, cut, mode, func(out string) []string {
			var c citest.TeamCity
			c.Feed(out)
			return c.Messages
		})
	})
}

// TestAgentModelsSeeTheAttacks: the models find every attack as written (so the fuzz
// targets test something), and the writer's output reads as the text with its prefixes
// changed to "**".
func TestAgentModelsSeeTheAttacks(t *testing.T) {
	for _, a := range agentAttacks {
		var az citest.Azure
		var tc citest.TeamCity
		az.Feed(a)
		tc.Feed(a)
		if len(az.Commands)+len(tc.Messages) != 1 {
			t.Errorf("%q: the models read %v %v, want one command", a, az.Commands, tc.Messages)
		}
	}
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: Azure}
	_, _ = w.Write([]byte("status: ##vso[task.prependpath]/tmp/evil\n"))
	if got := buf.String(); got != "status: **vso[task.prependpath]/tmp/evil\n" {
		t.Errorf("got %q", got)
	}
}
