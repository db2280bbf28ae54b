package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// ToolsOptions are the inputs of `mcptask tools`.
type ToolsOptions struct{ f *Factory }

// NewCmdTools returns `mcptask tools`.
func NewCmdTools(f *Factory, runF func(context.Context, *ToolsOptions) error) *cobra.Command {
	opts := &ToolsOptions{f: f}
	return &cobra.Command{
		Use:   "tools",
		Short: "List the server's tools and their task support",
		Long: `List the tools of the server (every page of tools/list) with their descriptions.

On MCP 2025-11-25 each tool's execution.taskSupport is shown: "required" tools always
run as tasks, "optional" ones run as tasks when mcptask asks (it does), "forbidden" ones
never do. MCP 2026-07-28 has no per-tool flag: the server decides per call.`,
		Example: `  mcptask tools --server http://127.0.0.1:8080/mcp
  mcptask tools --stdio 'npx -y @modelcontextprotocol/server-everything stdio' --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runTools(c.Context(), opts)
		},
	}
}

func runTools(ctx context.Context, opts *ToolsOptions) error {
	f := opts.f
	c, ref, err := f.connect(ctx, rpc.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	actx, stop := f.answerContext(ctx)
	tools, warnings, err := c.ListTools(actx)
	stop()
	if err != nil {
		return answerErr(actx, ref, "tools/list", err)
	}
	if p := f.printer(); p.JSON() {
		raws := make([]json.RawMessage, len(tools))
		for i, t := range tools {
			raws[i] = t.Raw
		}
		b, _ := json.Marshal(raws)
		return p.Print(envelope{Type: "tools", Era: c.Era(), Server: ref.String(), Tools: b, Warnings: warnings}, nil)
	}
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: %s\n", termsafe.Line(termsafe.Cut(w)))
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	legacy := c.Era() == rpc.EraLegacy
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
	fmt.Fprintf(f.IO.ErrOut, "%d tools on %s (MCP %s)\n", len(tools), termsafe.Line(ref.String()), c.Era())
	return nil
}

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
