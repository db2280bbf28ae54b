package output

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

func testReporter(out *bytes.Buffer, json bool, many bool) *Reporter {
	return &Reporter{P: New(out, json, false), Kind: "watch", Many: many,
		Ref:   func(string) connect.Ref { return connect.Ref{} },
		Judge: func(_ context.Context, code int, err error) (int, error) { return code, err }}
}

// TestReporterManyJSON: many outcomes become one --json document at the end, sorted by task
// id whatever order they ended in, and the run's code is the most severe one.
func TestReporterManyJSON(t *testing.T) {
	var out bytes.Buffer
	r := testReporter(&out, true, true)
	_ = r.Show(follow.Outcome{TaskID: "b", End: follow.EndCancelled, Task: &rpc.Task{TaskID: "b", Status: "cancelled"}})
	_ = r.Show(follow.Outcome{TaskID: "a", End: follow.EndResult, Task: &rpc.Task{TaskID: "a", Status: "completed"}, Result: &rpc.ToolResult{}})
	if out.Len() != 0 {
		t.Fatalf("printed before Finish: %s", out.String())
	}
	code, msg, err := r.Finish()
	if err != nil || code != exitcode.Cancelled || msg != "1 of 2 task(s) did not complete well" {
		t.Errorf("Finish = %d, %q, %v", code, msg, err)
	}
	var doc struct {
		Type  string
		Tasks []struct {
			TaskID string `json:"taskId"`
			Code   int    `json:"code"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if doc.Type != "watch" || len(doc.Tasks) != 2 || doc.Tasks[0].TaskID != "a" || doc.Tasks[1].TaskID != "b" || doc.Tasks[1].Code != exitcode.Cancelled {
		t.Errorf("document = %s", out.String())
	}
}

// TestReporterOneText: one task's outcome is printed as it ends and its error is returned.
func TestReporterOneText(t *testing.T) {
	var out bytes.Buffer
	r := testReporter(&out, false, false)
	err := r.Show(follow.Outcome{TaskID: "a", End: follow.EndCancelled, Task: &rpc.Task{TaskID: "a", Status: "cancelled"}})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("err = %v", err)
	}
	if code, _, _ := r.Finish(); code != exitcode.OK {
		t.Errorf("one task's outcome counted among many: %d", code)
	}
}
