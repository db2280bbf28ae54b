package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/cobra"
)

// UpdateOptions are the inputs of `mcptask update`.
type UpdateOptions struct {
	f       *Factory
	TaskID  string
	Timeout time.Duration
	AnswerFlags
}

// NewCmdUpdate returns `mcptask update`.
func NewCmdUpdate(f *Factory, runF func(context.Context, *UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{f: f}
	c := &cobra.Command{
		Use:   "update <task-id> --answer KEY=JSON...",
		Short: "Answer the input a task is waiting for",
		Long: `Answer a task's outstanding input requests without a human at a terminal.

On MCP 2026-07-28 this sends tasks/update with the answers for the keys the task is
asking about (see 'mcptask get'); a key the task is not asking for is an error. On
MCP 2025-11-25 questions come as elicitation/create while tasks/result is open: mcptask
opens it, answers the pending question with --answer elicitation=JSON, and returns once
the task has moved on.

An answer is the spec's response for the request, {"action":"accept","content":{…}},
or just the content object. It is checked against the request's requestedSchema before
anything is sent; a mismatch is a usage error naming the field. A key the task does not
ask for answers the one question that asks for exactly the fields it names
(--answer confirm='{"confirm":true}' for a question keyed confirm-e6f21b98). With
--on-input exec:CMD, CMD answers each question: the question as JSON on its stdin, the
answer on its stdout, checked the same way.

A task that has already ended asks nothing: nothing is sent, and update exits with the
task's own outcome, as 'mcptask result' would.

EXIT STATUS
  0 answered, or the task had already completed (nothing sent); 2 bad or unneeded
  answer (nothing sent); 3 or 4 the task had already failed or been cancelled (nothing
  sent); 5 the task is running but not waiting for input, or the --on-input exec
  program gave no answer that fits (nothing sent); 6 unknown task; 1 other errors.`,
		Example: `  mcptask update "$id" --answer name='{"name":"Ada"}'
  mcptask update "$id" --answers answers.json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(c *cobra.Command, args []string) error {
			opts.TaskID = args[0]
			if opts.AnswerFlags.none() {
				return flagErrorf("nothing to answer: give --answer KEY=JSON, --answers FILE or --on-input exec:CMD")
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runUpdate(c.Context(), opts)
		},
	}
	opts.AnswerFlags.AddFlags(c.Flags())
	c.Flags().DurationVar(&opts.Timeout, "timeout", time.Minute, "2025-11-25: how long to wait for the question to arrive")
	return c
}

func runUpdate(ctx context.Context, opts *UpdateOptions) error {
	f := opts.f
	answers, err := opts.AnswerFlags.given(f.IO.In)
	if err != nil {
		return err
	}
	answerer, err := opts.AnswerFlags.answerer(answers, f.IO.ErrOut)
	if err != nil {
		return err
	}
	rec, err := f.findTask(opts.TaskID)
	if err != nil {
		return err
	}
	opts.TaskID = wholeID(opts.TaskID, rec)
	// What the questions are about, for a program that answers them.
	about := follow.Request{}
	req := follow.UpdateRequest{TaskID: opts.TaskID, Answers: answers, Wait: opts.Timeout}
	if rec != nil {
		about.Tool, req.Answered = rec.Tool, rec.AnsweredKeys
	}
	if ref, err := f.refOf(rec); err == nil {
		about.Server = ref.String()
	}
	u := follow.NewUpdate(answerer, about)
	c, ref, err := f.connectFound(ctx, rec, u.ClientOptions(rpc.ClientOptions{}, func(msg string) { f.warnf("%s", msg) }))
	if err != nil {
		return err
	}
	defer c.Close()
	req.Ledger, req.Key = f.newLedger(), toServer(ref).Key()
	defer req.Ledger.Close()
	out, err := u.Run(ctx, c, req)
	doc, note, code, err := output.Updated(opts.TaskID, c.Era(), ref.String(), out, err)
	fmt.Fprint(f.IO.ErrOut, note)
	if doc != nil {
		if perr := f.printer().Print(*doc, nil); perr != nil {
			return perr
		}
	}
	return exitErr(code, err)
}
