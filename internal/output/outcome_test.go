package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

type codedErr struct{ code int }

func (e codedErr) Error() string { return "no answer" }
func (e codedErr) ExitCode() int { return e.code }

// TestDescribe checks the exit code, envelope type and next step of each way a follow ends.
func TestDescribe(t *testing.T) {
	ref := connect.Ref{URL: "http://127.0.0.1:1/mcp"}
	task := &rpc.Task{TaskID: "t1", Status: rpc.StatusWorking}
	asking := &rpc.Task{TaskID: "t1", Status: rpc.StatusInputRequired, InputRequests: map[string]json.RawMessage{
		"name": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Name?"}}`)}}
	for _, tc := range []struct {
		name    string
		o       follow.Outcome
		code    int
		envType string
		say     string // in the error
	}{
		{"result", follow.Outcome{End: follow.EndResult, Task: task, Result: &rpc.ToolResult{}}, 0, "result", ""},
		{"tool error", follow.Outcome{End: follow.EndResult, Task: task, Result: &rpc.ToolResult{IsError: true}}, exitcode.TaskFailed, "result", "isError"},
		{"rpc error", follow.Outcome{End: follow.EndResult, Task: task, RPCError: &rpc.Error{Code: -32603, Message: "boom"}}, exitcode.TaskFailed, "result", "boom"},
		{"left for result", follow.Outcome{End: follow.EndResult, Task: task}, 0, "", ""},
		{"cancelled", follow.Outcome{End: follow.EndCancelled, Task: task}, exitcode.Cancelled, "result", "cancelled"},
		{"input", follow.Outcome{End: follow.EndInputRequired, Task: asking}, exitcode.InputRequired, "input_required", "name: elicitation/create: Name?"},
		{"expired", follow.Outcome{End: follow.EndExpired, Task: task, Err: errors.New("gone")}, exitcode.Expired, "", "no longer known"},
		{"still running", follow.Outcome{End: follow.EndStillRunning, Task: task}, exitcode.StillRunning, "", "mcptask result t1 --server"},
		{"timeout", follow.Outcome{End: follow.EndTimeout, Task: task}, exitcode.Timeout, "", "timeout after 5s"},
		{"interrupted", follow.Outcome{End: follow.EndInterrupted, Task: task}, exitcode.Interrupted, "", "keeps running"},
		{"bad answer", follow.Outcome{Task: task, Err: &follow.AnswerError{Key: "name", Err: errors.New("wrong")}}, exitcode.Usage, "", ""},
		{"no answer", follow.Outcome{Task: asking, Err: fmt.Errorf("exec: %w", codedErr{exitcode.InputRequired})}, exitcode.InputRequired, "input_required", "mend the program"},
		{"unreachable", follow.Outcome{Task: task, Unreachable: true, Err: errors.New("refused")}, 0, "", "refused"},
		{"other", follow.Outcome{Task: task, Err: errors.New("odd")}, 0, "", "it may still be running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.TaskID = "t1"
			env, _, code, err := Describe(tc.o, ref, 5*time.Second)
			if code != tc.code {
				t.Errorf("code %d, want %d", code, tc.code)
			}
			if got := ""; env != nil {
				got = env.Type
				if got != tc.envType {
					t.Errorf("envelope %q, want %q", got, tc.envType)
				}
			} else if tc.envType != "" {
				t.Errorf("no envelope, want %q", tc.envType)
			}
			if (err != nil) != (tc.code != 0 || tc.say != "") || (err != nil && !strings.Contains(err.Error(), tc.say)) {
				t.Errorf("error %v, want one saying %q", err, tc.say)
			}
			e := TaskEnvelope(tc.o, env, code, err)
			if *e.Code != code || e.TaskID != "t1" || (err != nil) != (e.Message != "") {
				t.Errorf("task envelope %+v", e)
			}
		})
	}
}

// TestOutcomeName: the names a task's end has in CI summaries and MCPTASK_STATUS. A failed
// tool result is "failed" although the task completed; cancel --wait's end (no result fetched)
// is the task's own status.
func TestOutcomeName(t *testing.T) {
	res := &rpc.ToolResult{}
	for _, tc := range []struct {
		o    follow.Outcome
		code int
		want string
	}{
		{follow.Outcome{End: follow.EndResult, Task: &rpc.Task{Status: "completed"}, Result: res}, exitcode.OK, "completed"},
		{follow.Outcome{End: follow.EndResult, Task: &rpc.Task{Status: "completed"}, Result: res}, exitcode.TaskFailed, "failed"},
		{follow.Outcome{End: follow.EndResult, Task: &rpc.Task{Status: "cancelled"}}, exitcode.OK, "cancelled"},
		{follow.Outcome{End: follow.EndStillRunning}, exitcode.StillRunning, "timeout"},
		{follow.Outcome{End: follow.EndDetached}, exitcode.Interrupted, "interrupted"},
		{follow.Outcome{End: follow.EndError}, exitcode.Failure, "error"},
	} {
		if got := OutcomeName(tc.o, tc.code); got != tc.want {
			t.Errorf("OutcomeName(%v, %d) = %q, want %q", tc.o.End, tc.code, got, tc.want)
		}
	}
}
