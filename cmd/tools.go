package cmd

import (
	"context"

	"github.com/mcptask/mcptask/internal/rpc"
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
	var tools []*rpc.Tool
	var warnings []string
	err = f.guard(ref)(ctx, "tools/list", func(ctx context.Context) (err error) {
		tools, warnings, err = c.ListTools(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return f.printer().Tools(f.IO.ErrOut, tools, warnings, c.Era(), ref.String())
}
