package cmd

import (
	"context"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/spf13/cobra"
)

// WatchOptions are the inputs of `mcptask watch`.
type WatchOptions struct {
	f       *Factory
	TaskIDs []string
	WaitFlags
	AnswerFlags
}

// NewCmdWatch returns `mcptask watch`.
func NewCmdWatch(f *Factory, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{f: f}
	c := &cobra.Command{
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
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskIDs = args
			if err := opts.WaitFlags.resolve(c); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runWatch(c.Context(), opts)
		},
	}
	opts.WaitFlags.AddFlags(c)
	opts.AnswerFlags.AddFlags(c.Flags())
	f.Workflow.AddFlags(c.Flags())
	addJSONLFlag(c, f)
	return c
}

func runWatch(ctx context.Context, opts *WatchOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In, f.IO.ErrOut)
	if err != nil {
		return err
	}
	onInput, err := opts.AnswerFlags.onInput(f.useTUI())
	if err != nil {
		return err
	}
	var gs groupSet
	var flagGroup *resumeGroup
	seen := map[string]bool{}
	for _, id := range opts.TaskIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		rec, err := f.findTask(id)
		if err != nil {
			return err
		}
		if rec != nil {
			gs.add(f, *rec)
			continue
		}
		// Not in the ledger: the server named by the flags.
		if flagGroup == nil {
			ref, _, err := f.serverRef()
			if err != nil {
				return err
			}
			flagGroup = &resumeGroup{ref: ref, connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
				return f.connect(ctx, o)
			}}
			gs.groups = append(gs.groups, flagGroup)
		}
		flagGroup.recs = append(flagGroup.recs, state.Record{TaskID: id})
	}
	return followMany(ctx, f, "watch", gs.groups, followOptions{Timeout: opts.Timeout, Interval: opts.Interval, Once: opts.Once, Answers: answers}, onInput == "prompt")
}
