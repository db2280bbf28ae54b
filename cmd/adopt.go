package cmd

import (
	"strings"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// A ledger record may start a command, export environment variables or send a secret from
// the environment when its server is reached again; it may do so only if this user's mcptask
// wrote it (state/sign.go). Records are signed when they are created, checked whenever one is
// connected to again (connectRecord), and a record that fails the check is adopted explicitly.

// NewCmdAdopt returns `mcptask adopt`.
func NewCmdAdopt(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "adopt <task-id>...",
		Short: "Trust ledger records that this user's mcptask did not write",
		Long: `Trust the ledger records of the named tasks, after checking what resuming them does.

mcptask signs every record it writes with a key in your state directory
($XDG_STATE_HOME/mcptask/ledger.key), or with $MCPTASK_LEDGER_KEY when that is set.
A record that would start a command, give it environment variables, or send a bearer
token, --header values or an OAuth login when its server is reached again is used by
resume, watch, get, result, cancel and update only when that signature checks: a
ledger restored from a cache or an artifact, or planted where --state points, cannot
run anything on this machine or send your secrets anywhere. Such a record is skipped
with a message naming this command. Records that name only an HTTP URL need no
signature.

adopt prints what each record would do and signs it with your key. A task id
recorded for several servers is adopted for all of them unless --server or --stdio
names one.

EXIT STATUS
  0 adopted (or already yours); 2 a task id is not in the ledger.`,
		Example: `  mcptask list --all
  mcptask adopt 786512e2-9e0d-44bd-8f29-789f320fe840 && mcptask resume`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              func(c *cobra.Command, args []string) error { return runAdopt(f, args) },
	}
}

// runAdopt signs the records of the tasks ids (on the server the flags name, if any) and
// says what resuming each would do.
func runAdopt(f *Factory, ids []string) error {
	st, err := f.ledger()
	if err != nil {
		return err
	}
	k, err := f.connector().Keyring()
	if err != nil {
		return err
	}
	key, err := f.namedServerKey()
	if err != nil {
		return err
	}
	done, missing, err := ledger.Adopt(st, k, ids, key)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return flagErrorf("not in the ledger: %s; 'mcptask list --all' shows what is there", termsafe.Line(strings.Join(missing, ", ")))
	}
	doc := output.NewAdopt(done)
	if f.Global.JSON {
		return writeJSON(f.IO.Out, doc)
	}
	return doc.Text(f.IO.ErrOut)
}
