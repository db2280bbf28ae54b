// Package ci makes mcptask's output fit the CI system it runs in: GitHub Actions workflow
// commands (annotations and log groups) and the job's step summary, GitLab CI collapsible
// sections, and the neutralising of server text, so that a string a server wrote never becomes
// a workflow command in the job log. It is a package of its own because it is one idea (what a
// CI system's log parser does with a line) shared by every command that follows tasks, and
// because getting it wrong lets a server run commands in the user's job.
package ci

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// System is a CI system whose log mcptask writes for.
type System int

const (
	// None writes plain output.
	None System = iota
	// GitHub is GitHub Actions: workflow commands, $GITHUB_STEP_SUMMARY.
	GitHub
	// GitLab is GitLab CI: collapsible sections.
	GitLab
	// Azure is Azure Pipelines, TeamCity is TeamCity: mcptask writes none of their commands,
	// and keeps a server from writing them (DefuseAgents).
	Azure
	TeamCity
)

func (s System) String() string {
	switch s {
	case GitHub:
		return "github"
	case GitLab:
		return "gitlab"
	case Azure:
		return "azure"
	case TeamCity:
		return "teamcity"
	}
	return "none"
}

// Detect picks the system from the --ci mode ("auto", "github", "gitlab" or "none") and, for
// "auto", from the variables the runners set: GITHUB_ACTIONS=true, GITLAB_CI=true, TF_BUILD
// (Azure Pipelines sets it to True) and TEAMCITY_VERSION.
func Detect(mode string, getenv func(string) string) (System, error) {
	switch mode {
	case "", "auto":
		switch {
		case getenv("GITHUB_ACTIONS") == "true":
			return GitHub, nil
		case getenv("GITLAB_CI") == "true":
			return GitLab, nil
		case strings.EqualFold(getenv("TF_BUILD"), "true"):
			return Azure, nil
		case getenv("TEAMCITY_VERSION") != "":
			return TeamCity, nil
		}
		return None, nil
	case "github":
		return GitHub, nil
	case "gitlab":
		return GitLab, nil
	case "none":
		return None, nil
	}
	return None, fmt.Errorf("--ci %q: want auto, github, gitlab or none", mode)
}

// What GitHub's runner takes as a workflow command (actions/runner): it reads each stream with
// .NET's StreamReader.ReadLine (src/Runner.Sdk/ProcessInvoker.cs, StartReadStream), so "\r"
// alone ends a line as well as "\n" and "\r\n", and a byte order mark at a stream's start is
// dropped. ActionCommandManager.TryProcessCommand (src/Runner.Worker/ActionCommandManager.cs)
// then tries ActionCommand.TryParseV2 (src/Runner.Common/ActionCommand.cs), which removes the
// leading white space String.TrimStart removes (every Unicode Zs, Zl and Zp character,
// U+0009-U+000D, U+0085) and asks whether the rest StartsWith("::") — a culture-sensitive
// comparison that looks through what ICU's collation ignores (soft hyphen, zero-width and
// other format characters, most controls) — and the legacy ActionCommand.TryParse, which
// looks for "##[" anywhere in the line, culture-sensitively too.
//
// mcptask judges a line more broadly than any runner version can, so that no Unicode or ICU
// update makes a line it let pass a command: before the colons it skips everything that is not
// a letter, digit, punctuation or symbol (white space, controls, format characters, marks,
// unassigned code points); between the colons, and between the characters of "##[", all of
// that but white space, which ICU's collation never ignores (so "## [x]" stays text). The
// five letters and punctuation marks the collation root table ignores entirely (Arabic tatweel,
// NKo lajanyalan, Mongolian nirugu, Vedic nihshvasa, Arabic tail fragment) are skipped too.
const (
	icuIgnoredGraphic = `\x{0640}\x{07FA}\x{180A}\x{1CD3}\x{FE73}`
	leadSkip          = `(?:[^\pL\pN\pP\pS]|[` + icuIgnoredGraphic + `])*`
	innerSkip         = `(?:[^\pL\pN\pP\pS\pZ]|[` + icuIgnoredGraphic + `])*`
)

var (
	// lineBreaks are the line ends of StreamReader.ReadLine.
	lineBreaks = regexp.MustCompile(`\r\n|\r|\n`)
	// commandStart is a line TryParseV2 could read. It and legacyPrefix are compiled on first
	// use: their Unicode classes cost 0.4 ms, which a command that never writes a CI log (most
	// runs) should not pay at start-up (bench/README.md, `call --detach` against curl).
	commandStart = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^` + leadSkip + `:` + innerSkip + `:`)
	})
	// legacyPrefix is the "##[" TryParse finds anywhere in a line.
	legacyPrefix = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`#` + innerSkip + `#` + innerSkip + `\[`)
	})
)

// Dangerous reports whether text holds a line GitHub's runner could take as a workflow command.
func Dangerous(text string) bool {
	if !strings.Contains(text, ":") && !strings.Contains(text, "[") {
		return false
	}
	for _, line := range lineBreaks.Split(text, -1) {
		if dangerousLine(line) {
			return true
		}
	}
	return false
}

