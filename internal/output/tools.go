package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Tools shows the tools of a server (mcptask tools): with --json one envelope carrying the
// tools as received, else a table on p.Out, with whether each tool runs as a task as the era
// says it (TaskSupport: the tool's execution.taskSupport on 2025-11-25, "server decides" on
// 2026-07-28, "never" when the server declares no task support for tools/call), and the
// warnings of tools/list on errOut, then a count there.
func (p *Printer) Tools(errOut io.Writer, tools []*rpc.Tool, warnings []string, era rpc.Era, server string, serverTasks bool) error {
	if p.JSON() {
		raws := make([]json.RawMessage, len(tools))
		for i, t := range tools {
			raws[i] = t.Raw
		}
		b, _ := json.Marshal(raws)
		return p.Print(Envelope{Type: "tools", Era: era, Server: server, Tools: b, Warnings: warnings}, nil)
	}
	for _, w := range warnings {
		fmt.Fprintf(errOut, "mcptask: warning: %s\n", termsafe.Line(termsafe.Cut(w)))
	}
	tw := tabwriter.NewWriter(p.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTASKS\tDESCRIPTION")
	for _, t := range tools {
		desc := termsafe.Line(termsafe.Cut(firstLine(t.Description)))
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(termsafe.Cut(t.Name)), taskSupportCell(TaskSupport(t, era, serverTasks)), desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case !serverTasks:
		fmt.Fprintf(errOut, "the server declares no task support for tools/call: no tool runs as a task\n")
	case TaskSupport(&rpc.Tool{}, era, serverTasks) == "server-decides":
		fmt.Fprintf(errOut, "MCP 2026-07-28 has no per-tool task flag: the server decides, call by call, whether a call runs as a task\n")
	}
	fmt.Fprintf(errOut, "%d tools on %s (MCP %s)\n", len(tools), termsafe.Line(server), era)
	return nil
}

// firstLine is the first line of s, cut to 100 characters.
func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

// ToolCompletions are the shell's candidates for a tool name that starts with prefix:
// "name\tdescription". The shell inserts what it is offered, so a name that is not plain
// visible ASCII is not offered, and the description (the server's) is cleaned and cut.
func ToolCompletions(tools []*rpc.Tool, prefix string) []string {
	var out []string
	for _, t := range tools {
		if !strings.HasPrefix(t.Name, prefix) || !plainWord(t.Name) {
			continue
		}
		desc := termsafe.Line(termsafe.CutN(firstLine(t.Description), 200))
		if desc == "" {
			out = append(out, t.Name)
			continue
		}
		out = append(out, t.Name+"\t"+desc)
	}
	return out
}

// plainWord reports whether s is 1 to 128 visible ASCII characters, none of them a shell's
// quote, space or escape.
func plainWord(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b <= ' ' || b >= 0x7f || strings.IndexByte("\"'`$\\;&|<>(){}*?!#~", b) >= 0 {
			return false
		}
	}
	return true
}
