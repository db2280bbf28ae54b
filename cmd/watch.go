package cmd

import (
	"context"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/spf13/cobra"
)

// WatchOptions are the inputs of `mcptask watch`.
type WatchOptions struct {
	f        *Factory
	TaskIDs  []string
	Timeout  time.Duration
	Interval time.Duration
	Once     bool
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
and each result to stdout.

EXIT STATUS
  0 only if every task completed well; otherwise the most severe outcome (see
  'mcptask resume --help' for the order and 'mcptask help exit-codes').`,
		Example: `  mcptask watch 786512e2-9e0d-44bd-8f29-789f320fe840
  mcptask watch "$a" "$b" --timeout 30m --json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskIDs = args
			opts.Once = c.Flags().Changed("timeout") && opts.Timeout == 0
			if f.Global.JSONL {
				f.Global.JSON = true
			}
			if opts.Timeout < 0 || opts.Interval < 0 {
				return flagErrorf("--timeout and --interval must not be negative")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runWatch(c.Context(), opts)
		},
	}
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up waiting after this long (exit 124); 0 checks once (exit 8 while still running); the tasks keep running")
	c.Flags().DurationVar(&opts.Interval, "interval", 0, "poll no faster than this (can only slow the server's suggested interval)")
	opts.AnswerFlags.AddFlags(c.Flags())
	c.Flags().BoolVar(&f.Global.JSONL, "jsonl", false, "stream one JSON event per line on stdout (created, status, input_required, result, error)")
	return c
}

func runWatch(ctx context.Context, opts *WatchOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.parse(f.IO.In)
	if err != nil {
		return err
	}
	onInput, err := opts.AnswerFlags.onInput(f.useTUI())
	if err != nil {
		return err
	}
	var groups []*resumeGroup
	byKey := map[string]*resumeGroup{}
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
		if rec == nil {
			// Not in the ledger: the server named by the flags.
			if flagGroup == nil {
				if _, _, err := f.serverRef(); err != nil {
					return err
				}
				flagGroup = &resumeGroup{connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
					return f.connect(ctx, o)
				}}
				groups = append(groups, flagGroup)
			}
			flagGroup.recs = append(flagGroup.recs, state.Record{TaskID: id})
			continue
		}
		r := *rec
		k := groupKey(r)
		g := byKey[k]
		if g == nil {
			g = &resumeGroup{rec: r, connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
				return f.connectRecord(ctx, &r, o)
			}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.recs = append(g.recs, r)
	}
	return followMany(ctx, f, "watch", groups, followOptions{Timeout: opts.Timeout, Interval: opts.Interval, Once: opts.Once, Answers: answers, Prompt: onInput == "prompt"})
}
