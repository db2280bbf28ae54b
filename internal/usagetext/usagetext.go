// Package usagetext writes a command's usage text the way the GitHub CLI does: the command's own
// flags first, then the global flags that apply to it in titled groups, and a pointer to
// 'mcptask --help' when some were left out. It holds the mechanics only; which groups exist and
// which command shows which is the command tree's own declaration (cmd/help.go), passed in as
// a Layout. It exists so that cmd keeps only that declaration (issue 21).
package usagetext

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Group is a set of global flags shown together in help.
type Group struct {
	ID    string
	Title string
	Flags []string
}

// Layout says how help groups the global flags. Groups lists every global flag once, in the
// order help shows the groups; a global flag missing there is shown under "Other global
// flags" on every command. Shown says which global flags each command's help shows, by the
// command's path below the root (Path): a word is the ID of a group, or one flag as --name. A
// command missing from Shown shows every group.
type Layout struct {
	Groups []Group
	Shown  map[string]string
}

// Path is a command's path below the root: "servers trust".
func Path(c *cobra.Command) string {
	p := c.CommandPath()
	if c.Root() == c {
		return ""
	}
	_, rest, _ := strings.Cut(p, " ")
	return rest
}

// Shows reports whether c's help shows the global flag name.
func (l Layout) Shows(c *cobra.Command, name string) bool {
	if c.Root() == c {
		return true
	}
	path := Path(c)
	if strings.HasPrefix(path, "completion ") {
		path = "completion"
	}
	words, ok := l.Shown[path]
	if !ok {
		return true
	}
	group := ""
	for _, g := range l.Groups {
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

// Globals are the global flags c takes: the root's persistent flags that c does not
// shadow with a flag of its own.
func Globals(c *cobra.Command) *pflag.FlagSet {
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
func (l Layout) globalSections(c *cobra.Command) (sections []helpSection, omitted bool) {
	globals := Globals(c)
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
			if !l.Shows(c, name) {
				omitted = true
				continue
			}
			fs.AddFlag(fl)
		}
		if fs.HasFlags() {
			sections = append(sections, helpSection{title, fs.FlagUsages()})
		}
	}
	for _, g := range l.Groups {
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

// Install gives every command below root the usage text of Write.
func (l Layout) Install(root *cobra.Command) {
	root.SetUsageFunc(func(c *cobra.Command) error {
		l.Write(c.OutOrStderr(), c)
		return nil
	})
}

// Write writes c's usage: the command line, examples, subcommands, its own flags, then
// the global flags that apply to it, in groups.
func (l Layout) Write(w io.Writer, c *cobra.Command) {
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
	sections, omitted := l.globalSections(c)
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
