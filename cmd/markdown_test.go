package cmd

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestMarkdownResult: a text result written in Markdown (server-everything's research report,
// returned here by the demo's echo tool) reads as a document on a terminal: bullets for the
// list items, no ** or backticks, the paragraph flowed to the terminal's width. Piped, it is
// the server's text byte for byte, and a text that is not Markdown is left as it is on a
// terminal too.
func TestMarkdownResult(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	report, err := os.ReadFile("../internal/mdterm/testdata/research.md")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": string(report)})

	r := runCLI(t, ctx, nil, "call", "echo", "--args", string(args), "--server", url)
	if r.Code != ExitOK || r.Stdout != string(report) {
		t.Errorf("piped: exit %d; stdout must be the server's text exactly:\n%q\nwant\n%q", r.Code, r.Stdout, report)
	}

	onTerminal := func(text string) string {
		t.Helper()
		a, _ := json.Marshal(map[string]string{"text": text})
		_, out, errOut, code := runOnTerminal(t, ctx, "call", "echo", "--args", string(a), "--server", url)
		if c := <-code; c != ExitOK {
			t.Fatalf("on a terminal: exit %d\n%s", c, errOut.String())
		}
		return out.String()
	}
	out := onTerminal(string(report))
	for _, want := range []string{"  # Research Report: quantum computing (hardware)\n", "  • Topic: quantum computing\n", "  1. tools/call with task parameter"} {
		if !strings.Contains(out, want) {
			t.Errorf("on a terminal the report is not drawn as a document (%q missing):\n%s", want, out)
		}
	}
	if strings.Contains(out, "**") || strings.Contains(out, "`") {
		t.Errorf("Markdown source shown on a terminal:\n%s", out)
	}
	if out := onTerminal("2 * 3 = 6\nnot *Markdown*\n"); out != "2 * 3 = 6\nnot *Markdown*\n" {
		t.Errorf("a text that is not clearly Markdown must be printed as it is: %q", out)
	}
}

// TestHostileMarkdownOnTerminal plays a server whose Markdown result hides escapes in a
// heading, a link's URL (an OSC 8 hyperlink of its own, to disguise a target) and a code block:
// drawn as a document on a terminal (NO_COLOR, so mdterm adds no colour), not one escape or
// control character reaches the screen, and the link's real URL is shown as text.
func TestHostileMarkdownOnTerminal(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const evil = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;https://evil.example/\x1b\\\u009b31m\u202e"
	text := "# Report" + evil + "\n\n- see [the docs](https://good.example/" + evil + "docs)\n- two\n\n```\n" + evil + "ls\n```\n"
	a, _ := json.Marshal(map[string]string{"text": text})
	_, out, errOut, code := runOnTerminal(t, ctx, "call", "echo", "--args", string(a), "--server", url)
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d\n%s", c, errOut.String())
	}
	got := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "pwned", "evil.example"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q reached the terminal: %q", bad, got)
		}
	}
	if !strings.Contains(got, "• see the docs https://good.example/") || !strings.Contains(got, "  # Report") {
		t.Errorf("the document does not show the link's URL in plain sight:\n%s", got)
	}
}
