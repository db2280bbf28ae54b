package citest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunnerReadsLinesAsTheRunnerDoes pins the model to what actions/runner's source does
// (the file and method are named beside each rule in runner.go).
func TestRunnerReadsLinesAsTheRunnerDoes(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []Command
	}{
		{"plain", "::error::x", []Command{{"error", map[string]string{}, "x"}}},
		{"name ignores case", "::ERROR::x", []Command{{"error", map[string]string{}, "x"}}},
		{"OrdinalIgnoreCase maps long s to S", "::\u017fet-output name=a::b", []Command{{"set-output", map[string]string{"name": "a"}, "b"}}},
		{"properties unescaped", "::error title=a%3Ab%2Cc, line=1 ::d%0Ae%25", []Command{{"error", map[string]string{"title": "a:b,c", " line": "1"}, "d\ne%"}}}, // keys are not trimmed
		{"TrimStart: every .NET white space", " \t\v\f\u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000::notice::x", []Command{{"notice", map[string]string{}, "x"}}},
		{"not white space to .NET Core: U+FEFF mid-stream", "a\n\ufeff::error::x", nil},
		{"U+200B is ignorable, not white space: the name would start with a colon", "\u200b::error::x", nil},
		{"byte order mark at the start of the stream is dropped", "\ufeff::error::x", []Command{{"error", map[string]string{}, "x"}}},
		{"culture-sensitive IndexOf looks through a soft hyphen", "::error:\u00ad:x", []Command{{"error", map[string]string{}, ":x"}}},
		{"tab is no separator", "::error\ttitle=x::y", nil},
		{"lone CR ends a line", "ok\r::warning::w", []Command{{"warning", map[string]string{}, "w"}}},
		{"U+2028 does not end a line but is trimmed", "ok\u2028::warning::w", nil},
		{"legacy anywhere", "text ##[set-env name=PATH;x=%3B]/evil", []Command{{"set-env", map[string]string{"name": "PATH", "x": ";"}, "/evil"}}},
		{"unregistered", "::pwn::x\n##[pwn]x", nil},
		{"echo and matchers are commands", "::echo::on\n::add-matcher::m.json", []Command{{"echo", map[string]string{}, "on"}, {"add-matcher", map[string]string{}, "m.json"}}},
		{"stop-commands", "::stop-commands::tok1234\n::error::no\n::TOK1234::\n::error::yes", []Command{{"error", map[string]string{}, "yes"}}},
		{"legacy resume", "::stop-commands::tok1234\n##[tok1234]\n::error::yes", []Command{{"error", map[string]string{}, "yes"}}},
		{"a refused token stops nothing", "::stop-commands::error\n::error::yes", []Command{{"stop-commands", map[string]string{}, "error"}, {"error", map[string]string{}, "yes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Runner
			r.Feed(tc.log)
			if diff := cmp.Diff(tc.want, r.Ran); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tc.log, diff)
			}
		})
	}
}

func TestGitLabFindsMarkersAnywhereInALine(t *testing.T) {
	var g GitLab
	g.Feed("\x1b[0Ksection_start:1:mine[collapsed=true]\r\x1b[0KTitle\n" +
		"output section_end:2:mine\r\x1b[0K more\n" +
		"\x1b]section_start:3:eaten\r\x1b[0K\n" + // the escape sequence swallows the "s"
		"section_start:4:no_suffix\n")
	want := []Marker{{"start", "1", "mine", "collapsed=true"}, {"end", "2", "mine", ""}}
	if diff := cmp.Diff(want, g.Markers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
