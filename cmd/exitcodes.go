package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes. They are a contract with every script that runs mcptask: never renumber one,
// only add. Callers should treat an unknown code as failure.
const (
	ExitOK            = 0   // completed with a non-error result, or --detach printed the task id
	ExitFailure       = 1   // transport, protocol or internal error
	ExitUsage         = 2   // bad flag or argument; nothing was sent
	ExitTaskFailed    = 3   // the task failed, or the tool result has isError
	ExitCancelled     = 4   // the task was cancelled
	ExitInputRequired = 5   // the task needs input that mcptask cannot give here
	ExitExpired       = 6   // the task expired, or the server does not know it
	ExitAuth          = 7   // authentication required or refused (HTTP 401/403)
	ExitStillRunning  = 8   // --timeout 0 found the task still running
	ExitTimeout       = 124 // --timeout elapsed; the task keeps running
	ExitInterrupted   = 130 // interrupted (SIGINT/SIGTERM); the task keeps running
)

// exitCodeTable is the one table that `mcptask help exit-codes`, the README and the --json
// error's "error" names are all generated from or checked against.
var exitCodeTable = []struct {
	Code int
	Name string
	Desc string
}{
	{ExitOK, "ok", "completed with a non-error result, or --detach printed the task id"},
	{ExitFailure, "error", "transport, protocol or internal error"},
	{ExitUsage, "usage", "usage error: bad flag, argument or --args JSON; nothing was sent"},
	{ExitTaskFailed, "task_failed", "the task failed, or the tool result has isError"},
	{ExitCancelled, "cancelled", "the task was cancelled"},
	{ExitInputRequired, "input_required", "the task needs input that cannot be given here"},
	{ExitExpired, "expired", "the task expired or is unknown to the server"},
	{ExitAuth, "auth_required", "authentication required or refused (HTTP 401/403)"},
	{ExitStillRunning, "still_running", "--timeout 0 found the task still running"},
	{ExitTimeout, "timeout", "--timeout reached; the task keeps running and stays resumable"},
	{ExitInterrupted, "interrupted", "interrupted by SIGINT/SIGTERM; the task keeps running"},
}

// exitName returns the stable short name of an exit code.
func exitName(code int) string {
	for _, e := range exitCodeTable {
		if e.Code == code {
			return e.Name
		}
	}
	return "error"
}

// exitCodesHelp renders the table for `mcptask help exit-codes`.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("mcptask exits with one of these codes. They are never renumbered; treat any\nother code as failure.\n\n")
	for _, e := range exitCodeTable {
		fmt.Fprintf(&b, "  %3d  %-15s %s\n", e.Code, e.Name, e.Desc)
	}
	return b.String()
}

// newCmdExitCodes returns `mcptask exit-codes`, also reached as `mcptask help exit-codes`:
// the table above, or with --json an "exit-codes" envelope.
func newCmdExitCodes(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "Show the exit codes mcptask returns",
		Long:  exitCodesHelp(),
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.Global.JSON {
				codes := make([]map[string]any, 0, len(exitCodeTable))
				for _, e := range exitCodeTable {
					codes = append(codes, map[string]any{"code": e.Code, "name": e.Name, "meaning": e.Desc})
				}
				return writeJSON(c.OutOrStdout(), map[string]any{"type": "exit-codes", "codes": codes})
			}
			fmt.Fprint(c.OutOrStdout(), exitCodesHelp())
			return nil
		},
	}
}
