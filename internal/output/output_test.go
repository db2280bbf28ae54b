package output

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
)

func TestPrinterChoosesTheFormOnce(t *testing.T) {
	text := func(w io.Writer) error { _, err := io.WriteString(w, "for a person\n"); return err }
	for _, tc := range []struct {
		json, jsonl bool
		mode        Mode
		want        string
	}{
		{false, false, Text, "for a person\n"},
		{true, false, JSON, `{"type":"task","taskId":"t1"}` + "\n"},
		{false, true, JSONL, `{"type":"task","taskId":"t1"}` + "\n"},
		{true, true, JSONL, `{"type":"task","taskId":"t1"}` + "\n"},
	} {
		var b bytes.Buffer
		p := New(&b, tc.json, tc.jsonl)
		if p.Mode != tc.mode {
			t.Errorf("json=%v jsonl=%v: mode %v, want %v", tc.json, tc.jsonl, p.Mode, tc.mode)
		}
		if err := p.Print(Envelope{Type: "task", TaskID: "t1"}, text); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("json=%v jsonl=%v: printed %q, want %q", tc.json, tc.jsonl, b.String(), tc.want)
		}
	}
	// A form with nothing to show prints nothing.
	var b bytes.Buffer
	if err := New(&b, false, false).Print(Envelope{Type: "x"}, nil); err != nil || b.Len() != 0 {
		t.Errorf("text mode without text printed %q (%v)", b.String(), err)
	}
	if err := New(&b, true, false).Print(nil, text); err != nil || b.Len() != 0 {
		t.Errorf("JSON mode without a document printed %q (%v)", b.String(), err)
	}
}

// TestProgressEvents checks the --jsonl events of the progress sink: typed, in the key order
// they have always had, and only with an event writer.
func TestProgressEvents(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	var lines, events bytes.Buffer
	p := NewProgress(&lines, &events, func() time.Time { return now }, nil, redact.New(nil))
	task := &rpc.Task{TaskID: "t1", Status: rpc.StatusWorking, StatusMessage: "step 1"}
	p.Event(follow.Event{Kind: follow.KindStatus, TaskID: "t1", Task: task})
	p.Event(follow.Event{Kind: follow.KindStatus, TaskID: "t1", Task: task}) // no change: no line
	p.Event(follow.Event{Kind: follow.KindError, TaskID: "t1", Transient: true, Err: errors.New("boom"), RetryIn: 2 * time.Second, Failures: 3})
	want := `{"status":"working","statusMessage":"step 1","taskId":"t1","time":"2026-11-22T10:30:00Z","type":"status","via":"poll"}
{"failures":3,"message":"boom","retryInMs":2000,"taskId":"t1","time":"2026-11-22T10:30:00Z","transient":true,"type":"error"}
`
	if events.String() != want {
		t.Errorf("events:\n%s\nwant:\n%s", events.String(), want)
	}
	if got := strings.Count(lines.String(), "\n"); got != 2 {
		t.Errorf("want 2 progress lines (status, poll failure), got:\n%s", lines.String())
	}
	// Without an event writer, only the lines.
	lines.Reset()
	NewProgress(&lines, nil, func() time.Time { return now }, nil, redact.New(nil)).Event(follow.Event{Kind: follow.KindStatus, TaskID: "t1", Task: task})
	if lines.String() != "2026-11-22T10:30:00Z t1 working step 1\n" {
		t.Errorf("line %q", lines.String())
	}
}
