package output

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Tools shows the tools of a server (mcptask tools): with --json one envelope carrying the
// tools as received, else a table (with each tool's execution.taskSupport on 2025-11-25, where
// it exists) on p.Out and the warnings of tools/list on errOut, then a count there.
func (p *Printer) Tools(errOut io.Writer, tools []*rpc.Tool, warnings []string, era rpc.Era, server string) error {
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
	legacy := era == rpc.EraLegacy
	if legacy {
		fmt.Fprintln(tw, "NAME\tTASKS\tDESCRIPTION")
	} else {
		fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	}
	for _, t := range tools {
		desc := termsafe.Line(termsafe.Cut(firstLine(t.Description)))
		if legacy {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(termsafe.Cut(t.Name)), t.TaskSupport(), desc)
		} else {
			fmt.Fprintf(tw, "%s\t%s\n", termsafe.Line(termsafe.Cut(t.Name)), desc)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
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
