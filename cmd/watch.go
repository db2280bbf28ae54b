package cmd

import (
	"context"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/spf13/cobra"
)

// FollowOptions are the inputs of `mcptask watch` and `mcptask resume`.
type FollowOptions struct {
	f       *Factory
	TaskIDs []string
	WaitFlags
	AnswerFlags
}

// WatchOptions and ResumeOptions are FollowOptions, under the names of their commands.
type (
	WatchOptions  = FollowOptions
	ResumeOptions = FollowOptions
)

// newFollowCmd completes c, watch or resume, with what they share: the task ids as arguments,
// the wait, answer, workflow and --jsonl flags, and a RunE that calls runF (tests) or run.
func newFollowCmd(f *Factory, c *cobra.Command, runF, run func(context.Context, *FollowOptions) error) *cobra.Command {
	opts := &FollowOptions{f: f}
	if runF == nil {
		runF = run
	}
	c.ValidArgsFunction = completeTaskIDs(f)
	c.RunE = func(c *cobra.Command, args []string) error {
		opts.TaskIDs = args
		if err := opts.WaitFlags.resolve(c); err != nil {
			return err
		}
		return runF(c.Context(), opts)
	}
	opts.WaitFlags.AddFlags(c)
	opts.AnswerFlags.AddFlags(c.Flags())
	f.Workflow.AddFlags(c.Flags())
	addJSONLFlag(c, f)
	return c
}

// runFollowing reads the answer flags, gathers the groups to follow (nil: nothing to follow,
// and groups has said so) and follows them all (followMany) as kind.
func runFollowing(ctx context.Context, opts *FollowOptions, kind string, groups func() ([]*follow.Group, error)) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In, f.IO.ErrOut)
	if err != nil {
		return err
	}
	onInput, err := opts.AnswerFlags.onInput(f.useTUI())
	if err != nil {
		return err
	}
	gs, err := groups()
	if err != nil || gs == nil {
		return err
	}
	return followMany(ctx, f, kind, gs, followOptions{Timeout: opts.Timeout, Interval: opts.Interval, Once: opts.Once, Answers: answers}, onInput == "prompt")
}

// NewCmdWatch returns `mcptask watch`.
func NewCmdWatch(f *Factory, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	return newFollowCmd(f, &cobra.Command{
		Use:   "watch <task-id>...",
		Short: "Follow one or more tasks live until they finish",
		Long: `Follow tasks until every one of them has finished, polling each at its server's
interval, and print each outcome as it comes.

Each task's server comes from the ledger; a task that is not in the ledger is looked
for on the server given by --server or --stdio. Progress goes to stderr, one line per
status or message change (with a heartbeat at least every 30 s while nothing changes),
and each result to stdout. On a terminal the live view shows them instead (keys:
i answer, c cancel, q detach, ? help). On 2026-07-28 updates also come by push
(subscriptions/listen; --no-push turns it off).

EXIT STATUS
  0 only if every task completed well; otherwise the most severe outcome (see
  'mcptask resume --help' for the order and 'mcptask help exit-codes').`,
		Example: `  mcptask watch 786512e2-9e0d-44bd-8f29-789f320fe840
  mcptask watch "$a" "$b" --timeout 30m --json`,
		Args: cobra.MinimumNArgs(1),
	}, runF, runWatch)
}

func runWatch(ctx context.Context, opts *WatchOptions) error {
	return runFollowing(ctx, opts, "watch", func() ([]*follow.Group, error) {
		f := opts.f
		var gs follow.Groups
		var flagGroup *follow.Group
		seen := map[string]bool{}
		for _, id := range opts.TaskIDs {
			rec, err := f.findTask(id)
			if err != nil {
				return nil, err
			}
			// Two prefixes of one task, or a prefix and the whole id, are one task.
			once := id
			if rec != nil {
				once = rec.Server.Key() + "\x00" + rec.TaskID
			}
			if seen[once] {
				continue
			}
			seen[once] = true
			if rec != nil {
				addRecord(f, &gs, *rec)
				continue
			}
			// Not in the ledger: the server named by the flags.
			if flagGroup == nil {
				ref, _, err := f.serverRef()
				if err != nil {
					return nil, err
				}
				flagGroup = newGroup(f, ref, f.connect)
				gs.List = append(gs.List, flagGroup)
			}
			flagGroup.Records = append(flagGroup.Records, state.Record{TaskID: id})
		}
		return gs.List, nil
	})
}
