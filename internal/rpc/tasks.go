package rpc

// This file holds the task methods both eras share (tasks/get, tasks/result, tasks/cancel)
// and the era-neutral Task decoder.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// MaxTaskIDLen is the longest task id mcptask accepts, in bytes. The spec sets no limit, but
// an id travels in every tasks/* request, in the Mcp-Name header of 2026-07-28, in the ledger
// and on the screen; 1 KiB leaves room for ids that carry a signed state and stops one that
// would fill them.
const MaxTaskIDLen = 1 << 10

// ErrBadTaskID means a server handed back a task id mcptask will not use (CheckTaskID).
var ErrBadTaskID = errors.New("unusable task id")

// CheckTaskID accepts the task ids mcptask works with: 1 to MaxTaskIDLen bytes of visible
// ASCII (0x21-0x7E), no spaces. The spec lets an id be any string and 2026-07-28 would carry
// another one base64-encoded in Mcp-Name, but an id is also a shell argument, a completion
// candidate, an environment value for --on-complete and a word on the screen: one that is not
// plain visible ASCII could hide or fake text in all of them, and no honest server needs it
// (SECURITY.md, class 8). The error names what is wrong and shows the id escaped and cut.
func CheckTaskID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: the task id is empty", ErrBadTaskID)
	}
	if len(id) > MaxTaskIDLen {
		return fmt.Errorf("%w: the task id %s is %d bytes long; mcptask takes ids of at most %d bytes",
			ErrBadTaskID, quoteID(id), len(id), MaxTaskIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		var what string
		switch {
		case c == ' ':
			what = "a space"
		case c < 0x20 || c == 0x7f:
			what = "a control character"
		case c >= 0x80:
			what = "a non-ASCII character"
		default:
			continue
		}
		return fmt.Errorf("%w: the task id %s has %s at byte %d; mcptask takes only ids of visible ASCII characters",
			ErrBadTaskID, quoteID(id), what, i)
	}
	return nil
}

// quoteID shows a rejected id safely: Go-quoted (every control, format or non-ASCII
// character escaped) and cut to 64 bytes.
func quoteID(id string) string {
	return strconv.QuoteToASCII(termsafe.CutN(id, 64))
}