func dangerousLine(line string) bool {
	// (The byte order mark the runner drops at a stream's start is a format character:
	// skipped as well.)
	return commandStart().MatchString(line) || legacyPrefix().MatchString(line)
}

// Defuse changes a line GitHub's runner could take as a command so that it cannot, the way the
// runner itself defuses its own markers in a step's output (OutputManager.OnDataReceived
// writes `##[\start-action`): a backslash goes before the colons of a leading "::", and after
// the "[" of every "##[". The text stays readable; other lines are returned as they are.
func Defuse(line string) string {
	if loc := commandStart().FindStringIndex(line); loc != nil {
		i := strings.IndexByte(line, ':')
		line = line[:i] + `\` + line[i:]
	}
	return legacyPrefix().ReplaceAllStringFunc(line, func(m string) string { return m + `\` })
}

// defuseJSON changes "##[" inside the JSON text line (where it can only stand in a string)
// to "\u0023#[": the same string to every JSON reader, no command to the runner. A line of
// JSON text never starts with "::".
func defuseJSON(line string) string {
	return legacyPrefix().ReplaceAllStringFunc(line, func(m string) string { return `\u0023` + m[1:] })
}

// The Azure Pipelines agent acts on "##vso[" anywhere in a line of stdout or stderr
// (microsoft/azure-pipelines-agent, src/Agent.Worker/Command.cs, Command.TryParse), and
// TeamCity on "##teamcity[" anywhere (its service messages). Neither has a pause that a
// random token guards (TeamCity's ##teamcity[enableServiceMessages] ends its pause whoever
// writes it), so in every CI mode a server's prefix is changed the way the Azure agent
// itself defuses one: "##vso[" is written "**vso[" and "##teamcity[" "**teamcity["; in JSON
// text "\u0023#vso[", the same string to a JSON reader. The prefixes are matched broadly, as
// the runner's are: in any case (and the letters Unicode folds to them, such as "ſ" and "ı"),
// with anything ICU's collation ignores between their characters.
var agentPrefix = sync.OnceValue(func() *regexp.Regexp {
	word := func(w string) string {
		var b strings.Builder
		for _, l := range w {
			b.WriteString(innerSkip + "[" + regexp.QuoteMeta(agentFolds[l]) + "]")
		}
		return b.String()
	}
	return regexp.MustCompile(`#` + innerSkip + `#(?:` + word("vso") + `|` + word("teamcity") + `)` + innerSkip + `\[`)
})

// agentFolds are, for each letter of the prefixes, the runes whose upper case is its upper
// case or whose lower case is the letter (what a case-insensitive .NET or Java comparison
// takes for it; TestAgentFolds computes them again from the Unicode tables).
var agentFolds = map[rune]string{'v': "Vv", 's': "Ssſ", 'o': "Oo", 't': "Tt", 'e': "Ee", 'a': "Aa",
	'm': "Mm", 'c': "Cc", 'i': "Iiİı", 'y': "Yy"}

// agentHint is the quick test before agentPrefix: both prefixes hold "#" and "[".
func agentHint(text string) bool {
	return strings.Contains(text, "#") && strings.Contains(text, "[")
}

// DefuseAgents changes every Azure Pipelines and TeamCity command prefix in text so that
// neither agent acts on it; a line that is JSON text (or every line, with json) keeps the
// same JSON value.
func DefuseAgents(text string, json bool) string {
	if !agentHint(text) || !agentPrefix().MatchString(text) {
		return text
	}
	return mapLines(text, func(line string) string {
		if !agentPrefix().MatchString(line) {
			return line
		}
		asJSON := json || jsonValid(line)
		return agentPrefix().ReplaceAllStringFunc(line, func(m string) string {
			if asJSON {
				return `\u0023` + m[1:]
			}
			i := strings.IndexByte(m[1:], '#') + 1
			return "*" + m[1:i] + "*" + m[i+1:]
		})
	})
}

// mapLines is text with each of its lines (as the runners split them: lineBreaks) replaced
// by fn's, each line's end kept as it was.
func mapLines(text string, fn func(line string) string) string {
	var b strings.Builder
	for text != "" {
		loc := lineBreaks.FindStringIndex(text)
		line, end := text, ""
		if loc != nil {
			line, end = text[:loc[0]], text[loc[0]:loc[1]]
			text = text[loc[1]:]
		} else {
			text = ""
		}
		b.WriteString(fn(line))
		b.WriteString(end)
	}
	return b.String()
}

// GitLab's job log (gitlab-org/gitlab, mirrored as gitlabhq/gitlabhq:
// lib/gitlab/ci/ansi2json/converter.rb, Converter#consume_token)
// acts on a section marker anywhere in a line: "section_start:" or "section_end:", a time, a
// name, options, and then "\r\e[0K" (lib/gitlab/regex.rb, build_trace_section_regex). A
// marker lies within one "\n"-ended line and needs its "\r\e[0K": server text that holds
// both a marker's start and that suffix has the suffix shown as the symbols ␍␛ instead, so
// that it cannot open, close or fake a section. Escape sequences elsewhere (colours) stay.
var (
	gitlabMarker = regexp.MustCompile(`section_(?:start|end):`)
	gitlabSuffix = "\r\x1b[0K"
)

