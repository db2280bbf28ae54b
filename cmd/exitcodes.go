package cmd

import (
	"fmt"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/spf13/cobra"
)

// Exit codes: the contract lives in internal/exitcode; these are the names cmd uses.
const (
	ExitOK            = exitcode.OK
	ExitFailure       = exitcode.Failure
	ExitUsage         = exitcode.Usage
	ExitTaskFailed    = exitcode.TaskFailed
	ExitCancelled     = exitcode.Cancelled
	ExitInputRequired = exitcode.InputRequired
	ExitExpired       = exitcode.Expired
	ExitAuth          = exitcode.Auth
	ExitStillRunning  = exitcode.StillRunning
	ExitTimeout       = exitcode.Timeout
	ExitInterrupted   = exitcode.Interrupted
)

var (
	exitCodeTable = exitcode.Table
	worstCode     = exitcode.Worst
	countBad      = exitcode.CountBad
)

// newCmdExitCodes returns `mcptask exit-codes`, also reached as `mcptask help exit-codes`:
// the table, or with --json an "exit-codes" envelope.
func newCmdExitCodes(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "Show the exit codes mcptask returns",
		Long:  exitcode.Help(),
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.Global.JSON {
				codes := make([]map[string]any, 0, len(exitCodeTable))
				for _, e := range exitCodeTable {
					codes = append(codes, map[string]any{"code": e.Code, "name": e.Name, "meaning": e.Desc})
				}
				return writeJSON(c.OutOrStdout(), map[string]any{"type": "exit-codes", "codes": codes})
			}
			fmt.Fprint(c.OutOrStdout(), exitcode.Help())
			return nil
		},
	}
}
