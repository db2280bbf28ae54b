// Package citest is test support for what CI systems do with mcptask's output: models of
// GitHub's runner reading a job log (Runner) and of GitLab's job-log parser (GitLab), shared by
// the ci package's tests and the command tests. They are oracles: where the real parser's
// behaviour depends on something the model cannot know (the ICU version's collation data, a
// runner feature flag), the model takes the reading under which a command runs, so that a test
// that asserts "nothing ran" errs towards failing.
package citest

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Runner is a model of what GitHub's runner (actions/runner) does with the output of a step:
//
//   - Lines: src/Runner.Sdk/ProcessInvoker.cs (StartReadStream) reads stdout and stderr, each
//     through a .NET StreamReader, with ReadLine: a line ends at "\n", "\r" or "\r\n", and a
//     UTF-8 byte order mark at the very start of a stream is dropped (the StreamReader detects
//     encodings from byte order marks). Feed each stream into its own Runner, or call Reset
//     between streams.
//   - Every line goes to src/Runner.Worker/Handlers/OutputManager.cs (OnDataReceived), which
//     passes it to ActionCommandManager.TryProcessCommand when it contains "##[" or "::".
//   - src/Runner.Worker/ActionCommandManager.cs (TryProcessCommand) tries
//     ActionCommand.TryParseV2 and then the legacy ActionCommand.TryParse
//     (src/Runner.Common/ActionCommand.cs) against the registered command names, compared
//     with StringComparer.OrdinalIgnoreCase, and honours ::stop-commands::TOKEN: from then on
//     the token is the only command, "::TOKEN::" or "##[TOKEN]" ends the pause.
//
// The runner's string searches StartsWith("::"), IndexOf("::", 2) and IndexOf("##[") are
// culture-sensitive (.NET on ICU), so they skip what ICU's collation ignores entirely (soft
// hyphen, zero-width characters, most controls): the model does too (ignorable).
type Runner struct {
	// Ran are the commands the runner would have run, in order (stop-commands and the
	// resuming token excepted: they are in Stops).
	Ran []Command
	// Stops are the tokens of the ::stop-commands:: the runner honoured, in order.
	Stops []string

	stopped bool
	token   string
	started bool
}

// Command is a workflow command the runner would have run.
type Command struct {
	// Cmd is the command's name as registered (lower case).
	Cmd string
	// Props are its properties, keys lower-cased (the runner's dictionary ignores case).
	Props map[string]string
	Data  string
}

// Registered are the commands the runner knows: ActionCommandManager.Initialize registers
// stop-commands and every IActionCommandExtension that src/Runner.Common/ExtensionManager.cs
// lists (internal-set-repo-path only while a runner plugin runs, so it is left out).
var Registered = []string{"stop-commands", "set-env", "set-output", "save-state", "add-path",
	"add-mask", "add-matcher", "remove-matcher", "warning", "error", "notice", "debug",
	"group", "endgroup", "echo"}

// Stopped reports whether the log ended inside a ::stop-commands:: block (one nobody closed).
func (r *Runner) Stopped() bool { return r.stopped }

// Reset starts a new stream (stdout after stderr): the byte order mark rule applies again.
// The stop-commands state is the runner's, not the stream's, and is kept.
func (r *Runner) Reset() { r.started = false }

// Feed reads a piece of one stream. A last line without its end counts as a line, as
// ReadLine returns it at the end of the stream.
func (r *Runner) Feed(log string) {
	if !r.started {
		r.started = true
		log = strings.TrimPrefix(log, "\ufeff")
	}
	for _, line := range Lines(log) {
		r.Line(line)
	}
}

// Lines splits s into lines as .NET's StreamReader.ReadLine does: at "\r\n", "\r" or "\n".
// An empty last piece (text that ends with a line end) is no line.
func Lines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

