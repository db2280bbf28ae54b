package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Called is what call shows of a tools/call of tool that started no task (as Describe): its
// result (Result), or the input the tool asks for before it starts that nobody here gave
// (C26-MRTR), as an input_required envelope and exit 5.
func Called(tool string, res *rpc.CallResult, era rpc.Era, server string) (*Envelope, []byte, int, error) {
	if res.Kind == rpc.KindComplete {
		return Result(res.Tool, nil, era, server)
	}
	env := &Envelope{Type: "input_required", Era: era, Server: server, Result: res.Raw, Input: res.InputRequests}
	// The questions go to stdout as a task's would (with no task id: none was started).
	text, _ := json.Marshal(InputRequiredEvent{Type: "input_required", InputRequests: res.InputRequests})
	return env, append(termsafe.JSON(text), '\n'), exitcode.InputRequired, fmt.Errorf("tool %s needs input before it can run (%s); nothing was started: call it again with --answer KEY=JSON, --answers FILE or --on-input decline|exec:CMD",
		tool, DescribeInputs(res.InputRequests, SortedKeys(res.InputRequests)))
}

// CallFailed gives a tools/call of tool that did not come back (follow.CallTool's error) its
// exit code (0 leaves it to err); timedOut reports that the command's --timeout ended the wait.
func CallFailed(tool string, err error, timedOut bool, timeout time.Duration) (int, error) {
	var ce *follow.CallError
	var ae *follow.AnswerError
	var ue *exitcode.UsageError
	switch {
	case errors.Is(err, follow.ErrNoInput):
		return exitcode.InputRequired, fmt.Errorf("tool %s needs input and none was given; nothing was started", tool)
	case errors.As(err, &ue):
		return exitcode.Usage, ue.Err // a value of the wrong type for --arg: nothing was sent
	case !errors.As(err, &ce):
		if errors.As(err, &ae) {
			return exitcode.Usage, err // a wrong answer: nothing was sent
		}
		return 0, err
	case ce.Round > 0:
		return 0, err
	case timedOut:
		return exitcode.Timeout, fmt.Errorf("timeout after %s waiting for tools/call %s", timeout, tool)
	case errors.Is(err, &rpc.Error{Code: rpc.CodeMissingCapability}):
		// C26-MRTR: a server that needs a client capability mcptask did not declare
		// (elicitation, because nothing here could answer) refuses with -32021.
		return exitcode.InputRequired, fmt.Errorf("call %s: the tool needs input that mcptask cannot answer here (the server said: %w)", tool, ce.Err)
	}
	return 0, err
}
