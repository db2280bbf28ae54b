package citest

import (
	"regexp"
	"strings"
)

// GitLab is a model of GitLab's job-log parser (gitlab-org/gitlab, mirrored on GitHub as
// gitlabhq/gitlabhq: lib/gitlab/ci/ansi2json/converter.rb, Converter#consume_token, with the
// marker of lib/gitlab/regex.rb, build_trace_section_regex). It reads the trace line by line (Ruby's
// each_line: a line ends at "\n") and token by token: at every token boundary it first tries a
// section marker, then an escape sequence, a line end, a "\r" (which clears the line so far),
// or a run of plain text that stops before every "s", "\e", "\r" and "\n" — so a marker is
// found anywhere in a line, not only at its start. It records the markers it would act on
// (the viewer also folds case and maps other characters to "-" in a name, so "MCPTASK.1"
// would close "mcptask_1": a test should accept only the exact names mcptask wrote).
type GitLab struct {
	// Markers are the section markers found, in order.
	Markers []Marker
}

// Marker is one section_start or section_end the log viewer would act on.
type Marker struct {
	Action  string // "start" or "end"
	Time    string
	Name    string
	Options string // e.g. "collapsed=true"
}

var (
	// build_trace_section_regex: logs_section_prefix_regex, logs_section_options_regex and
	// logs_section_suffix_regex ("\r\e[0K"), anchored where the scanner stands.
	glSection = regexp.MustCompile(`^section_((?:start)|(?:end)):(\d+):([a-zA-Z0-9_.-]+)(\[(?:\w+=\w+)(?:, ?(?:\w+=\w+))*\])?\r\x1b\[0K`)
	// consume_token's other tokens, in the order it tries them.
	glSequence = regexp.MustCompile(`^\x1b([@-_])(.*?)([@-~])`)
	glUnended  = regexp.MustCompile(`(?m)\A\x1b(?:[@-_].*?)?$`) // Ruby's $ ends a line
	glLineEnd  = regexp.MustCompile(`^\r?\n`)
	glPlain    = regexp.MustCompile(`^(?s:.)[^\x1b\r\ns]*`)
)

// Feed reads a piece of the trace (whole lines; a last line without "\n" counts as one).
func (g *GitLab) Feed(trace string) {
	for trace != "" {
		i := strings.IndexByte(trace, '\n')
		line := trace
		if i >= 0 {
			line, trace = trace[:i+1], trace[i+1:]
		} else {
			trace = ""
		}
		g.line(line)
	}
}

func (g *GitLab) line(s string) {
	for s != "" {
		if m := glSection.FindStringSubmatch(s); m != nil {
			g.Markers = append(g.Markers, Marker{Action: m[1], Time: m[2], Name: m[3], Options: strings.Trim(m[4], "[]")})
			s = s[len(m[0]):]
			continue
		}
		if m := glSequence.FindString(s); m != "" {
			s = s[len(m):]
			continue
		}
		if glUnended.MatchString(s) {
			return // "stop scanning": the rest of the line is dropped
		}
		if m := glLineEnd.FindString(s); m != "" {
			s = s[len(m):]
			continue
		}
		if s[0] == '\r' {
			s = s[1:]
			continue
		}
		m := glPlain.FindString(s)
		if m == "" { // invalid UTF-8: one byte is one token
			m = s[:1]
		}
		s = s[len(m):]
	}
}
