package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Help shows a command's own flags, then the global flags that apply to it, in groups, the
// way gh shows a command's flags and a short "inherited flags" block. Every global flag stays
// persistent: a script may pass any of them to any command, as it always could. Only what help
// and the generated reference show is chosen here (issue 21).

// flagGroup is a set of global flags shown together in help.
type flagGroup struct {
	ID    string
	Title string
	Flags []string
}

// flagGroups lists every global flag once, in the order help shows the groups. A global flag
// missing here is shown under "Other global flags" on every command (TestHelpGroupsEveryFlag
// asks for it to be placed).
var flagGroups = []flagGroup{
	{"server", "Server flags", []string{"server", "stdio", "config", "header", "bearer-env", "protocol", "insecure", "connect-timeout", "max-conns", "no-push"}},
	{"auth", "OAuth flags", []string{"login", "browser", "client-id", "client-secret-env", "issuer", "client-metadata-url", "callback-port", "auth-store", "profile", "grant", "client-key-file"}},
	{"output", "Output flags", []string{"json", "trace", "record"}},
	{"ledger", "Ledger flags", []string{"state", "keep"}},
	{"ci", "CI flags", []string{"ci"}},
}

// globalsShown says which global flags each command's help shows, by the command's path
// below the root. A word is a group of flagGroups, or one flag as --name. A command missing
// here shows every group (TestHelpGroupsEveryCommand asks for it to be placed).
var globalsShown = map[string]string{
	"call":          "server auth output ledger ci",
	"get":           "server auth output --state ci",
	"result":        "server auth output ledger ci",
	"cancel":        "server auth output ledger ci",
	"tools":         "server auth output --state ci", // the metadata cache lives beside the ledger
	"list":          "server auth output --state ci", // --server with --remote, or to pick a server's records
	"resume":        "server auth output ledger ci",
	"watch":         "server auth output ledger ci",
	"update":        "server auth output --state ci",
	"forget":        "--json --state",
	"prune":         "--json --state",
	"adopt":         "--server --stdio --config --json --state",
	"servers":       "--config --json",
	"servers trust": "--config --json",
	// untrust forgets what trust kept, for the names of the config files.
	"servers untrust": "--config --json",
	"check":           "server auth output ci",
	"proxy":           "--server --stdio --config --header --bearer-env --insecure --connect-timeout output --state",
	"demo":            "--protocol output ledger ci", // it runs 'mcptask call' against its own server
	"demo serve":      "",
	"auth":            "--server --config --insecure auth output",
	"auth login":      "--server --config --insecure auth output",
	"auth logout":     "--server --config --insecure auth output",
	"auth status":     "--server --config --profile --auth-store --json",
	"version":         "--json",
	"exit-codes":      "--json",
	"help":            "",
	"completion":      "",
}

// helpPath is a command's path below the root: "servers trust".
func helpPath(c *cobra.Command) string {
	p := c.CommandPath()
	if c.Root() == c {
		return ""
	}
	_, rest, _ := strings.Cut(p, " ")
	return rest
}

// shownGlobal reports whether c's help shows the global flag name.
func shownGlobal(c *cobra.Command, name string) bool {
	if c.Root() == c {
		return true
	}
	path := helpPath(c)
	if strings.HasPrefix(path, "completion ") {
		path = "completion"
	}
	words, ok := globalsShown[path]
	if !ok {
		return true
	}
	group := ""
	for _, g := range flagGroups {
		for _, fl := range g.Flags {
			if fl == name {
				group = g.ID
			}
		}
	}
	if group == "" {
		return true // a flag no group places: never hidden
	}
	for _, w := range strings.Fields(words) {
		if w == group || w == "--"+name {
			return true
		}
	}
	return false
}

// globalFlags are the global flags c takes: the root's persistent flags that c does not
// shadow with a flag of its own.
func globalFlags(c *cobra.Command) *pflag.FlagSet {
	if c.Root() == c {
		return c.PersistentFlags()
	}
	return c.InheritedFlags()
}

// helpSection is one titled block of flags.
type helpSection struct {
	Title  string
	Usages string
}

// globalSections are the groups of global flags c's help shows, and whether any global flag
// was left out.
func globalSections(c *cobra.Command) (sections []helpSection, omitted bool) {
	globals := globalFlags(c)
	placed := map[string]bool{}
	add := func(title string, names []string) {
		fs := pflag.NewFlagSet(title, pflag.ContinueOnError)
		fs.SortFlags = false // the group's own order: the flags people reach for first
		for _, name := range names {
			placed[name] = true
			fl := globals.Lookup(name)
			if fl == nil || fl.Hidden {
				continue
			}
			if !shownGlobal(c, name) {
				omitted = true
				continue
			}
			fs.AddFlag(fl)
		}
		if fs.HasFlags() {
			sections = append(sections, helpSection{title, fs.FlagUsages()})
		}
	}
	for _, g := range flagGroups {
		add(g.Title, g.Flags)
	}
	var rest []string
	globals.VisitAll(func(fl *pflag.Flag) {
		if !placed[fl.Name] {
			rest = append(rest, fl.Name)
		}
	})
	add("Other global flags", rest)
	return sections, omitted
}

// ownFlags are the flags of c itself: its local flags, less the root's global ones.
func ownFlags(c *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet("own", pflag.ContinueOnError)
	globals := c.Root().PersistentFlags()
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		if c.Root() == c && globals.Lookup(fl.Name) == fl {
			return
		}
		fs.AddFlag(fl)
	})
	return fs
}

// setupHelp gives every command the usage text below.
func setupHelp(root *cobra.Command) {
	root.SetUsageFunc(func(c *cobra.Command) error {
		writeUsage(c.OutOrStderr(), c)
		return nil
	})
}

// writeUsage writes c's usage: the command line, examples, subcommands, its own flags, then
// the global flags that apply to it, in groups.
func writeUsage(w io.Writer, c *cobra.Command) {
	fmt.Fprint(w, "Usage:")
	if c.Runnable() {
		fmt.Fprintf(w, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(w, "\n\nExamples:\n%s", c.Example)
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprint(w, "\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(w, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if own := ownFlags(c); own.HasAvailableFlags() {
		fmt.Fprintf(w, "\n\nFlags:\n%s", strings.TrimRight(own.FlagUsages(), " \n"))
	}
	sections, omitted := globalSections(c)
	for _, s := range sections {
		fmt.Fprintf(w, "\n\n%s:\n%s", s.Title, strings.TrimRight(s.Usages, " \n"))
	}
	if omitted {
		fmt.Fprint(w, "\n\nRun 'mcptask --help' for all global flags.")
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	fmt.Fprintln(w)
}