// DefuseGitLab returns text (whole lines) with every section marker made inert.
func DefuseGitLab(text string) string {
	if !strings.Contains(text, gitlabSuffix) || !gitlabMarker.MatchString(text) {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, gitlabSuffix) && gitlabMarker.MatchString(l) {
			lines[i] = strings.ReplaceAll(l, gitlabSuffix, "␍␛[0K")
		}
	}
	return strings.Join(lines, "")
}

// newToken returns the random resume token of a ::stop-commands:: block: a server cannot
// guess it, so it cannot end the block early.
var newToken = func() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "mcptask-" + hex.EncodeToString(b)
}

// Neutralize returns text as GitHub's runner must see it when a server wrote it: unchanged
// when no line of it could be a workflow command (so the common case stays byte for byte what
// the server sent), and otherwise inside a ::stop-commands:: block with a random token, which
// makes the runner ignore every command until the token comes back. The result ends with a
// newline when text did or when it was wrapped. For other systems text is returned as is.
func Neutralize(sys System, text string) string {
	if sys != GitHub || !Dangerous(text) {
		return text
	}
	token := newToken()
	for strings.Contains(text, token) {
		token = newToken()
	}
	// The closing command must start a line of its own. A text that already ends a line, with
	// "\n" or with the lone "\r" the runner also reads as a line's end (Writer holds back a
	// "\r" that may be half of "\r\n"), is left byte for byte as it is.
	if !strings.HasSuffix(text, "\n") && !strings.HasSuffix(text, "\r") {
		text += "\n"
	}
	return "::stop-commands::" + token + "\n" + text + "::" + token + "::\n"
}

// escapeData and escapeProperty are the escapings of actions/toolkit's command.ts (and the
// runner's unescaping): the data of a command, and the values of its properties, which also
// must not hold the ':' and ',' that separate them.
var (
	escapeData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	escapeProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// Level is the kind of a GitHub annotation.
type Level string

const (
	Error   Level = "error"
	Warning Level = "warning"
	Notice  Level = "notice"
)

// Log writes the workflow commands of one system to the job log (mcptask's stderr). It is safe
// for concurrent use: each command is written whole.
type Log struct {
	Sys System
	W   io.Writer
	// Now stamps GitLab sections; time.Now when nil.
	Now func() time.Time

	mu     sync.Mutex
	open   string // the GitLab section or GitHub group open now
	nextID int
}

// Annotation writes a GitHub ::error/::warning/::notice with a title. Both come from the server
// in part (a tool name, a status message), so both are escaped and stripped of terminal escapes,
// and both are redacted (internal/redact): an annotation outlives the job on the run's page.
// Other systems get nothing: their logs have no annotations, and the plain lines already say it.
func (l *Log) Annotation(level Level, title, msg string) {
	if l == nil || l.Sys != GitHub {
		return
	}
	title, msg = DefuseAgents(redact.Text(title), false), DefuseAgents(redact.Text(msg), false)
	line := fmt.Sprintf("::%s title=%s::%s\n", level, escapeProperty.Replace(termsafe.Line(title)), escapeData.Replace(termsafe.String(msg)))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.W, line)
}

// sectionName keeps what GitLab allows in a section name.
var sectionName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Group opens a collapsible group of log lines titled title (GitHub ::group::, GitLab
// section_start), closing one that is still open. Groups do not nest on either system.
func (l *Log) Group(title string) {
	if l == nil || l.Sys == None {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endLocked()
	title = DefuseAgents(termsafe.Line(title), false)
	switch l.Sys {
	case GitHub:
		// The title is the data of the command: escaped, so that it is one line.
		fmt.Fprintf(l.W, "::group::%s\n", escapeData.Replace(title))
		l.open = "group"
	case GitLab:
		l.nextID++
		name := fmt.Sprintf("mcptask_%d_%s", l.nextID, strings.Trim(sectionName.ReplaceAllString(strings.ToLower(title), "_"), "_"))
		if len(name) > 60 {
			name = name[:60]
		}
		fmt.Fprintf(l.W, "\x1b[0Ksection_start:%d:%s[collapsed=true]\r\x1b[0K%s\n", l.now().Unix(), name, title)
		l.open = name
	}
}

// EndGroup closes the open group, if any.
func (l *Log) EndGroup() {
	if l == nil || l.Sys == None {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endLocked()
}

func (l *Log) endLocked() {
	if l.open == "" {
		return
	}
	switch l.Sys {
	case GitHub:
		_, _ = io.WriteString(l.W, "::endgroup::\n")
	case GitLab:
		fmt.Fprintf(l.W, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", l.now().Unix(), l.open)
	}
	l.open = ""
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
