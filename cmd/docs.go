package cmd

import (
	"strings"

	"github.com/mcptask/mcptask/internal/usagetext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ReferencePages calls page for every available command of the tree, with the name its
// reference page takes (its path, spaces replaced by sep). While page runs, the global flags
// the command's --help leaves out are hidden, so that a page lists the same flags as --help
// (help.go). tools/docgen writes docs/reference and the man pages with it; the generator lives
// there, outside the binary, because cobra's man-page code costs every start of mcptask half a
// millisecond of package init (bench/README.md).
func ReferencePages(sep string, page func(name string, c *cobra.Command) error) error {
	f := NewFactory(&IOStreams{In: strings.NewReader("")})
	// The pages show the flags' own defaults, never the MCPTASK_* values of whoever runs this.
	f.Getenv = func(string) string { return "" }
	root := NewCmdRoot(f)
	root.DisableAutoGenTag = true
	return visitPages(root, sep, page)
}

// ReferenceHelp is c's --help as the reference shows it: laid out for DefaultWidth columns,
// whoever's terminal runs the generator, so that the pages are the same everywhere.
func ReferenceHelp(c *cobra.Command) string {
	var b strings.Builder
	helpLayout.Help(&b, c) // no Width: usagetext.DefaultWidth
	return b.String()
}

func visitPages(c *cobra.Command, sep string, page func(string, *cobra.Command) error) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := visitPages(sub, sep, page); err != nil {
			return err
		}
	}
	var hidden []*pflag.Flag
	usagetext.Globals(c).VisitAll(func(fl *pflag.Flag) {
		if !fl.Hidden && !helpLayout.Shows(c, fl.Name) {
			fl.Hidden = true
			hidden = append(hidden, fl)
		}
	})
	defer func() {
		for _, fl := range hidden {
			fl.Hidden = false
		}
	}()
	return page(strings.ReplaceAll(c.CommandPath(), " ", sep), c)
}
