// Package mdterm shows a tool's text result that is written in Markdown (a research report, a
// summary) as a document on a person's terminal, the way `gh issue view` shows an issue's body:
// headings stand out, paragraphs are wrapped to the terminal, lists get bullets, code keeps its
// lines. Piped, the text is printed exactly as the server sent it; this package is only for a
// terminal.
//
// It is its own renderer, not charm.land/glamour, for the start-up of every command: glamour's
// syntax highlighter (github.com/alecthomas/chroma) registers its lexers and styles in package
// init, which Go runs for every linked package at every start whether it is used or not. Linked
// into mcptask that was 13–16 ms and 6 MB per start (GODEBUG=inittrace=1, `mcptask version`,
// against 1.5–2.4 ms for all of mcptask's other inits), several times what `call --detach`
// costs as a whole (bench/README.md). This renderer has no package-level state to build.
//
// The text is a server's, and a server is not trusted (SECURITY.md): it passes
// termsafe.String before it is parsed, so no escape, control or bidi character of it reaches
// the output, and the only escape sequences the output holds are the SGR colours this package
// writes itself (none with Color off). A link is shown as its text followed by its URL in
// plain sight, never as an OSC 8 hyperlink whose target the terminal would hide behind other
// text. What is not Markdown, or not clearly, is left to be printed as it is (Detect).
package mdterm

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// MaxSize is the largest text rendered as a document; a longer one is printed as it is.
const MaxSize = 1 << 20

// Options say how the document is drawn.
type Options struct {
	// Width is the terminal's; the text is wrapped to at most 100 columns of it (80 when 0).
	Width int
	// Color draws headings, emphasis, code and links in colour (off for NO_COLOR).
	Color bool
}

// SGR sequences: the only escapes Render writes.
const (
	reset   = "\x1b[0m"
	sgrBold = "\x1b[1m"
	sgrEm   = "\x1b[3m"
	sgrCode = "\x1b[36m"
	sgrLink = "\x1b[4;34m"
	sgrH1   = "\x1b[1;4;35m"
	sgrH    = "\x1b[1;35m"
	sgrDim  = "\x1b[2m"
)

// Detect reports whether text reads as Markdown, conservatively: at least two different kinds
// of Markdown structure (a heading, a list, a fenced code block, a quote, emphasis, a link, a
// table row), so that a sentence with one asterisk or a line that begins with "- " stays as it
// is.
func Detect(text string) bool {
	if len(text) > MaxSize || !strings.Contains(text, "\n") {
		return false
	}
	kinds := map[string]bool{}
	listItems := 0
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) >= 4 {
			continue
		}
		switch {
		case headingLevel(t) > 0:
			kinds["heading"] = true
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			kinds["code"] = true
		case strings.HasPrefix(t, "> "):
			kinds["quote"] = true
		case strings.HasPrefix(t, "|") && strings.HasSuffix(strings.TrimSpace(t), "|") && strings.Count(t, "|") >= 3:
			kinds["table"] = true
		}
		if _, _, ok := listItem(t); ok {
			if listItems++; listItems >= 2 {
				kinds["list"] = true
			}
		}
		if strings.Contains(t, "**") && strings.Count(t, "**") >= 2 {
			kinds["strong"] = true
		}
		if i := strings.Index(t, "]("); i > 0 && strings.Contains(t[:i], "[") && strings.Contains(t[i:], ")") {
			kinds["link"] = true
		}
	}
	return len(kinds) >= 2
}

// Render draws text as a document. The text is made terminal-safe first.
func Render(text string, o Options) string {
	r := renderer{o: o, cols: o.Width}
	if r.cols <= 0 {
		r.cols = 80
	}
	r.cols = max(min(r.cols, 100), 24) // every line starts with a margin of two, as gh's do
	lines := strings.Split(strings.ReplaceAll(termsafe.String(text), "\t", "    "), "\n")
	r.blocks(lines)
	return strings.TrimRight(r.out.String(), "\n") + "\n"
}

type renderer struct {
	o    Options
	cols int // the widest a line gets, margin included
	out  strings.Builder
	para []string // the lines of the paragraph being gathered
}

