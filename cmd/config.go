package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/globalflags"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/spf13/cobra"
)

// Named servers are read by internal/config, once per run (servers); this file turns a name
// into the flags it stands for, and holds `mcptask servers` and its trust commands.

// servers returns the named servers of this run's config files, read on first use and kept:
// every command of the run (the pre-run hook resolving --server NAME, `servers`, `proxy
// --print-config`) sees the same files, read once.
func (f *Factory) servers() (*config.Set, error) {
	f.cfgOnce.Do(func() {
		wd, _ := os.Getwd()
		f.cfg, f.cfgErr = config.Load(config.Files(f.Global.Config, f.Getenv, wd), config.Trusted(f.Getenv))
		f.cfgErr = connErr(f.cfgErr)
	})
	return f.cfg, f.cfgErr
}

// applyNamedServer turns --server NAME into the flags it stands for. A value that looks like
// a URL is left alone.
func (f *Factory) applyNamedServer() error {
	if !f.Global.Named() {
		return nil
	}
	set, err := f.servers()
	if err != nil {
		return err
	}
	return connErr(f.Global.UseNamed(set, f.Getenv, func(msg string) { f.warnf("%s", msg) }))
}

// NewCmdServers returns `mcptask servers` and its trust and untrust commands.
func NewCmdServers(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "servers",
		Short: "List the named servers from MCP config files",
		Long: `List the servers named in the config files MCP hosts already use, with the file each
comes from and whether it is trusted. Use a name with --server NAME.

Files, in the order a name is taken: --config FILE ($MCPTASK_CONFIG); your own
$XDG_CONFIG_HOME/mcptask/config.json and Claude Desktop's claude_desktop_config.json;
then the project's ./.mcp.json and ./.vscode/mcp.json. A project file cannot shadow a
server your own config names (mcptask says so when the name is used).
Entries are {"url": …, "headers": {…}} for HTTP or {"command": …, "args": […], "env": {…}}
for stdio; header and env values may use ${VAR}, so no secret needs to be in the file.

A project file comes with the checkout, and anyone who can change the repository can
change it. Until you trust one of its servers ('mcptask servers trust NAME'), mcptask
expands none of that entry's ${VAR}s, starts none of its commands and sends nothing to
its URL. Trust is kept in $XDG_STATE_HOME/mcptask/trusted-servers.json for the file's
path and the entry's exact content: after an edit of the entry, trust it again. A file
named with --config is trusted as it is.

TRUST column: user or explicit (your own config or --config), trusted, untrusted,
shadowed (a file earlier in the order defines the name).`,
		Example: `  mcptask servers
  mcptask servers trust build-server && mcptask call build --server build-server
  mcptask servers untrust --all`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runServers(f) },
	}
	c.AddCommand(newCmdServersTrust(f, true), newCmdServersTrust(f, false))
	return c
}

// runServers lists the named servers, as a table or, with --json, a "servers" document.
func runServers(f *Factory) error {
	set, err := f.servers()
	if err != nil {
		return err
	}
	return f.printer().Print(output.NewServers(set.Servers), func(w io.Writer) error {
		if len(set.Servers) == 0 {
			_, err := fmt.Fprintln(f.IO.ErrOut, "no named servers in:\n  "+strings.Join(set.Paths(), "\n  "))
			return err
		}
		return output.ServersTable(w, set.Servers)
	})
}

// newCmdServersTrust returns `mcptask servers trust` (trust) or `mcptask servers untrust`.
func newCmdServersTrust(f *Factory, trust bool) *cobra.Command {
	var all bool
	verb, short, long := "trust", "Trust servers of the project's config files", `Trust servers defined by the project's .mcp.json or .vscode/mcp.json, after reviewing
them: mcptask then expands their ${VAR}s, starts their commands and sends their
headers. What each entry runs or reaches is printed. Trust is kept for the file's path
and the entry's exact content; an edit of the entry needs trust again.

EXIT STATUS
  0 trusted; 2 a name is not a server of the project's files.`
	if !trust {
		verb, short, long = "untrust", "Take back the trust given to project servers", `Take back the trust given with 'mcptask servers trust' to servers of the project's
.mcp.json or .vscode/mcp.json in this directory.

EXIT STATUS
  0 done; 2 a name is not a server of the project's files.`
	}
	c := &cobra.Command{
		Use:     verb + " [NAME...|--all]",
		Short:   short,
		Long:    long,
		Example: "  mcptask servers " + verb + " build-server\n  mcptask servers " + verb + " --all",
		RunE: func(c *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return flagErrorf("give the names of the servers to %s, or --all", verb)
			}
			return runServersTrust(f, trust, all, args)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every server of the project's config files in this directory")
	return c
}

// runServersTrust trusts (or, !trust, stops trusting) the project servers names, or all of
// them, and says what each one runs or reaches.
func runServersTrust(f *Factory, trust, all bool, names []string) error {
	set, err := f.servers()
	if err != nil {
		return err
	}
	chosen, err := set.ChooseProject(names, all)
	if err != nil {
		return connErr(err)
	}
	if err := config.SetTrust(f.Getenv, chosen, trust, f.Now().UTC()); err != nil {
		return err
	}
	for _, s := range chosen {
		output.TrustChanged(f.IO.ErrOut, s, trust)
	}
	if len(chosen) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no servers in the project's config files")
	}
	return nil
}

// completeTaskIDs offers the ledger's task ids (shell completion).
func completeTaskIDs(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		_, file, err := f.loadLedger()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return ledger.Completions(file.Tasks, prefix, f.Now()), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeToolNames offers the tools of the server the flags name, from the metadata cache a
// 2026-07-28 server allowed (shell completion): completion never reaches a server, so a
// server with nothing cached (or a 2025-11-25 one) completes nothing.
func completeToolNames(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// Completion runs no PersistentPreRun: settle the environment and a named server here.
		if globalflags.ApplyEnv(c.Flags(), f.Getenv) != nil || f.applyNamedServer() != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ref, hdr, err := f.serverRef()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return output.ToolCompletions(f.connector().CachedTools(ref, hdr), prefix), cobra.ShellCompDirectiveNoFileComp
	}
}
