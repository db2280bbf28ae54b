package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/mdterm"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestResultTextMarkdown: a task's Markdown text result is drawn as a document only by a
// printer for a person's terminal (Doc set), never for a pipe or --json, and the document
// keeps none of the server's escapes.
func TestResultTextMarkdown(t *testing.T) {
	md := "# Report\x1b]0;pwned\x07\n\n- **one**\n- two\n"
	raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": md}}})
	tr, err := rpc.DecodeToolResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	env, text, _, _ := Result(tr, &rpc.Task{TaskID: "t1", Status: "completed"}, "", "http://x/mcp")
	piped := &Printer{Out: &bytes.Buffer{}}
	if got := piped.ResultText(env, text); !bytes.Equal(got, text) || string(got) != "# Report\n\n- **one**\n- two\n" {
		t.Errorf("piped: %q; want the text as Result gives it (escapes stripped, nothing else changed)", got)
	}
	jsonP := &Printer{Out: &bytes.Buffer{}, Mode: JSON, Doc: &mdterm.Options{Width: 80}}
	if got := jsonP.ResultText(env, text); !bytes.Equal(got, text) {
		t.Errorf("--json must not draw documents: %q", got)
	}
	term := &Printer{Out: &bytes.Buffer{}, Doc: &mdterm.Options{Width: 80, Color: true}}
	got := string(term.ResultText(env, text))
	if !strings.Contains(got, "Report") || !strings.Contains(got, "• ") || strings.Contains(got, "**") || strings.Contains(got, "pwned") || strings.Contains(got, "\x07") {
		t.Errorf("on a terminal: %q", got)
	}
}
