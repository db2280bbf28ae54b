package cmd

import "github.com/mcptask/mcptask/internal/exitcode"

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
	exitName      = exitcode.Name
	exitCodesHelp = exitcode.Help
	worstCode     = exitcode.Worst
	countBad      = exitcode.CountBad
)

// ExitCode lets packages below cmd read the code an error carries (internal/output).
func (e *ExitError) ExitCode() int { return e.Code }
