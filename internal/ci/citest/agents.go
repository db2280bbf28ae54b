package citest

import (
	"strings"
	"unicode"
	"unicode/utf16"
)

// Azure is a model of what the Azure Pipelines agent (microsoft/azure-pipelines-agent) does
// with a step's output: it reads stdout and stderr line by line (.NET StreamReader.ReadLine,
// as Lines splits), and src/Agent.Worker/Command.cs (Command.TryParse) looks for the logging
// command prefix "##vso[" anywhere in the line, then the "]" after it; the text between is
// "area.event" (exactly two non-empty parts split at ".") and, after a space, properties
// "key=value;…". Every such line is a command (task.setvariable, task.prependpath,
// task.complete, …): the agent knows them all, so the model does not list them.
//
// The agent's IndexOf is culture-sensitive on some versions, and its own escaping rewrites a
// prefix to "**vso[": the model errs towards finding a command, so it looks through what
// ICU's collation ignores between the prefix's characters, folds case, and reads every prefix
// in a line, not only the first.
type Azure struct {
	// Commands are the "area.event" names the agent would run, in order.
	Commands []string
}

// Feed reads a piece of one stream.
func (a *Azure) Feed(log string) {
	for _, line := range Lines(log) {
		for _, rest := range prefixed(line, "##vso[") {
			rb := strings.IndexByte(rest, ']')
			if rb < 0 {
				continue
			}
			info := rest[:rb]
			name, _, _ := strings.Cut(info, " ")
			var parts []string
			for _, p := range strings.Split(name, ".") {
				if p != "" {
					parts = append(parts, p)
				}
			}
			if len(parts) == 2 {
				a.Commands = append(a.Commands, strings.ToLower(name))
			}
		}
	}
}

// TeamCity is a model of what TeamCity's build agent does with a step's output: it reads
// lines (Java's BufferedReader.readLine: "\n", "\r" or "\r\n" ends one) and finds service
// messages anywhere in a line (the jetbrains.buildServer.messages.serviceMessages parser
// scans for "##teamcity[" from every position): a message name, then either a single quoted
// value or name='value' attributes, then "]", with "|" escaping a quote or bracket inside
// values. Like Azure, the model errs towards finding a message: it looks through what ICU's
// collation ignores between the prefix's characters, folds case, and takes any name.
type TeamCity struct {
	// Messages are the service message names the agent would act on, in order.
	Messages []string
}

// Feed reads a piece of one stream.
func (c *TeamCity) Feed(log string) {
	for _, line := range Lines(log) {
		for _, rest := range prefixed(line, "##teamcity[") {
			if name, ok := teamCityMessage(rest); ok {
				c.Messages = append(c.Messages, name)
			}
		}
	}
}

// teamCityMessage reads a service message after its prefix: a name, then up to the "]" that
// is not escaped with "|".
func teamCityMessage(s string) (string, bool) {
	i := 0
	for i < len(s) && s[i] != ' ' && s[i] != ']' {
		i++
	}
	name := s[:i]
	if name == "" {
		return "", false
	}
	inQuote := false
	for ; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '|':
			i++ // the escaped character
		case s[i] == '\'':
			inQuote = !inQuote
		case !inQuote && s[i] == ']':
			return name, true
		}
	}
	return "", false
}

// prefixed returns the rest of line after every place a culture-sensitive, case-insensitive
// search finds prefix: its characters in order, with anything ICU's collation ignores between
// them.
func prefixed(line, prefix string) []string {
	want := []rune(prefix)
	rs := []rune(line)
	var out []string
	for start := range rs {
		if unicode.ToLower(rs[start]) != want[0] {
			continue
		}
		i, k := start+1, 1
		for i < len(rs) && k < len(want) {
			switch {
			case unicode.ToLower(rs[i]) == want[k] || unicode.ToUpper(rs[i]) == unicode.ToUpper(want[k]):
				i++
				k++
			case ignorableRune(rs[i]):
				i++
			default:
				k = -1
			}
			if k < 0 {
				break
			}
		}
		if k == len(want) {
			out = append(out, string(rs[i:]))
		}
	}
	return out
}

// ignorableRune is Ignorable for a rune that is not half of a surrogate pair.
func ignorableRune(r rune) bool {
	if utf16.IsSurrogate(r) {
		return false
	}
	return ignorable(r)
}
