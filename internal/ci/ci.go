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
)

func (s System) String() string {
	switch s {
	case GitHub:
		return "github"
	case GitLab:
		return "gitlab"
	}
	return "none"
}

// Detect picks the system from the --ci mode ("auto", "github", "gitlab" or "none") and, for
// "auto", from the variables the runners set: GITHUB_ACTIONS=true and GITLAB_CI=true.
func Detect(mode string, getenv func(string) string) (System, error) {
	switch mode {
	case "", "auto":
		switch {
		case getenv("GITHUB_ACTIONS") == "true":
			return GitHub, nil
		case getenv("GITLAB_CI") == "true":
			return GitLab, nil
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

// GitHub's runner (actions/runner, ActionCommand.TryParseV2 and TryParse) takes a line as a
// workflow command when, after leading white space, it starts with "::", or when it contains
// "##[" anywhere (the legacy form). It reads lines as .NET's ReadLine does, so "\r" alone ends
// a line too.
var lineBreaks = regexp.MustCompile(`\r\n|\r|\n`)

// Dangerous reports whether text holds a line GitHub's runner could take as a workflow command.
func Dangerous(text string) bool {
	if !strings.Contains(text, "::") && !strings.Contains(text, "##[") {
		return false
	}
	for _, line := range lineBreaks.Split(text, -1) {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\v\f\u00a0\ufeff"), "::") || strings.Contains(line, "##[") {
			return true
		}
	}
	return false
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
	if !strings.HasSuffix(text, "\n") {
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
	title, msg = redact.Text(title), redact.Text(msg)
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
	title = termsafe.Line(title)
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