// Line runs one line through ActionCommandManager.TryProcessCommand.
func (r *Runner) Line(line string) {
	// OutputManager.OnDataReceived: only lines with "##[" or "::" reach the command manager.
	// (Both TryParse methods need one of them anyway.)
	names := Registered
	if r.stopped {
		// While stopped, the token is registered as a command too; every other command
		// parses but is ignored.
		names = append(append([]string(nil), Registered...), r.token)
	}
	c, ok := TryParseV2(line, names)
	if !ok {
		c, ok = TryParse(line, names)
	}
	if !ok {
		return
	}
	switch {
	case r.stopped:
		if equalFoldOrdinal(c.Cmd, r.token) {
			r.stopped, r.token = false, ""
		}
	case c.Cmd == "stop-commands":
		// ValidateStopToken: a token that is a registered command, empty or "pause-logging"
		// is refused (unless ACTIONS_ALLOW_UNSECURE_STOP_COMMANDS, which a job must not set).
		if c.Data == "" || equalFoldOrdinal(c.Data, "pause-logging") || registered(c.Data, Registered) {
			r.Ran = append(r.Ran, c) // the runner fails the step: a command did run
			return
		}
		r.stopped, r.token = true, c.Data
		r.Stops = append(r.Stops, c.Data)
	default:
		r.Ran = append(r.Ran, c)
	}
}

