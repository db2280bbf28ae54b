package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
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
	var asked sync.WaitGroup
	asked.Add(1)
	var once sync.Once
	var failed error // a wrong answer, left unanswered
	// What the questions are about, for a program that answers them.
	about := follow.Request{}
	if rec != nil {
		about.Tool = rec.Tool
	}
	if ref, err := f.refOf(rec); err == nil {
		about.Server = ref.String()
	}
	// 2025-11-25: the question arrives as elicitation/create while tasks/result is open.
	handler := follow.Handler(answerer, about, func(msg string) { f.warnf("%s", msg) }, func(err error) {
		once.Do(func() { failed = err; asked.Done() })
	})
	copts := rpc.ClientOptions{Elicitation: true, Sampling: follow.Samples(answerer), OnRequest: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		defer once.Do(asked.Done)
		return handler(ctx, method, params)
	}}
	c, ref, err := f.connectFound(ctx, rec, copts)
	if err != nil {
		return err
	}
	defer c.Close()
	key := toServer(ref).Key()
	led := f.newLedger()
	defer led.Close()
	answered := map[string]bool{}
	if rec != nil {
		for _, k := range rec.AnsweredKeys {
			answered[k] = true // answered before: never again
		}
	}
	t, err := c.GetTask(ctx, opts.TaskID)
	if err != nil {
		return taskErr(opts.TaskID, err)
	}
	if t.Status.Terminal() {
		return f.updateEnded(t, c.Era(), ref)
	}
	if t.Status != rpc.StatusInputRequired {
		return &ExitError{Code: ExitInputRequired, Err: fmt.Errorf("task %s is %s, not waiting for input; nothing was sent", opts.TaskID, t.Status)}
	}
	if c.Era() == rpc.EraModern {
		if unused := answers.Unused(t); len(unused) > 0 {
			return flagErrorf("task %s is not asking for %q; it asks for: %s", opts.TaskID, unused[0], strings.Join(sortedKeys(t.InputRequests), ", "))
		}
		keys, err := follow.SendAnswers(ctx, c, t, answerer, answered, about)
		if err != nil {
			return usageIfAnswer(err)
		}
		if len(keys) == 0 {
			return flagErrorf("every key given was answered before; the task asks for: %s", strings.Join(sortedKeys(t.InputRequests), ", "))
		}
		led.Answered(key, opts.TaskID, keys)
		fmt.Fprintf(f.IO.ErrOut, "answered %d input request(s) of task %s\n", len(keys), opts.TaskID)
		return f.updateJSON(opts.TaskID, c.Era(), ref, keys)
	}

	// 2025-11-25: the question arrives on tasks/result (C25-TASKS §Input Required Status).
	rctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, _, err := c.TaskResult(rctx, opts.TaskID); done <- err }()
	asks := make(chan struct{})
	go func() { asked.Wait(); close(asks) }()
	select {
	case <-asks:
		if failed != nil {
			return usageIfAnswer(failed) // nothing was sent: the task waits as it did
		}
	case err := <-done:
		if err != nil {
			return fmt.Errorf("task %s: tasks/result ended before a question arrived: %w", opts.TaskID, err)
		}
		fmt.Fprintf(f.IO.ErrOut, "task %s finished without asking\n", opts.TaskID)
		return nil
	case <-rctx.Done():
		return &ExitError{Code: ExitTimeout, Err: fmt.Errorf("no question arrived from task %s within %s", opts.TaskID, opts.Timeout)}
	}
	// Wait until the server has taken the answer (the task leaves input_required), then let
	// tasks/result go: a client MAY drop it at any time (C25-TASKS §Retrieving Task Results).
	_, _ = follow.WaitWhile(rctx, c, opts.TaskID, rpc.StatusInputRequired, 0)
	led.Answered(key, opts.TaskID, []string{"elicitation"})
	fmt.Fprintf(f.IO.ErrOut, "answered the question of task %s\n", opts.TaskID)
	return f.updateJSON(opts.TaskID, c.Era(), ref, []string{"elicitation"})
}

// updateEnded is update on a task that has already ended: there is nothing left to answer,
// so nothing is sent, and the exit code is the task's own outcome, as 'mcptask result' gives
// it (0 completed, 3 failed, 4 cancelled). A script that answers a question and then waits
// learns at once how the task ended; 5 would tell it, wrongly, that the task still waits.
func (f *Factory) updateEnded(t *rpc.Task, era rpc.Era, ref ServerRef) error {
	msg := fmt.Sprintf("task %s already ended %s and asks nothing any more; nothing was sent (its outcome: mcptask result %s)", t.TaskID, t.Status, t.TaskID)
	if f.Global.JSON {
		if err := writeJSON(f.IO.Out, map[string]any{"type": "update", "taskId": t.TaskID, "era": era, "server": ref.String(), "status": t.Status, "answered": []string{}}); err != nil {
			return err
		}
	}
	switch t.Status {
	case rpc.StatusFailed:
		return &ExitError{Code: ExitTaskFailed, Err: errors.New(msg)}
	case rpc.StatusCancelled:
		return &ExitError{Code: ExitCancelled, Err: errors.New(msg)}
	}
	fmt.Fprintf(f.IO.ErrOut, "%s\n", msg)
	return nil
}

// updateJSON prints the --json document of update: which keys were answered.
func (f *Factory) updateJSON(id string, era rpc.Era, ref ServerRef, keys []string) error {
	if !f.Global.JSON {
		return nil
	}
	return writeJSON(f.IO.Out, map[string]any{"type": "update", "taskId": id, "era": era, "server": ref.String(), "answered": keys})
}
