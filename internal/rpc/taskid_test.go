package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// TestCheckTaskID: an id is 1 to MaxTaskIDLen bytes of visible ASCII; the error names what is
// wrong and shows the id escaped, never raw.
func TestCheckTaskID(t *testing.T) {
	for _, ok := range []string{"8332f536-7614-41a7-979c-2d4508bb37de", "a", "task_1.2:3/4+5=", strings.Repeat("t", MaxTaskIDLen)} {
		if err := CheckTaskID(ok); err != nil {
			t.Errorf("CheckTaskID(%q): %v", ok, err)
		}
	}
	for _, tc := range []struct{ id, want string }{
		{"", "empty"},
		{"a b", "a space at byte 1"},
		{"a\x1b[2Jb", "a control character at byte 1"},
		{"a\x00", "a control character at byte 1"},
		{"a\x7f", "a control character at byte 1"},
		{"é", "a non-ASCII character at byte 0"},
		{"x\u202eexe", "a non-ASCII character at byte 1"},
		{strings.Repeat("t", MaxTaskIDLen+1), "1025 bytes long"},
	} {
		err := CheckTaskID(tc.id)
		if !errors.Is(err, ErrBadTaskID) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckTaskID(%q) = %v, want an ErrBadTaskID saying %q", tc.id, err, tc.want)
			continue
		}
		if termsafe.Line(err.Error()) != err.Error() || len(err.Error()) > 300 {
			t.Errorf("CheckTaskID(%q) error is not safe to print as is: %q", tc.id, err)
		}
	}
}

// TestDecodeTaskRefusesUnusableIDs: the one task decoder (CreateTaskResult, tasks/get,
// tasks/cancel, tasks/list, notifications/tasks) refuses such an id as malformed, and cuts a
// huge status message where it is decoded.
func TestDecodeTaskRefusesUnusableIDs(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"taskId": "a\x1b]0;x\x07", "status": "working"})
	if _, err := DecodeTask(raw); !errors.Is(err, ErrBadTaskID) || !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeTask: %v", err)
	}
	raw, _ = json.Marshal(map[string]any{"taskId": "a", "status": "working", "statusMessage": strings.Repeat("m", 1<<20)})
	tk, err := DecodeTask(raw)
	if err != nil || len(tk.StatusMessage) > termsafe.Limit+32 || !strings.HasSuffix(tk.StatusMessage, "bytes]") {
		t.Errorf("DecodeTask: %v, a status message of %d bytes", err, len(tk.StatusMessage))
	}
}

// TestErrorMessageIsSafe: a JSON-RPC error prints cleaned and bounded; Message keeps the
// server's words.
func TestErrorMessageIsSafe(t *testing.T) {
	e := &Error{Code: -32603, Message: "boom\x1b[2J\r\nmcptask: ok \u202eexe" + strings.Repeat("x", 1<<20)}
	s := e.Error()
	if strings.ContainsAny(s, "\x1b\r\n\u202e") || len(s) > termsafe.Limit+64 || !strings.HasPrefix(s, "server error -32603: boom") {
		t.Errorf("Error() = %.120q… (%d bytes)", s, len(s))
	}
	if !strings.HasPrefix(e.Message, "boom\x1b") {
		t.Error("Message was changed")
	}
}
