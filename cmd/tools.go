package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// ToolsOptions are the inputs of `mcptask tools`.
type ToolsOptions struct {
	f *Factory
	// Name is the one tool to show (tools NAME); "" lists them all.
	Name string
}

// NewCmdTools returns `mcptask tools`.
func NewCmdTools(f *Factory, runF func(context.Context, *ToolsOptions) error) *cobra.Command {
	opts := &ToolsOptions{f: f}
	return &cobra.Command{
		Use:   "tools [NAME]",
		Short: "List the server's tools and their task support, or show one tool's arguments",
		Long: `List the tools of the server (every page of tools/list) with their descriptions and
whether each runs as a task (TASKS).

On MCP 2025-11-25 that is each tool's execution.taskSupport: "required" tools always
run as tasks, "optional" ones run as tasks when mcptask asks (it does), "forbidden" ones
never do. MCP 2026-07-28 has no per-tool flag: the server decides per call ("server
decides"). A server that declares no task support for tools/call runs none ("never").

With NAME, one tool: its title, task support and description, then its arguments as a
table (name, type, required, default, description) read from its inputSchema. On
2026-07-28 a tools/list the server allowed caching is read from the cache.`,
		Example: `  mcptask tools --server http://127.0.0.1:8080/mcp
  mcptask tools sleep --server http://127.0.0.1:8080/mcp
  mcptask tools --stdio 'npx -y @modelcontextprotocol/server-everything stdio' --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeToolNames(f),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
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
	if opts.Name != "" {
		return showTool(ctx, f, c, ref, opts.Name)
	}
	var tools []*rpc.Tool
	var warnings []string
	err = f.guard(ref)(ctx, "tools/list", func(ctx context.Context) (err error) {
		tools, warnings, err = c.ListTools(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return f.printer().Tools(f.IO.ErrOut, tools, warnings, c.Era(), ref.String(), c.TasksSupported())
}

// showTool shows the tool name of the server c is connected to (tools NAME).
func showTool(ctx context.Context, f *Factory, c *rpc.Client, ref ServerRef, name string) error {
	var t *rpc.Tool
	err := f.guard(ref)(ctx, "tools/list", func(ctx context.Context) (err error) {
		t, err = c.Tool(ctx, name)
		return err
	})
	if err != nil {
		return err
	}
	if t == nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s has no tool %q; 'mcptask tools' lists them", ref, termsafe.Line(termsafe.CutN(name, 200)))}
	}
	doc := output.NewToolDoc(t, c.Era(), ref.String(), c.TasksSupported())
	return f.printer().Print(doc, func(w io.Writer) error { return doc.Text(w, t, toolsWidth(f)) })
}

// toolsWidth is what a tool's table wraps to: the terminal's width, none for a pipe (nothing
// is wrapped there).
func toolsWidth(f *Factory) int {
	if !f.IO.IsStdoutTTY() {
		return 0
	}
	return cmp.Or(f.stdoutWidth(), 80)
}
