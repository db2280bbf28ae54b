package output

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestCancel checks what cancel shows for each way an acknowledged cancellation can go: the
// era's meaning of the answer, and with --wait how the task really ended.
func TestCancel(t *testing.T) {
	ref := connect.Ref{URL: "http://127.0.0.1:1/mcp"}
	task := func(s rpc.TaskStatus, msg string) *rpc.Task {
		return &rpc.Task{TaskID: "t1", Status: s, StatusMessage: msg, Raw: json.RawMessage(`{"status":"` + string(s) + `"}`)}
	}
	ack := json.RawMessage(`{}`)
	for _, tc := range []struct {
		name       string
		era        rpc.Era
		out        follow.Cancelled
		status     rpc.TaskStatus
		text, note string
		code       int
	}{
		{"legacy", rpc.EraLegacy, follow.Cancelled{Acked: true, Task: task(rpc.StatusCancelled, "stopped\x1b[2J")}, rpc.StatusCancelled,
			"task t1 is cancelled: stopped", "", 0},
		{"modern ack", rpc.EraModern, follow.Cancelled{Acked: true, Ack: ack}, "",
			"cancellation of task t1 requested\n", "Cancellation is cooperative on MCP 2026-07-28", 0},
		{"wait cancelled", rpc.EraModern, follow.Cancelled{Acked: true, Ack: ack, Outcome: &follow.Outcome{End: follow.EndCancelled, TaskID: "t1", Task: task(rpc.StatusCancelled, "")}},
			rpc.StatusCancelled, "task t1 cancelled\n", "", 0},
		{"wait completed", rpc.EraModern, follow.Cancelled{Acked: true, Ack: ack, Outcome: &follow.Outcome{End: follow.EndResult, TaskID: "t1", Task: task(rpc.StatusCompleted, "")}},
			rpc.StatusCompleted, "task t1 completed anyway: the cancellation came too late; its result: mcptask result t1 --server", "", 0},
		{"wait failed", rpc.EraModern, follow.Cancelled{Acked: true, Ack: ack, Outcome: &follow.Outcome{End: follow.EndResult, TaskID: "t1", Task: task(rpc.StatusFailed, "")}},
			rpc.StatusFailed, "task t1 failed anyway", "", exitcode.TaskFailed},
		{"wait timeout", rpc.EraLegacy, follow.Cancelled{Acked: true, Task: task(rpc.StatusWorking, ""), Outcome: &follow.Outcome{End: follow.EndTimeout, TaskID: "t1", Task: task(rpc.StatusWorking, "")}},
			rpc.StatusWorking, "", "", exitcode.Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, text, note, code, err := Cancel("t1", tc.era, ref, tc.out, 5*time.Second)
			if env.Type != "cancel" || env.TaskID != "t1" || env.Era != tc.era || env.Status != tc.status || string(env.Ack) != string(tc.out.Ack) {
				t.Errorf("envelope %+v", env)
			}
			if !strings.HasPrefix(text, tc.text) || (tc.text == "") != (text == "") || strings.Contains(text, "\x1b") {
				t.Errorf("text %q, want it to start %q (and no escapes)", text, tc.text)
			}
			if !strings.HasPrefix(note, tc.note) || (tc.note == "") != (note == "") {
				t.Errorf("note %q, want %q", note, tc.note)
			}
			if code != tc.code || (err != nil) != (code != 0) {
				t.Errorf("code %d, err %v; want %d", code, err, tc.code)
			}
		})
	}
}

// TestUpdated checks what update shows and its exit code, for a task that had ended, one that
// finished without asking, answers in both eras, and each way of not answering.
func TestUpdated(t *testing.T) {
	ended := func(s rpc.TaskStatus) follow.Updated {
		return follow.Updated{Task: &rpc.Task{TaskID: "t1", Status: s}}
	}
	waiting := follow.Updated{Task: &rpc.Task{TaskID: "t1", Status: rpc.StatusInputRequired}}
	for _, tc := range []struct {
		name     string
		era      rpc.Era
		out      follow.Updated
		err      error
		doc      bool
		answered []string
		note     string
		code     int
	}{
		{"ended completed", rpc.EraModern, ended(rpc.StatusCompleted), nil, true, []string{}, "task t1 already ended completed and asks nothing any more", 0},
		{"ended failed", rpc.EraModern, ended(rpc.StatusFailed), nil, true, []string{}, "", exitcode.TaskFailed},
		{"ended cancelled", rpc.EraLegacy, ended(rpc.StatusCancelled), nil, true, []string{}, "", exitcode.Cancelled},
		{"finished", rpc.EraLegacy, follow.Updated{Task: waiting.Task, Finished: true}, nil, false, nil, "task t1 finished without asking\n", 0},
		{"modern", rpc.EraModern, follow.Updated{Task: waiting.Task, Answered: []string{"a", "b"}}, nil, true, []string{"a", "b"}, "answered 2 input request(s) of task t1\n", 0},
		{"legacy", rpc.EraLegacy, follow.Updated{Task: waiting.Task, Answered: []string{"elicitation"}}, nil, true, []string{"elicitation"}, "answered the question of task t1\n", 0},
		{"unknown task", rpc.EraModern, follow.Updated{}, &rpc.Error{Code: -32602, Message: "unknown task"}, false, nil, "", exitcode.Expired},
		{"get failed", rpc.EraModern, follow.Updated{}, errors.New("refused"), false, nil, "", 0},
		{"not waiting", rpc.EraModern, waiting, &follow.NotWaitingError{Task: waiting.Task}, false, nil, "", exitcode.InputRequired},
		{"unneeded", rpc.EraModern, waiting, &follow.UnneededError{Msg: "not asked"}, false, nil, "", exitcode.Usage},
		{"wrong answer", rpc.EraModern, waiting, &follow.AnswerError{Key: "k", Err: errors.New("bad")}, false, nil, "", exitcode.Usage},
		{"no question", rpc.EraLegacy, waiting, &follow.NoQuestionError{TaskID: "t1", After: time.Second}, false, nil, "", exitcode.Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, note, code, err := Updated("t1", tc.era, "srv", tc.out, tc.err)
			if (doc != nil) != tc.doc {
				t.Fatalf("doc %+v, want one: %v", doc, tc.doc)
			}
			if doc != nil {
				b, _ := json.Marshal(doc)
				if doc.TaskID != "t1" || doc.Server != "srv" || doc.Era != tc.era || !strings.Contains(string(b), `"answered":[`) {
					t.Errorf("doc %s", b)
				}
				if strings.Join(doc.Answered, ",") != strings.Join(tc.answered, ",") {
					t.Errorf("answered %v, want %v", doc.Answered, tc.answered)
				}
			}
			if !strings.HasPrefix(note, tc.note) || (tc.note == "") != (note == "") {
				t.Errorf("note %q, want %q", note, tc.note)
			}
			if code != tc.code || (err != nil) != (tc.err != nil || code != 0) {
				t.Errorf("code %d, err %v; want %d", code, err, tc.code)
			}
		})
	}
}
