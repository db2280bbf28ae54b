package cmd

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// A ledger record may start a command, export environment variables or send a secret from
// the environment when its server is reached again; it may do so only if this user's mcptask
// wrote it (state/sign.go). Records are signed when they are created, checked whenever one is
// connected to again (connectRecord), and a record that fails the check is adopted explicitly.

// NewCmdAdopt returns `mcptask adopt`.
func NewCmdAdopt(f *Factory) *cobra.Command {
	var yes bool
	c := &cobra.Command{
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

adopt first shows what each record would do (the command and its directory, the
environment variables, the bearer token's variable, the header names, the OAuth
login) and asks before it signs anything; with no one at a terminal to answer, it
signs only with --yes. A task id recorded for several servers is adopted for all of
them unless --server or --stdio names one.

EXIT STATUS
  0 adopted (or already yours); 2 a task id is not in the ledger, or the signing
  was not confirmed (nothing was signed).`,
		Example: `  mcptask list --all
  mcptask adopt 786512e2-9e0d-44bd-8f29-789f320fe840 && mcptask resume`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              func(c *cobra.Command, args []string) error { return runAdopt(f, args, yes) },
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "sign without asking (what is signed is still shown)")
	return c
}

// runAdopt signs the records of the tasks ids (on the server the flags name, if any) and
// says what resuming each would do.
func runAdopt(f *Factory, ids []string, yes bool) error {
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
	if err := confirmAdopt(f, st, k, ids, key, yes); err != nil {
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

// confirmAdopt shows the records of ids that adopting would sign and that grant their server
// something (a planted one may start a command or send a secret), and asks the person at the
// terminal to confirm; without one, yes must say so. Records that are already signed, or that
// name only a URL, need no confirmation. Nothing is signed unless it returns nil.
func confirmAdopt(f *Factory, st *state.Store, k *state.Keyring, ids []string, key string, yes bool) error {
	var shown []state.Record
	for _, id := range ids {
		recs, err := st.Find(id)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if (key == "" || r.Server.Key() == key) && k.Check(r) != nil && len(r.Server.Grants()) > 0 {
				shown = append(shown, r)
			}
		}
	}
	if len(shown) == 0 {
		return nil
	}
	w := f.IO.ErrOut
	fmt.Fprintf(w, "mcptask: adopting signs %d record(s) that this user's mcptask did not write; resuming them will:\n", len(shown))
	for _, r := range shown {
		fmt.Fprintf(w, "  task %s on %s:\n", termsafe.Line(r.TaskID), termsafe.Line(r.Server.Display()))
		for _, g := range r.Server.Grants() {
			fmt.Fprintf(w, "    - %s\n", termsafe.Line(g))
		}
	}
	if yes {
		return nil
	}
	if !f.IO.CanLogin(f.Getenv) {
		return flagErrorf("adopt signs only what a person confirms: no one is at a terminal to answer, so nothing was signed; if you trust these records, run again with --yes")
	}
	fmt.Fprint(w, "Sign them with your key? [y/N] ")
	line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return flagErrorf("not confirmed: nothing was signed")
	}
	return nil
}
