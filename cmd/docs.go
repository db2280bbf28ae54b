package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// NewCmdDocs returns the hidden `mcptask docs`, which writes the command reference generated
// from the command tree (markdown and man pages), so the reference can never drift from --help.
// Like --help, each page lists the global flags that apply to its command (help.go).
func NewCmdDocs(f *Factory, root func() *cobra.Command) *cobra.Command {
	var dir string
	var man bool
	c := &cobra.Command{
		Use:    "docs --dir DIR [--man]",
		Short:  "Write the command reference (markdown, or man pages with --man)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if dir == "" {
				return flagErrorf("--dir is required")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			r := root()
			r.DisableAutoGenTag = true
			gen := func(c *cobra.Command, w io.Writer) error { return doc.GenMarkdown(c, w) }
			ext, sep := ".md", "_"
			if man {
				gen = func(c *cobra.Command, w io.Writer) error {
					return doc.GenMan(c, &doc.GenManHeader{Title: "MCPTASK", Section: "1", Source: "mcptask"}, w)
				}
				ext, sep = ".1", "-"
			}
			if err := writeReference(r, dir, ext, sep, gen); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "wrote the reference to %s\n", dir)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "output `DIR`")
	c.Flags().BoolVar(&man, "man", false, "write man pages instead of markdown")
	return c
}

// writeReference writes one page per available command of the tree under c, named by its
// path (spaces become sep). While a page is written, the global flags its help leaves out are
// hidden, so that the page lists the same flags as --help.
func writeReference(c *cobra.Command, dir, ext, sep string, gen func(*cobra.Command, io.Writer) error) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeReference(sub, dir, ext, sep, gen); err != nil {
			return err
		}
	}
	var hidden []*pflag.Flag
	globalFlags(c).VisitAll(func(fl *pflag.Flag) {
		if !fl.Hidden && !shownGlobal(c, fl.Name) {
			fl.Hidden = true
			hidden = append(hidden, fl)
		}
	})
	defer func() {
		for _, fl := range hidden {
			fl.Hidden = false
		}
	}()
	file, err := os.Create(filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", sep)+ext))
	if err != nil {
		return err
	}
	if err := gen(c, file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