// style wraps s in sgr when colours are on.
func (r *renderer) style(sgr, s string) string {
	if !r.o.Color || s == "" {
		return s
	}
	return sgr + s + reset
}

func (r *renderer) blank() {
	if r.out.Len() > 0 && !strings.HasSuffix(r.out.String(), "\n\n") {
		r.out.WriteString("\n")
	}
}

// flush writes the gathered paragraph, wrapped.
func (r *renderer) flush() {
	if len(r.para) == 0 {
		return
	}
	r.blank()
	text := strings.Join(r.para, " ")
	r.para = r.para[:0]
	for _, l := range r.wrap(r.inline(text), "  ", "  ") {
		r.out.WriteString(l + "\n")
	}
}

func (r *renderer) blocks(lines []string) {
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \r")
		t := strings.TrimLeft(line, " ")
		indent := len(line) - len(t)
		switch {
		case t == "":
			r.flush()
		case indent < 4 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			r.flush()
			fence := t[:3]
			r.blank()
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), fence); i++ {
				r.out.WriteString("    " + r.style(sgrCode, strings.TrimRight(lines[i], " \r")) + "\n")
			}
		case indent < 4 && headingLevel(t) > 0:
			r.flush()
			n := headingLevel(t)
			title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#"))
			r.blank()
			switch {
			case n == 1 && r.o.Color:
				r.out.WriteString("  " + r.style(sgrH1, plain(r.inline(title))) + "\n")
			default:
				r.out.WriteString("  " + r.style(sgrH, strings.Repeat("#", n)+" "+plain(r.inline(title))) + "\n")
			}
		case indent < 4 && isRule(t):
			r.flush()
			r.blank()
			r.out.WriteString("  " + r.style(sgrDim, strings.Repeat("─", min(r.cols-2, 40))) + "\n")
		case indent < 4 && strings.HasPrefix(t, ">"):
			r.flush()
			var quote []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimLeft(lines[i], " "), ">"); i++ {
				q := strings.TrimPrefix(strings.TrimLeft(lines[i], " "), ">")
				quote = append(quote, strings.TrimSpace(q))
			}
			i--
			r.blank()
			for _, l := range r.wrap(r.inline(strings.Join(quote, " ")), "  │ ", "  │ ") {
				r.out.WriteString(l + "\n")
			}
		case indent < 4 && strings.HasPrefix(t, "|"):
			r.flush()
			r.out.WriteString("  " + t + "\n") // a table keeps its columns
		default:
			if mark, rest, ok := listItem(t); ok {
				r.flush()
				if r.out.Len() > 0 && !r.inList(i, lines) {
					r.blank()
				}
				level := indent / 2
				pad := "  " + strings.Repeat("  ", level)
				bullet := "• "
				if mark != "" {
					bullet = mark + " "
				}
				// A list item's continuation lines belong to it.
				for i+1 < len(lines) && continues(lines[i+1]) {
					i++
					rest += " " + strings.TrimSpace(lines[i])
				}
				hang := pad + strings.Repeat(" ", utf8.RuneCountInString(bullet))
				for _, l := range r.wrap(r.inline(rest), pad+bullet, hang) {
					r.out.WriteString(l + "\n")
				}
				continue
			}
			r.para = append(r.para, t)
		}
	}
	r.flush()
}

// inList reports whether line i follows an item of the same list.
func (r *renderer) inList(i int, lines []string) bool {
	if i == 0 {
		return false
	}
	_, _, ok := listItem(strings.TrimLeft(lines[i-1], " "))
	return ok || continues(lines[i-1]) && i > 1
}

// continues reports whether line is the continuation of a list item: indented text that
// starts no block of its own.
func continues(line string) bool {
	t := strings.TrimLeft(line, " ")
	if t == "" || len(line)-len(t) < 2 {
		return false
	}
	_, _, item := listItem(t)
	return !item && headingLevel(t) == 0 && !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, ">")
}

func headingLevel(t string) int {
	n := 0
	for n < len(t) && n < 7 && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ') {
		return 0
	}
	return n
}

func isRule(t string) bool {
	s := strings.ReplaceAll(t, " ", "")
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_"} {
		if strings.Trim(s, c) == "" {
			return true
		}
	}
	return false
}

