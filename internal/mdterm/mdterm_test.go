package mdterm

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestResearchReportGolden renders server-everything's research report (the text its
// simulate-research-query tool returns) at 60, 100 and 140 columns, without colour.
//
// What a person sees: the title and the section headings on lines of their own, each list
// item behind a bullet or its number with wrapped lines hanging under its text, the paragraph
// that the source broke over three lines flowed as one, code spans without their backticks,
// the rule as a line, every line at most as wide as the terminal (and never wider than 100).
func TestResearchReportGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/research.md")
	if err != nil {
		t.Fatal(err)
	}
	if !Detect(string(src)) {
		t.Fatal("the research report is not detected as Markdown")
	}
	for _, width := range []int{60, 100, 140} {
		got := Render(string(src), Options{Width: width})
		for i, line := range strings.Split(got, "\n") {
			if w := ansi.StringWidth(line); w > min(width, 100) {
				t.Errorf("%d columns: line %d is %d wide: %q", width, i, w, line)
			}
		}
		if strings.Contains(got, "\x1b") || strings.Contains(got, "`") || strings.Contains(got, "**") {
			t.Errorf("%d columns: Markdown source or escapes left in a colourless document:\n%s", width, got)
		}
		path := fmt.Sprintf("testdata/research-%d.golden", width)
		if *update {
			_ = os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if string(want) != got {
			t.Errorf("%d columns differ from %s:\n%s", width, path, got)
		}
	}
	coloured := Render(string(src), Options{Width: 100, Color: true})
	if !strings.Contains(coloured, sgrH1+"Research Report: quantum computing (hardware)"+reset) || !strings.Contains(coloured, sgrCode+"tools/call"+reset) {
		t.Errorf("in colour the title and code spans are not styled:\n%q", coloured)
	}
}

// TestDetect: only text with two kinds of Markdown structure is drawn as a document; plain
// sentences, JSON, a lone bullet line or a lone heading-looking line print as they are.
func TestDetect(t *testing.T) {
	for text, want := range map[string]bool{
		"# Title\n\nSome **bold** text.\n":                        true,
		"## Steps\n- one\n- two\n":                                true,
		"See [the docs](https://example.com) and:\n```\nx\n```\n": true,
		"slept 3 seconds\n":                                       false,
		"Hello, Ada!":                                             false,
		`{"a": 1, "b": [1, 2]}` + "\n":                            false,
		"- just one dash line\nand text\n":                        false,
		"# only a heading\nand a sentence\n":                      false,
		"2 * 3 = 6\nand 4 * 5 = 20\n":                             false,
		"#hashtag is not a heading\n- a\n- b\n":                   false,
	} {
		if got := Detect(text); got != want {
			t.Errorf("Detect(%q) = %v, want %v", text, got, want)
		}
	}
	if Detect("# big\n- a\n- b\n" + strings.Repeat("x", MaxSize)) {
		t.Errorf("a text over MaxSize is rendered")
	}
}

// TestHostileMarkdown plays a server that hides escape sequences in every part of a Markdown
// result: a heading, emphasis, a code span and a fenced block, a link's text and URL (an OSC 8
// hyperlink of its own, to hide a target), an image, a quote and a list. The document holds no
// escape but the SGR colours mdterm writes (none without colour), no control character but
// the newline, no bidi control, and shows each link's URL in plain sight.
func TestHostileMarkdown(t *testing.T) {
	const esc = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;file:///etc/passwd\x1b\\\x9b31m\x1b[31m\u202e\x07\x00\r"
	src := "# Title" + esc + "\n\n" +
		"Some **bold" + esc + "** and *em" + esc + "* and `code" + esc + "`.\n\n" +
		"[click" + esc + "](https://example.com/" + esc + "x) ![img" + esc + "](http://i/" + esc + ")\n\n" +
		"```\n" + esc + "rm -rf /\n```\n\n" +
		"> quoted" + esc + "\n\n" +
		"- item" + esc + "\n- two\n"
	sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	for _, color := range []bool{false, true} {
		out := Render(src, Options{Width: 80, Color: color})
		rest := sgr.ReplaceAllString(out, "")
		if !color && rest != out {
			t.Errorf("colour off but SGR written: %q", out)
		}
		for _, bad := range []string{"\x1b", "\x07", "\x9b", "\x00", "\r", "\u202e", "pwned", "]8;;"} {
			if strings.Contains(rest, bad) {
				t.Errorf("color=%v: %q reached the document: %q", color, bad, out)
			}
		}
		for _, m := range sgr.FindAllString(out, -1) {
			switch m {
			case reset, sgrBold, sgrEm, sgrCode, sgrLink, sgrH1, sgrH, sgrDim:
			default:
				t.Errorf("an SGR mdterm does not write reached the document: %q", m)
			}
		}
		if !strings.Contains(rest, "https://example.com/") || !strings.Contains(rest, "rm -rf /") {
			t.Errorf("color=%v: the link's URL or the code is not shown:\n%s", color, rest)
		}
	}
}
