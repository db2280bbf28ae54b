package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/spf13/cobra"
)

// NewCmdResume returns `mcptask resume`.
func NewCmdResume(f *Factory, runF func(context.Context, *ResumeOptions) error) *cobra.Command {
	return newFollowCmd(f, &cobra.Command{
		Use:   "resume [task-id...]",
		Short: "Re-attach to every unfinished task in the ledger",
		Long: `Re-attach to the unfinished tasks in the ledger (or only the ones named), after
a crash, a reboot or a detached call, and follow them all at once, each on its own
server at that server's poll interval.

Each server is reached again as the ledger recorded it: the URL or the stdio
command, the era, and for 2025-11-25 the session the task was created in. Secrets
are not stored: the --bearer-env variable must be set again and --header values
given again. A record that would start a command or send such a secret is used only
if this user's mcptask wrote it (see 'mcptask adopt'); one that fails the check is
skipped with a message, and the others resume. On a terminal the live view shows the tasks (keys: i answer, c cancel,
q detach, ? help); otherwise progress goes to stderr, one line per change, and each
task's result goes to stdout as it finishes. On 2026-07-28 updates also come by push
(subscriptions/listen; --no-push turns it off). A task the server no longer knows is
reported as expired.

EXIT STATUS
  0 every task completed well; otherwise the most severe outcome among the tasks:
  130 interrupted, 124 timeout, 2 usage, 1 error, 7 auth, 3 failed, 4 cancelled, 5 input
  required, 6 expired. See 'mcptask help exit-codes'.`,
		Example: `  mcptask resume
  mcptask resume 786512e2-9e0d-44bd-8f29-789f320fe840 --timeout 10m
  mcptask resume --json > outcomes.json`,
	}, runF, runResume)
}

// selectResume picks the records to resume: the unfinished ones, or the named ones.
func selectResume(f *Factory, file *state.File, ids []string) ([]state.Record, error) {
	now := f.Now()
	if len(ids) == 0 {
		var out []state.Record
		for _, r := range file.Tasks {
			if r.Unfinished(now) {
				out = append(out, r)
			}
		}
		return out, nil
	}
	var out []state.Record
	var missing []string
	for _, id := range ids {
		recs, err := ledger.Match(file.Tasks, id, "") // the whole id, or a unique prefix of one
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			missing = append(missing, id)
		}
		for _, r := range recs {
			if !slices.ContainsFunc(out, func(o state.Record) bool { return o.TaskID == r.TaskID && o.Server.Key() == r.Server.Key() }) {
				out = append(out, r)
			}
		}
	}
	if len(missing) > 0 {
		return nil, flagErrorf("not in the ledger: %v; 'mcptask list --all' shows what is there", missing)
	}
	return out, nil
}

func runResume(ctx context.Context, opts *ResumeOptions) error {
	return runFollowing(ctx, opts, "resume", func() ([]*follow.Group, error) {
		f := opts.f
		st, err := f.ledger()
		if err != nil {
			return nil, err
		}
		file, err := st.Load()
		if err != nil {
			return nil, err
		}
		recs, err := selectResume(f, file, opts.TaskIDs)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, f.printer().Print(envelope{Type: "resume", Tasks: []envelope{}}, func(io.Writer) error {
				_, err := fmt.Fprintf(f.IO.ErrOut, "nothing to resume: no unfinished tasks in %s\n", st.Path())
				return err
			})
		}
		var gs follow.Groups
		for _, r := range recs {
			addRecord(f, &gs, r)
		}
		return gs.List, nil
	})
}
