package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// The progress tool counts to a number of steps inside the request, and sends a
// notifications/progress with the total after each step, on the request's own stream (an SSE
// event over HTTP, a line over stdio), before it answers. It is never a task: on 2026-07-28
// progress "is not supported for tasks" (TasksExtension, §Task Status Notifications), and a
// plain call is what a client shows a blank screen for if it drops progress. The
// notifications go out only when the call asked for them with _meta.progressToken (MCP
// 2025-11-25 and 2026-07-28, Progress: "the receiver MAY send progress notifications" for a
// request that carries a token), and the progress increases with every one of them.
var progressTool = tool{Name: "progress", Description: "Count to a number of steps (one a second) and answer, sending notifications/progress with the total after each step; never a task.",
	Schema: `{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":600,"default":5,"description":"how many steps to count"}}}`}

// progressToken is the _meta.progressToken of a request's params, nil when there is none.
func progressToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	if string(p.Meta.ProgressToken) == "null" {
		return nil
	}
	return p.Meta.ProgressToken
}

// countProgress runs the progress tool: steps steps of StepDelay, a notification after each on
// out when the request sent token, then the CallToolResult.
func (s *Server) countProgress(ctx context.Context, out func(*rpc.Message) error, token json.RawMessage, a toolArgs) (json.RawMessage, *rpc.Error) {
	steps := 5
	if a.Steps != nil {
		steps = *a.Steps
	}
	for i := 1; i <= steps; i++ {
		t := time.NewTimer(s.opts.StepDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "request cancelled"}
		case <-s.closing:
			t.Stop()
			return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "server closing"}
		}
		if token == nil || out == nil {
			continue
		}
		b, _ := json.Marshal(map[string]any{"progressToken": token, "progress": i, "total": steps, "message": fmt.Sprintf("step %d of %d", i, steps)})
		if err := out(&rpc.Message{JSONRPC: "2.0", Method: "notifications/progress", Params: b}); err != nil {
			return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "the request's stream is gone"}
		}
	}
	return textResult(fmt.Sprintf("counted %d steps", steps), false), nil
}
