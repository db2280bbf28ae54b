// Package exitcode is mcptask's exit-code contract: the codes, their stable names (the "error"
// field of the --json error object), their order of severity when many tasks end at once, and
// the table that 'mcptask help exit-codes' and the README show. Codes are never renumbered,
// only added; callers should treat an unknown code as failure. It is a package of its own so
// that the printer (internal/output) and the commands decide exit codes from one table.
package exitcode

import (
	"fmt"
	"slices"
	"strings"
)

// The exit codes.
const (
	OK            = 0   // completed with a non-error result, or --detach printed the task id (or a kept result's local id)
	Failure       = 1   // transport, protocol or internal error
	Usage         = 2   // bad flag or argument; nothing was sent
	TaskFailed    = 3   // the task failed, or the tool result has isError
	Cancelled     = 4   // the task was cancelled
	InputRequired = 5   // the task needs input that mcptask cannot give here
	Expired       = 6   // the task expired, or the server does not know it
	Auth          = 7   // authentication required or refused (HTTP 401/403)
	StillRunning  = 8   // --timeout 0 found the task still running
	Timeout       = 124 // --timeout elapsed; the task keeps running
	Interrupted   = 130 // interrupted (SIGINT/SIGTERM); the task keeps running
)

// Entry is one row of the table: a code, its stable name and what it means.
type Entry struct {
	Code int
	Name string
	Desc string
}

// Table is the one table that `mcptask help exit-codes`, the README and the --json error's
// "error" names are all generated from or checked against.
var Table = []Entry{
	{OK, "ok", "completed with a non-error result, or --detach printed the task id (or a kept result's local id)"},
	{Failure, "error", "transport, protocol or internal error"},
	{Usage, "usage", "usage error: bad flag, argument or --args JSON; nothing was sent"},
	{TaskFailed, "task_failed", "the task failed, or the tool result has isError"},
	{Cancelled, "cancelled", "the task was cancelled"},
	{InputRequired, "input_required", "the task needs input that cannot be given here"},
	{Expired, "expired", "the task expired or is unknown to the server"},
	{Auth, "auth_required", "authentication required or refused (HTTP 401/403)"},
	{StillRunning, "still_running", "--timeout 0 found the task still running"},
	{Timeout, "timeout", "--timeout reached; the task keeps running and stays resumable"},
	{Interrupted, "interrupted", "interrupted by SIGINT/SIGTERM; the task keeps running"},
}

// Name returns the stable short name of an exit code ("error" for one not in the table).
func Name(code int) string {
	for _, e := range Table {
		if e.Code == code {
			return e.Name
		}
	}
	return "error"
}

// Help renders the table for `mcptask help exit-codes`.
func Help() string {
	var b strings.Builder
	b.WriteString("mcptask exits with one of these codes. They are never renumbered; treat any\nother code as failure.\n\n")
	for _, e := range Table {
		fmt.Fprintf(&b, "  %3d  %-15s %s\n", e.Code, e.Name, e.Desc)
	}
	return b.String()
}

// severity orders exit codes for a many-task outcome: the first in this list that occurs wins.
var severity = []int{Interrupted, Timeout, Usage, Failure, Auth, TaskFailed, Cancelled, InputRequired, Expired, StillRunning, OK}

// Worst returns the most severe of codes (OK for none); an unknown code counts as Failure.
func Worst(codes []int) int {
	best := len(severity)
	for _, c := range codes {
		i := slices.Index(severity, c)
		if i < 0 {
			i = slices.Index(severity, Failure)
		}
		best = min(best, i)
	}
	if best == len(severity) {
		return OK
	}
	return severity[best]
}

// CountBad returns how many of codes are not OK.
func CountBad(codes []int) int {
	n := 0
	for _, c := range codes {
		if c != OK {
			n++
		}
	}
	return n
}