// TryParseV2 is ActionCommand.TryParseV2: "::name props::data" after the leading white space
// that .NET's String.TrimStart removes. It works in UTF-16 code units, as .NET strings do.
func TryParseV2(line string, names []string) (Command, bool) {
	m := utf16.Encode([]rune(line))
	// message = message.TrimStart();
	for len(m) > 0 && IsDotNetWhiteSpace(rune(m[0])) {
		m = m[1:]
	}
	// if (!message.StartsWith("::")) — culture-sensitive: ignorables may come before and
	// between the colons.
	start := 0
	for start < len(m) && ignorable(rune(m[start])) {
		start++
	}
	if _, ok := matchColons(m, start); !ok {
		return Command{}, false
	}
	// int endIndex = message.IndexOf("::", 2); — culture-sensitive too.
	endIndex := -1
	for i := 2; i < len(m); i++ {
		if _, ok := matchColons(m, i); ok {
			endIndex = i
			break
		}
	}
	if endIndex < 0 {
		return Command{}, false
	}
	cmdInfo := m[2:endIndex]
	// Where ICU reports a match that begins with ignorables is not pinned down here; the
	// reading that runs a command is the one where they belong to the match.
	for {
		if n := len(cmdInfo); n > 0 && ignorable(rune(cmdInfo[n-1])) {
			cmdInfo = cmdInfo[:n-1]
		} else if n > 1 && utf16.IsSurrogate(rune(cmdInfo[n-1])) && ignorable(utf16.DecodeRune(rune(cmdInfo[n-2]), rune(cmdInfo[n-1]))) {
			cmdInfo = cmdInfo[:n-2]
		} else {
			break
		}
	}
	name, props, hasProps := cut16(cmdInfo, ' ')
	c, ok := newCommand(string16(name), names)
	if !ok {
		return Command{}, false
	}
	if hasProps && len(name) > 0 {
		for _, p := range strings.Split(trimDotNet(string16(props)), ",") {
			if k, v, ok := splitPair(p); ok {
				c.Props[strings.ToLower(k)] = unescapeSeq(v, "%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
			}
		}
	}
	// command.Data = UnescapeData(message.Substring(endIndex + 2));
	c.Data = unescapeSeq(string16(m[endIndex+2:]), "%0D", "\r", "%0A", "\n", "%25", "%")
	return c, true
}

// TryParse is the legacy ActionCommand.TryParse: "##[name props]data" anywhere in the line
// (no trimming), properties separated by ";".
func TryParse(line string, names []string) (Command, bool) {
	m := utf16.Encode([]rune(line))
	prefix := -1
	for i := 0; i+2 < len(m); i++ {
		if m[i] == '#' && m[i+1] == '#' && m[i+2] == '[' {
			prefix = i
			break
		}
	}
	if prefix < 0 {
		return Command{}, false
	}
	rb := -1
	for i := prefix; i < len(m); i++ {
		if m[i] == ']' {
			rb = i
			break
		}
	}
	if rb < 0 {
		return Command{}, false
	}
	cmdInfo := m[prefix+3 : rb]
	name, props, hasProps := cut16(cmdInfo, ' ')
	c, ok := newCommand(string16(name), names)
	if !ok {
		return Command{}, false
	}
	unescape := func(s string) string {
		return unescapeSeq(s, "%3B", ";", "%0D", "\r", "%0A", "\n", "%5D", "]", "%25", "%")
	}
	if hasProps && len(name) > 0 {
		for _, p := range strings.Split(string16(props), ";") {
			if k, v, ok := splitPair(p); ok {
				c.Props[strings.ToLower(k)] = unescape(v)
			}
		}
	}
	c.Data = unescape(string16(m[rb+1:]))
	return c, true
}

// matchColons matches "::" at m[i] the way a culture-sensitive comparison does: a colon, any
// ignorables, a colon. It returns the index after the match.
func matchColons(m []uint16, i int) (int, bool) {
	if i >= len(m) || m[i] != ':' {
		return 0, false
	}
	j := i + 1
	for j < len(m) {
		if ignorable(rune(m[j])) {
			j++
		} else if j+1 < len(m) && ignorable(utf16.DecodeRune(rune(m[j]), rune(m[j+1]))) {
			j += 2
		} else {
			break
		}
	}
	if j >= len(m) || m[j] != ':' {
		return 0, false
	}
	return j + 1, true
}

func newCommand(name string, names []string) (Command, bool) {
	for _, n := range names {
		if equalFoldOrdinal(name, n) {
			return Command{Cmd: strings.ToLower(n), Props: map[string]string{}}, true
		}
	}
	return Command{}, false
}

func registered(name string, names []string) bool {
	_, ok := newCommand(name, names)
	return ok
}

// equalFoldOrdinal is StringComparer.OrdinalIgnoreCase: code unit by code unit, each mapped
// to upper case by the invariant simple mapping (so "ſ" matches "s" and "ı" matches "i").
func equalFoldOrdinal(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	if len(ua) != len(ub) {
		return false
	}
	for i := range ua {
		if ua[i] != ub[i] && unicode.ToUpper(rune(ua[i])) != unicode.ToUpper(rune(ub[i])) {
			return false
		}
	}
	return true
}

// splitPair is propertyStr.Split('=', 2, RemoveEmptyEntries) with a length check of 2.
func splitPair(p string) (string, string, bool) {
	p = strings.TrimLeft(p, "=")
	k, v, ok := strings.Cut(p, "=")
	v = strings.TrimLeft(v, "=")
	if !ok || k == "" || v == "" {
		return "", "", false
	}
	return k, v, true
}

// unescapeSeq replaces each (escaped, token) pair in turn, as the runner's loops over its
// escape mappings do (one String.Replace after the other, not at once).
func unescapeSeq(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

func cut16(s []uint16, sep uint16) (before, after []uint16, found bool) {
	for i, c := range s {
		if c == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, nil, false
}

func string16(s []uint16) string { return string(utf16.Decode(s)) }

func trimDotNet(s string) string { return strings.TrimFunc(s, IsDotNetWhiteSpace) }

// IsDotNetWhiteSpace is .NET's Char.IsWhiteSpace, what String.Trim and TrimStart remove:
// the Unicode categories Zs, Zl and Zp, U+0009–U+000D and U+0085. (U+FEFF and U+180E are not
// white space to .NET Core; U+001C–U+001F are not either.)
func IsDotNetWhiteSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r == 0x85:
		return true
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

var (
	collMu    sync.Mutex
	collator  = collate.New(language.Und)
	collBuf   collate.Buffer
	ignorable = func(r rune) bool {
		if unicode.Is(unicode.Cf, r) {
			return true
		}
		collMu.Lock()
		defer collMu.Unlock()
		collBuf.Reset()
		for _, b := range collator.KeyFromString(&collBuf, string(r)) {
			if b != 0 {
				return false
			}
		}
		return true
	}
)

// Ignorable reports whether ICU's collation (CLDR root, as .NET's culture-sensitive string
// search uses it) ignores r entirely, so that StartsWith("::") and IndexOf("::") look through
// it. Format characters (Cf) count too, whatever the table's Unicode version says.
func Ignorable(r rune) bool { return ignorable(r) }
