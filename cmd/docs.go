package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// NewCmdDocs returns the hidden `mcptask docs`, which writes the command reference generated
// from the command tree (markdown and man pages), so the reference can never drift from --help.
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
			if man {
				return doc.GenManTree(r, &doc.GenManHeader{Title: "MCPTASK", Section: "1", Source: "mcptask"}, dir)
			}
			if err := doc.GenMarkdownTree(r, dir); err != nil {
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