// listItem splits a list item into its number ("1." for an ordered one, "" for a bullet) and
// its text.
func listItem(t string) (mark, rest string, ok bool) {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' && !isRule(t) {
		return "", strings.TrimSpace(t[2:]), true
	}
	n := 0
	for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && t[n+1] == ' ' {
		return t[:n+1], strings.TrimSpace(t[n+2:]), true
	}
	return "", "", false
}

// piece is a run of text in one style.
type piece struct {
	text string
	sgr  string // "" for plain
}

// plain joins pieces without their styles.
func plain(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.text)
	}
	return b.String()
}

// inline splits text into styled runs: `code`, **strong**, *emphasis*, [links](url) (shown as
// their text and their URL), ![images](url) and backslash escapes.
func (r *renderer) inline(s string) []piece {
	var out []piece
	var cur strings.Builder
	emit := func(text, sgr string) {
		if cur.Len() > 0 {
			out = append(out, piece{text: cur.String()})
			cur.Reset()
		}
		if text != "" {
			out = append(out, piece{text: text, sgr: sgr})
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!|>~", s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				emit(s[i+1:i+1+j], sgrCode)
				i += j + 2
				continue
			}
		case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
			if j := strings.Index(s[i+2:], s[i:i+2]); j > 0 {
				emit(plain(r.inline(s[i+2:i+2+j])), sgrBold)
				i += j + 4
				continue
			}
		case c == '*' && i+1 < len(s) && s[i+1] != ' ':
			if j := strings.IndexByte(s[i+1:], '*'); j > 0 && s[i+j] != ' ' {
				emit(s[i+1:i+1+j], sgrEm)
				i += j + 2
				continue
			}
		case c == '[' || (c == '!' && strings.HasPrefix(s[i:], "![")):
			start := i
			if c == '!' {
				start++
			}
			if text, url, n, ok := link(s[start:]); ok {
				if c == '!' {
					emit("Image: "+text, "")
				} else {
					emit(text, sgrBold)
				}
				if url != "" && url != text {
					emit(" ", "")
					emit(url, sgrLink)
				}
				i = start + n
				continue
			}
		}
		cur.WriteByte(c)
		i++
	}
	emit("", "")
	return out
}

// link parses [text](url) at the start of s and returns its length.
func link(s string) (text, url string, n int, ok bool) {
	end := strings.Index(s, "](")
	if end < 0 || strings.IndexByte(s[1:end], ']') >= 0 {
		return "", "", 0, false
	}
	close := strings.IndexByte(s[end+2:], ')')
	if close < 0 {
		return "", "", 0, false
	}
	url = strings.TrimSpace(s[end+2 : end+2+close])
	if i := strings.IndexByte(url, ' '); i >= 0 { // [text](url "title")
		url = url[:i]
	}
	return s[1:end], strings.Trim(url, "<>"), end + 3 + close, true
}

// wrap lays the pieces out in lines of at most r.cols columns: the first starting with first,
// the others with rest. A word longer than a line gets a line of its own. Each word is styled
// on its own, so that no style runs past the end of a line.
func (r *renderer) wrap(ps []piece, first, rest string) []string {
	var lines []string
	var line strings.Builder
	line.WriteString(first)
	lineW, empty := ansi.StringWidth(first), true
	var word strings.Builder
	wordW := 0
	flushWord := func() {
		if wordW == 0 {
			return
		}
		if !empty && lineW+1+wordW > r.cols {
			lines = append(lines, line.String())
			line.Reset()
			line.WriteString(rest)
			lineW, empty = ansi.StringWidth(rest), true
		}
		if !empty {
			line.WriteByte(' ')
			lineW++
		}
		line.WriteString(word.String())
		lineW += wordW
		empty = false
		word.Reset()
		wordW = 0
	}
	for _, p := range ps {
		for j, w := range strings.Split(p.text, " ") {
			if j > 0 {
				flushWord()
			}
			if w != "" {
				word.WriteString(r.style(p.sgr, w))
				wordW += ansi.StringWidth(w)
			}
		}
	}
	flushWord()
	if !empty {
		lines = append(lines, line.String())
	}
	return lines
}
