package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Update answers, now and without following it, the input a task is waiting for (mcptask
// update). Build it with NewUpdate, make the client with its ClientOptions (on 2025-11-25 the
// question arrives as elicitation/create on that client), then Run it.
type Update struct {
	a     Answerer
	about Request

	asked  sync.WaitGroup
	once   sync.Once
	failed error // a wrong answer, left unanswered
}

// NewUpdate returns the update of a task whose questions a answers. about carries what the
// questions are about (Tool, Server).
func NewUpdate(a Answerer, about Request) *Update {
	u := &Update{a: a, about: about}
	u.asked.Add(1)
	return u
}

// ClientOptions adds to base what the client needs to answer 2025-11-25 questions: elicitation
// (and sampling when the answerer samples) declared, and a's answers to the requests. note
// gets a line when a question is cancelled for want of an answer.
func (u *Update) ClientOptions(base rpc.ClientOptions, note func(string)) rpc.ClientOptions {
	handler := Handler(u.a, u.about, note, func(err error) {
		u.once.Do(func() { u.failed = err; u.asked.Done() })
	})
	base.Elicitation = true
	base.Sampling = Samples(u.a)
	base.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		defer u.once.Do(u.asked.Done)
		return handler(ctx, method, params)
	}
	return base
}

// Updated is what Run did.
type Updated struct {
	// Task is the task as Run first saw it (tasks/get).
	Task *rpc.Task
	// Answered are the keys answered, written to the ledger; empty when nothing was sent.
	Answered []string
	// Finished reports a 2025-11-25 task whose tasks/result ended without a question.
	Finished bool
}

// Ended reports a task that had already ended: nothing was sent.
func (u Updated) Ended() bool { return u.Task != nil && u.Task.Status.Terminal() }

// NotWaitingError is a task that is running but not waiting for input: nothing was sent.
type NotWaitingError struct{ Task *rpc.Task }

func (e *NotWaitingError) Error() string {
	return fmt.Sprintf("task %s is %s, not waiting for input; nothing was sent", e.Task.TaskID, e.Task.Status)
}

// UnneededError is an answer the task does not need: nothing was sent.
type UnneededError struct{ Msg string }

func (e *UnneededError) Error() string { return e.Msg }

// NoQuestionError is a 2025-11-25 task that asked nothing within the wait.
type NoQuestionError struct {
	TaskID string
	After  time.Duration
}

func (e *NoQuestionError) Error() string {
	return fmt.Sprintf("no question arrived from task %s within %s", e.TaskID, e.After)
}

// UpdateRequest is the task Run answers.
type UpdateRequest struct {
	TaskID string
	// Answers are the answers given by key; on 2026-07-28 a key the task does not ask for is
	// an UnneededError.
	Answers Answers
	// Answered are the keys answered before (the ledger's): never again.
	Answered []string
	// Wait bounds, on 2025-11-25, the wait for the question (--timeout).
	Wait time.Duration
	// Ledger gets the keys answered under Key.
	Ledger *ledger.Writer
	Key    string
}

// Run answers the task of r on c, which was made with u's ClientOptions. A task that has
// ended, or does not wait for input, is left alone. On 2026-07-28 the answers go in one
// tasks/update. On 2025-11-25 the question comes as elicitation/create while tasks/result is
// open (C25-TASKS §Input Required Status): Run opens it, answers the question, waits until the
// server has taken the answer (the task leaves input_required), and lets tasks/result go, as a
// client MAY at any time (C25-TASKS §Retrieving Task Results). The answered keys are in the
// ledger when it returns.
func (u *Update) Run(ctx context.Context, c *rpc.Client, r UpdateRequest) (Updated, error) {
	t, err := c.GetTask(ctx, r.TaskID)
	if err != nil {
		return Updated{}, err
	}
	out := Updated{Task: t}
	if t.Status.Terminal() {
		return out, nil
	}
	if t.Status != rpc.StatusInputRequired {
		return out, &NotWaitingError{Task: t}
	}
	if c.Era() == rpc.EraModern {
		out.Answered, err = u.modern(ctx, c, t, r)
	} else {
		out.Answered, out.Finished, err = u.legacy(ctx, c, r)
	}
	if len(out.Answered) > 0 {
		r.Ledger.Answered(r.Key, r.TaskID, out.Answered)
		r.Ledger.Flush()
	}
	return out, err
}

func (u *Update) modern(ctx context.Context, c *rpc.Client, t *rpc.Task, r UpdateRequest) ([]string, error) {
	asks := strings.Join(sortedKeys(t.InputRequests), ", ")
	if unused := r.Answers.Unused(t); len(unused) > 0 {
		return nil, &UnneededError{Msg: fmt.Sprintf("task %s is not asking for %q; it asks for: %s", r.TaskID, unused[0], asks)}
	}
	answered := map[string]bool{}
	for _, k := range r.Answered {
		answered[k] = true
	}
	keys, err := SendAnswers(ctx, c, t, u.a, answered, u.about)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, &UnneededError{Msg: "every key given was answered before; the task asks for: " + asks}
	}
	return keys, nil
}

func (u *Update) legacy(ctx context.Context, c *rpc.Client, r UpdateRequest) ([]string, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, r.Wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, _, err := c.TaskResult(rctx, r.TaskID); done <- err }()
	asks := make(chan struct{})
	go func() { u.asked.Wait(); close(asks) }()
	select {
	case <-asks:
		if u.failed != nil {
			return nil, false, u.failed // nothing was sent: the task waits as it did
		}
	case err := <-done:
		if err != nil {
			return nil, false, fmt.Errorf("task %s: tasks/result ended before a question arrived: %w", r.TaskID, err)
		}
		return nil, true, nil
	case <-rctx.Done():
		return nil, false, &NoQuestionError{TaskID: r.TaskID, After: r.Wait}
	}
	_, _ = WaitWhile(rctx, c, r.TaskID, rpc.StatusInputRequired, 0)
	return []string{"elicitation"}, false, nil
}
