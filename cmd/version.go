package cmd

import (
	"fmt"
	"io"

	"github.com/mcptask/mcptask/internal/buildinfo"
	"github.com/spf13/cobra"
)

// Version is the version mcptask reports as clientInfo.version (buildinfo.ClientVersion).
var Version = buildinfo.ClientVersion()

// NewCmdVersion returns `mcptask version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show which mcptask this is: release, commit, Go version",
		Long: `Show the release of mcptask, the commit it was built from and the Go toolchain
that built it, read from the binary itself. A build from a checkout says (devel)
with its revision. 'mcptask --version' prints the same line.

With --json, stdout carries one object:
  {"type":"version","version":"v1.2.3","revision":"…","time":"…","go":"go1.26.8","platform":"linux/amd64"}

EXIT STATUS
  0 always.`,
		Example: `  mcptask version
  mcptask version --json | jq -r .version`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			bi := buildinfo.Read()
			return f.printer().Print(struct {
				Type string `json:"type"`
				buildinfo.Info
			}{"version", bi}, func(w io.Writer) error { _, err := fmt.Fprintln(w, bi.String()); return err })
		},
	}
}
