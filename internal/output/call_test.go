package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
)

func TestCalled(t *testing.T) {
	done := &rpc.CallResult{Kind: rpc.KindComplete, Tool: &rpc.ToolResult{Raw: json.RawMessage(`{"content":[]}`)}}
	env, _, code, err := Called("echo", done, rpc.EraModern, "srv")
	if env.Type != "result" || code != 0 || err != nil {
		t.Errorf("a result: %+v, %d, %v", env, code, err)
	}
	asks := &rpc.CallResult{Kind: rpc.KindInputRequired, Raw: json.RawMessage(`{"resultType":"input_required"}`),
		InputRequests: map[string]json.RawMessage{"confirm": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Sure?"}}`)}}
	env, text, code, err := Called("confirm", asks, rpc.EraModern, "srv")
	if env.Type != "input_required" || env.Input == nil || string(env.Result) != string(asks.Raw) ||
		!strings.HasPrefix(string(text), `{"inputRequests":{"confirm":`) ||
		code != exitcode.InputRequired || err == nil || !strings.Contains(err.Error(), "confirm: elicitation/create: Sure?") {
		t.Errorf("input asked for: %+v, %q, %d, %v", env, text, code, err)
	}
}

func TestCallFailed(t *testing.T) {
	refused := &rpc.Error{Code: rpc.CodeMissingCapability, Message: "needs elicitation"}
	for _, tc := range []struct {
		name     string
		err      error
		timedOut bool
		code     int
		say      string
	}{
		{"no input", follow.ErrNoInput, false, exitcode.InputRequired, "tool t needs input and none was given"},
		{"bad --arg", fmt.Errorf("type: %w", &exitcode.UsageError{Err: errors.New("--arg n=x: the tool wants a number")}), false, exitcode.Usage, "--arg n=x"},
		{"bad answer", &follow.AnswerError{Key: "k", Err: errors.New("bad")}, false, exitcode.Usage, "answer k"},
		{"tools/list failed", errors.New("refused"), false, 0, "refused"},
		{"retry failed", &follow.CallError{Tool: "t", Round: 1, Err: errors.New("gone")}, true, 0, "call t: gone"},
		{"timeout", &follow.CallError{Tool: "t", Err: errors.New("deadline")}, true, exitcode.Timeout, "timeout after 5s waiting for tools/call t"},
		{"missing capability", &follow.CallError{Tool: "t", Err: refused}, false, exitcode.InputRequired, "the server said: server error -32021: needs elicitation"},
		{"other", &follow.CallError{Tool: "t", Err: errors.New("boom")}, false, 0, "call t: boom"},
	} {
		code, err := CallFailed("t", tc.err, tc.timedOut, 5*time.Second)
		if code != tc.code || err == nil || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("%s: %d, %v; want %d saying %q", tc.name, code, err, tc.code, tc.say)
		}
	}
}
