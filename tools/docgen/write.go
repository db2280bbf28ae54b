package main

import (
	"os"
	"path/filepath"

	"github.com/mcptask/mcptask/cmd"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// write writes one page per command into dir: markdown, or man pages in section 1.
func write(dir string, man bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ext, sep := ".md", "_"
	if man {
		ext, sep = ".1", "-"
	}
	header := &doc.GenManHeader{Title: "MCPTASK", Section: "1", Source: "mcptask"}
	return cmd.ReferencePages(sep, func(name string, c *cobra.Command) error {
		f, err := os.Create(filepath.Join(dir, name+ext))
		if err != nil {
			return err
		}
		if man {
			err = doc.GenMan(c, header, f)
		} else {
			err = doc.GenMarkdown(c, f)
		}
		if err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}