// wireTask accepts both eras' field names.
type wireTask struct {
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTL            json.RawMessage            `json:"ttl"`
	TTLMs          json.RawMessage            `json:"ttlMs"`
	PollInterval   float64                    `json:"pollInterval"`
	PollIntervalMs float64                    `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *Error                     `json:"error"`
	ResultType     string                     `json:"resultType"`
}

// DecodeTask decodes a flat Task object of either era (ttl or ttlMs, pollInterval or
// pollIntervalMs). taskId and a valid status are required; a missing timestamp is tolerated
// (the conformance checker reports it) but a malformed one is not.
func DecodeTask(raw json.RawMessage) (*Task, error) {
	t, _, err := decodeTask(raw, json.Valid(raw))
	return t, err
}

// decodeTask is DecodeTask that also returns the resultType it met, so that tasks/get parses
// its answer once. valid says raw is known to be valid JSON (the fast decoder needs that);
// the result of a decoded Message is, so tasks/get does not scan it a second time.
func decodeTask(raw json.RawMessage, valid bool) (*Task, *string, error) {
	var w wireTask
	if !valid || !decodeTaskFast(raw, &w) {
		slow := new(wireTask) // not &w, which would then live on the heap on the fast path too
		if err := json.Unmarshal(raw, slow); err != nil {
			return nil, nil, fmt.Errorf("%w: task: %v", ErrMalformed, err)
		}
		w = *slow
	}
	t, err := w.task(raw)
	if w.ResultType == "" {
		return t, nil, err
	}
	return t, &w.ResultType, err
}

func (w *wireTask) task(raw json.RawMessage) (*Task, error) {
	if w.TaskID == "" {
		return nil, fmt.Errorf("%w: task has no taskId: %s", ErrMalformed, snippet(raw))
	}
	if err := CheckTaskID(w.TaskID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if !TaskStatus(w.Status).Valid() {
		st := w.Status
		if st == "" {
			st = "<missing>"
		}
		return nil, fmt.Errorf("%w: task %s has invalid status %q", ErrMalformed, w.TaskID, st)
	}
	// The Task and the duration its TTL points at share one allocation.
	box := &struct {
		Task
		ttl time.Duration
	}{Task: Task{
		TaskID:        w.TaskID,
		Status:        TaskStatus(w.Status),
		StatusMessage: termsafe.Cut(w.StatusMessage),
		InputRequests: w.InputRequests,
		Result:        w.Result,
		Error:         w.Error,
		Raw:           raw,
	}}
	t := &box.Task
	var err error
	if t.CreatedAt, err = parseTime(w.CreatedAt); err != nil {
		return nil, fmt.Errorf("%w: task %s createdAt: %v", ErrMalformed, t.TaskID, err)
	}
	if t.LastUpdatedAt, err = parseTime(w.LastUpdatedAt); err != nil {
		return nil, fmt.Errorf("%w: task %s lastUpdatedAt: %v", ErrMalformed, t.TaskID, err)
	}
	ttl := w.TTLMs
	if ttl == nil {
		ttl = w.TTL
	}
	if ttl != nil && !isJSONNull(ttl) {
		ms, err := jsonNumber(ttl)
		if err != nil {
			return nil, fmt.Errorf("%w: task %s ttl is not a number: %s", ErrMalformed, t.TaskID, snippet(ttl))
		}
		box.ttl = msDuration(ms)
		t.TTL = &box.ttl
	}
	pi := w.PollIntervalMs
	if pi == 0 {
		pi = w.PollInterval
	}
	// The schema allows any safe integer; values <= 0 are treated as absent (PROTOCOL.md §2.5).
	if pi > 0 {
		t.PollInterval = msDuration(pi)
	}
	return t, nil
}

// msDuration converts a wire millisecond count, clamping it to [0, max Duration] so that a
// hostile 1e300 cannot overflow into a negative or zero duration.
func msDuration(ms float64) time.Duration {
	const maxMs = float64(math.MaxInt64 / int64(time.Millisecond))
	switch {
	case !(ms > 0): // also NaN
		return 0
	case ms >= maxMs:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// GetTask sends one tasks/get.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	res, err := c.taskCall(ctx, "tasks/get", id)
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	t, rt, err := decodeTask(res, true) // a result of a decoded message is valid JSON
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	// EXT §Task Polling: a tasks/get result is complete (absent resultType); "task" is only
	// for task creation, and anything else is invalid.
	if c.Era() == EraModern && rt != nil && *rt != "complete" {
		return nil, fmt.Errorf("get task %s: %w: resultType %q is not valid here", id, ErrMalformed, *rt)
	}
	if t.TaskID != id {
		return nil, fmt.Errorf("get task %s: %w: server answered for task %q", id, ErrMalformed, t.TaskID)
	}
	return t, nil
}

// ErrNotTerminal means a result was asked for a task that has not finished.
var ErrNotTerminal = errors.New("task has not finished")

// TaskResult returns the final result of a tools/call task: 2025-11-25 tasks/result (which
// blocks until the task is terminal, so bound ctx), 2026-07-28 the inline result of tasks/get.
// A task that failed with a JSON-RPC error returns that *Error. A 2026-07-28 task that is not
// terminal returns ErrNotTerminal, and one that was cancelled returns the task with no result.
func (c *Client) TaskResult(ctx context.Context, id string) (*ToolResult, *Task, error) {
	if c.Era() == EraLegacy {
		c.holdStandaloneStream(ctx)
		res, err := c.taskCall(ctx, "tasks/result", id)
		if err != nil {
			return nil, nil, fmt.Errorf("task result %s: %w", id, err)
		}
		tr, err := DecodeToolResult(res)
		if err != nil {
			return nil, nil, fmt.Errorf("task result %s: %w", id, err)
		}
		return tr, nil, nil
	}
	t, err := c.GetTask(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return ModernResult(t)
}

// CancelTask sends tasks/cancel. In 2025-11-25 the answer is the task, already cancelled; in
// 2026-07-28 it is an empty acknowledgement (cancellation is cooperative) and the returned
// task is nil.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, json.RawMessage, error) {
	if c.Era() == EraLegacy && !c.legacyCan("cancel") {
		// C25-TASKS §Capabilities: tasks/cancel requires the server's tasks.cancel.
		return nil, nil, fmt.Errorf("cancel task %s: the server does not declare tasks.cancel", id)
	}
	res, err := c.taskCall(ctx, "tasks/cancel", id)
	if err != nil {
		return nil, nil, fmt.Errorf("cancel task %s: %w", id, err)
	}
	if c.Era() == EraModern {
		if err := checkResultType(res, EraModern, false); err != nil {
			return nil, res, fmt.Errorf("cancel task %s: %w", id, err)
		}
		return nil, res, nil
	}
	t, err := DecodeTask(res)
	if err != nil {
		return nil, res, fmt.Errorf("cancel task %s: %w", id, err)
	}
	return t, res, nil
}

// IsUnknownTask reports whether err is the server saying it does not know the task: -32602
// on a tasks/* request (C25-TASKS §Error Handling; EXT §Error Handling). Both eras use it for
// expired and purged tasks, so PROTOCOL.md §5 rule 30 maps it to "expired or unknown".
func IsUnknownTask(err error) bool {
	var rerr *Error
	return errors.As(err, &rerr) && rerr.Code == CodeInvalidParams
}
