package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
			err = markdown(f, c)
		}
		if err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// markdown writes c's page: its --help as a terminal 80 columns wide shows it (so the page
// and the help say the same, in the same layout), and links to the commands around it.
func markdown(w io.Writer, c *cobra.Command) error {
	link := func(c *cobra.Command) string {
		return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n```\n%s```\n", c.CommandPath(), c.Short, cmd.ReferenceHelp(c))
	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, fmt.Sprintf("* [%s](%s)\t - %s", p.CommandPath(), link(p), p.Short))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			see = append(see, fmt.Sprintf("* [%s](%s)\t - %s", sub.CommandPath(), link(sub), sub.Short))
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, "\n### SEE ALSO\n\n%s\n", strings.Join(see, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
