// Package citest is test support for what CI systems do with mcptask's output: a model of
// GitHub's runner reading a job log, shared by the ci package's tests and the command tests.
package citest

import (
	"regexp"
	"strings"
)

// Runner is a model of what GitHub's runner does with a job log (actions/runner,
// ActionCommandManager.TryProcessCommand with ActionCommand.TryParseV2 and TryParse): it splits
// lines as .NET's ReadLine does, recognises "::cmd props::data" after leading white space and
// "##[cmd props]data" anywhere, honours ::stop-commands::TOKEN until ::TOKEN::, and records the
// commands it would have run.
type Runner struct {
	stopped bool
	token   string
	Ran     []Command
}

// Command is a workflow command the runner would have run.
type Command struct {
	Cmd   string
	Props map[string]string
	Data  string
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

func parseLine(line string, names map[string]bool) (Command, bool) {
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, "::") {
		end := strings.Index(t[2:], "::")
		if end >= 0 {
			info := t[2 : 2+end]
			name, props, _ := strings.Cut(info, " ")
			if names[strings.ToLower(name)] {
				p := Command{Cmd: strings.ToLower(name), Props: map[string]string{}, Data: unescape(t[2+end+2:], false)}
				for _, kv := range strings.Split(props, ",") {
					if k, v, ok := strings.Cut(kv, "="); ok {
						p.Props[k] = unescape(v, true)
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
				return Command{Cmd: strings.ToLower(name), Data: line[i+j+1:]}, true
			}
		}
	}
	return Command{}, false
}

// Feed reads a piece of the job log (whole lines).
func (r *Runner) Feed(log string) {
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
		case p.Cmd == "stop-commands":
			r.stopped, r.token = true, p.Data
		default:
			r.Ran = append(r.Ran, p)
		}
	}
}
