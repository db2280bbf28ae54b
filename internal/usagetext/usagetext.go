// Package usagetext writes a command's usage text the way the GitHub CLI does: the command's own
// flags first, then the global flags that apply to it in titled groups, and a pointer to
// 'mcptask --help' when some were left out. It holds the mechanics only; which groups exist and
// which command shows which is the command tree's own declaration (cmd/help.go), passed in as
// a Layout. It exists so that cmd keeps only that declaration (issue 21).
package usagetext

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Group is a set of global flags shown together in help.
type Group struct {
	ID    string
	Title string
	Flags []string
	// Brief is the one line shown in place of the flags where a command's help names the
	// group as "brief:ID": the group applies, but its flags are looked up elsewhere.
	Brief string
}

// Layout says how help groups the global flags. Groups lists every global flag once, in the
// order help shows the groups; a global flag missing there is shown under "Other global
// flags" on every command. Shown says which global flags each command's help shows, by the
// command's path below the root (Path): a word is the ID of a group, or one flag as --name. A
// command missing from Shown shows every group. A word "brief:ID" shows the group's Brief
// line instead of its flags.
//
// Exits lists, by the same paths, the exit codes each command can return ("0 1 2 6 7"),
// shown at the end of its help with their names (ExitName); Width is the number of columns
// help is laid out for (DefaultWidth when nil or 0).
type Layout struct {
	Groups   []Group
	Shown    map[string]string
	Exits    map[string]string
	ExitName func(int) string
	Width    func() int
}

// DefaultWidth is the width help is laid out for when Layout.Width gives none.
const DefaultWidth = 80

func (l Layout) width() int {
	if l.Width != nil {
		if w := l.Width(); w > 0 {
			return max(w, 40)
		}
	}
	return DefaultWidth
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

// briefs are the groups whose Brief line c's help shows.
func (l Layout) briefs(c *cobra.Command) []Group {
	words, ok := l.Shown[Path(c)]
	if !ok || c.Root() == c {
		return nil
	}
	var out []Group
	for _, g := range l.Groups {
		for _, w := range strings.Fields(words) {
			if w == "brief:"+g.ID && g.Brief != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// ExitCodes are the exit codes c's help lists (Exits), in order.
func (l Layout) ExitCodes(c *cobra.Command) []int {
	var codes []int
	for _, w := range strings.Fields(l.Exits[Path(c)]) {
		if n, err := strconv.Atoi(w); err == nil {
			codes = append(codes, n)
		}
	}
	return codes
}

// Globals are the global flags c takes: the root's persistent flags that c does not
// shadow with a flag of its own.
func Globals(c *cobra.Command) *pflag.FlagSet {
	if c.Root() == c {
		return c.PersistentFlags()
	}
	return c.InheritedFlags()
}

// helpSection is one titled block of flags, or of a group's Brief line.
type helpSection struct {
	Title string
	Flags *pflag.FlagSet
	Brief string
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
			sections = append(sections, helpSection{Title: title, Flags: fs})
		}
	}
	briefs := l.briefs(c)
	for _, g := range l.Groups {
		if slices.ContainsFunc(briefs, func(b Group) bool { return b.ID == g.ID }) {
			for _, name := range g.Flags {
				placed[name] = true
			}
			sections = append(sections, helpSection{Title: g.Title, Brief: g.Brief})
			continue
		}
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

// Install gives every command below root the help of Help and the usage text of Write.
func (l Layout) Install(root *cobra.Command) {
	root.SetUsageFunc(func(c *cobra.Command) error {
		l.Write(c.OutOrStderr(), c)
		return nil
	})
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		l.Help(c.OutOrStdout(), c)
	})
}

// maxProse is the widest a description is filled to, however wide the terminal: longer lines
// are hard to read.
const maxProse = 100

// Help writes c's help: its description, wrapped to the width (at most maxProse), then its
// usage (Write).
func (l Layout) Help(w io.Writer, c *cobra.Command) {
	text := c.Long
	if text == "" {
		text = c.Short
	}
	if text = strings.TrimRight(text, " \n"); text != "" {
		fmt.Fprint(w, Wrap(text, min(l.width(), maxProse)), "\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		l.Write(w, c)
	}
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
				col := 2 + sub.NamePadding() + 1
				fmt.Fprintf(w, "\n  %-*s %s", sub.NamePadding(), sub.Name(), hang(sub.Short, l.width(), col, col)[col:])
			}
		}
	}
	width := l.width()
	if own := ownFlags(c); own.HasAvailableFlags() {
		fmt.Fprintf(w, "\n\nFlags:\n%s", flagBlock(own, width))
	}
	sections, omitted := l.globalSections(c)
	for _, s := range sections {
		if s.Flags == nil {
			fmt.Fprintf(w, "\n\n%s:\n%s", s.Title, indentWrap(s.Brief, width, 2))
			continue
		}
		fmt.Fprintf(w, "\n\n%s:\n%s", s.Title, flagBlock(s.Flags, width))
	}
	if codes := l.ExitCodes(c); len(codes) > 0 {
		var words []string
		for _, code := range codes {
			name := ""
			if l.ExitName != nil {
				name = " " + l.ExitName(code)
			}
			words = append(words, strconv.Itoa(code)+name+",")
		}
		words[len(words)-1] = strings.TrimSuffix(words[len(words)-1], ",")
		fmt.Fprintf(w, "\n\nExit codes (see 'mcptask help exit-codes'):\n%s", hangWords(words, width, 2, 2))
	}
	if omitted {
		fmt.Fprint(w, "\n\nRun 'mcptask --help' for all global flags.")
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	fmt.Fprintln(w)
}
