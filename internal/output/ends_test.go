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
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestEnds: a task's end reads the same for the job log and the hooks as for the command: its
// exit code and outcome name, the resume hint of its server, its secrets hidden in the verdict,
// and its --json envelope only when a hook will read it.
func TestEnds(t *testing.T) {
	e := &Ends{Redactor: redact.New(nil, "s3cret-value")}
	e.SetServer("http://127.0.0.1:1/mcp", connect.Ref{URL: "http://127.0.0.1:1/mcp"})
	e.SetTimeout(5 * time.Second)
	o := follow.Outcome{TaskID: "t1", Tool: "build", Server: "http://127.0.0.1:1/mcp", End: follow.EndCancelled,
		Task: &rpc.Task{TaskID: "t1", Status: rpc.StatusCancelled, StatusMessage: "stopped by s3cret-value"}}

	v := e.Verdict(o)
	if v.Outcome != "cancelled" || strings.Contains(v.Status, "s3cret-value") || !strings.Contains(v.Resume, "127.0.0.1:1") {
		t.Errorf("verdict %+v: want outcome cancelled, the secret hidden, a resume hint on the server", v)
	}
	ended := e.Ended(o, 3*time.Second, true)
	if ended.Code != exitcode.Cancelled || ended.Outcome != "cancelled" || ended.Took != 3*time.Second {
		t.Errorf("ended %+v", ended)
	}
	var env map[string]any
	if err := json.Unmarshal(ended.Envelope, &env); err != nil || env["taskId"] != "t1" {
		t.Errorf("envelope %s: %v", ended.Envelope, err)
	}
	if e.Ended(o, 0, false).Envelope != nil {
		t.Error("an envelope was encoded with no hook to read it")
	}
	if _, code, _, err := e.Judge(follow.Outcome{TaskID: "t1", Task: o.Task, Err: &follow.AnswerError{Key: "k", Err: errors.New("not a number")}}); code != exitcode.Usage || ExitCode(t.Context(), err) != exitcode.Usage {
		t.Errorf("a bad answer judged %d (%v), want a usage error", code, err)
	}
}
