package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// CheckView says how the report of 'mcptask check' is shown to a person. The zero value is
// the plain form (no terminal): the verdict table and the tools on stdout, the summary on
// errOut, as lines a script or a log can read.
type CheckView struct {
	// Width, when set, is the terminal's: the report comes failures first, wrapped to it.
	Width int
	// Paint colours a status word or symbol in the status colours of mcptask; nil leaves it
	// plain (NO_COLOR keeps the words).
	Paint func(st check.Status, s string) string
	// All also lists each rule that passed or was not judged, and what was done with each tool
	// (--all, --verbose).
	All bool
	// Strict says warnings and rules not judged fail the run (--strict): the summary says so.
	Strict bool
}

// CheckReport prints the report of 'mcptask check': the Check document, or for a person the
// report as v says.
func (p *Printer) CheckReport(errOut io.Writer, server string, rep *check.Report, v CheckView) error {
	counts := rep.Counts()
	doc := Check{Type: "check", Server: server, Results: rep.Results, Tools: rep.Tools,
		Budget:  CheckBudget{LimitMs: rep.Budget.Milliseconds(), UsedMs: rep.Used.Milliseconds(), Cut: rep.Cut},
		Summary: counts}
	return p.Print(doc, func(w io.Writer) error {
		if v.Width > 0 {
			CheckTerminal(w, server, rep, v)
			return nil
		}
		CheckTable(w, rep)
		fmt.Fprintf(errOut, "%d passed, %d failed, %d warnings, %d not judged in %s (budget %s)\n", counts[check.Pass], counts[check.Fail], counts[check.Warn], counts[check.Skip],
			rep.Used.Round(100*time.Millisecond), rep.Budget)
		if v.Strict && counts[check.Warn]+counts[check.Skip] > 0 {
			fmt.Fprintf(errOut, "--strict: %d warnings and %d rules not judged fail the run\n", counts[check.Warn], counts[check.Skip])
		}
		if len(rep.Cut) > 0 {
			fmt.Fprintf(errOut, "the %s budget cut: %s; give more with --budget\n", rep.Budget, termsafe.Line(strings.Join(rep.Cut, "; ")))
		}
		return nil
	})
}

// checkSymbols mark each status in the terminal report; the word follows, so that the
// report reads the same without colour.
var checkSymbols = map[check.Status]string{check.Fail: "✗", check.Warn: "!", check.Pass: "✓", check.Skip: "–"}

// checkWords are the status words of the terminal report: a skip is a rule not judged.
var checkWords = map[check.Status]string{check.Fail: "FAIL", check.Warn: "WARN", check.Pass: "PASS", check.Skip: "NOT JUDGED"}

// CheckTerminal prints the report for a person at a terminal v.Width columns wide: a header
// line, the failures, then the warnings, each with its rule, era, section, what was seen and
// what the spec says; then one line counting the passes and the rules not judged (v.All lists
// them, and the tools); then what the budget cut.
func CheckTerminal(w io.Writer, server string, rep *check.Report, v CheckView) {
	paint := v.Paint
	if paint == nil {
		paint = func(_ check.Status, s string) string { return s }
	}
	counts := rep.Counts()
	eras := map[string]bool{}
	for _, r := range rep.Results {
		eras[r.Era] = true
	}
	width := max(v.Width, 40)
	eraWord := "eras"
	if len(eras) == 1 {
		eraWord = "era"
	}
	head := fmt.Sprintf("mcptask check %s · %d rules in %d %s · %s of the %s budget", termsafe.Line(termsafe.Cut(server)), len(rep.Results), len(eras), eraWord,
		rep.Used.Round(100*time.Millisecond), rep.Budget)
	fmt.Fprintln(w, wrapText(head, width, "  "))
	section := func(st check.Status, title string) {
		var list []check.Result
		for _, r := range rep.Results {
			if r.Status == st {
				list = append(list, r)
			}
		}
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", paint(st, fmt.Sprintf("%s (%d)", title, len(list))))
		for _, r := range list {
			checkFinding(w, r, width, paint)
		}
	}
	section(check.Fail, "FAILED")
	section(check.Warn, "WARNINGS")
	if v.All {
		section(check.Skip, "NOT JUDGED")
		section(check.Pass, "PASSED")
	}
	fmt.Fprintln(w)
	var parts []string
	for _, st := range []check.Status{check.Fail, check.Warn, check.Pass, check.Skip} {
		word := map[check.Status]string{check.Fail: "failed", check.Warn: "warnings", check.Pass: "passed", check.Skip: "not judged"}[st]
		part := fmt.Sprintf("%s %d %s", checkSymbols[st], counts[st], word)
		if counts[st] > 0 {
			part = paint(st, part) // a zero is not news
		}
		parts = append(parts, part)
	}
	line := strings.Join(parts, " · ")
	if !v.All && counts[check.Pass]+counts[check.Skip] > 0 {
		line += " (--all lists them)"
	}
	fmt.Fprintln(w, wrapText(line, width, "  "))
	if v.Strict && counts[check.Warn]+counts[check.Skip] > 0 {
		fmt.Fprintln(w, wrapText("--strict: the warnings and the rules not judged fail the run", width, ""))
	}
	if len(rep.Cut) > 0 {
		fmt.Fprintln(w, wrapText(fmt.Sprintf("the %s budget cut: %s; give more with --budget", rep.Budget, termsafe.Line(strings.Join(rep.Cut, "; "))), width, "  "))
	}
	if v.All && len(rep.Tools) > 0 {
		fmt.Fprintf(w, "\nTOOLS (%d)\n", len(rep.Tools))
		for _, t := range rep.Tools {
			seen := "not called: " + t.Why
			if t.Called {
				seen = "called with " + string(t.Args) + ": " + t.Seen
				if len(t.Answers) > 0 {
					seen += "; input answered with " + strings.Join(t.Answers, ", ")
				}
			}
			fmt.Fprintln(w, wrapText(termsafe.Line(termsafe.Cut(t.Name))+" "+t.Era+"  "+termsafe.Line(termsafe.Cut(seen)), width, "      "))
		}
	}
}

// checkFinding prints one result: the status, rule and title, then indented the section, what
// was seen, what the spec says and the tools it was judged on, each wrapped to width.
func checkFinding(w io.Writer, r check.Result, width int, paint func(check.Status, string) string) {
	const indent = "      "
	mark := paint(r.Status, checkSymbols[r.Status]+" "+checkWords[r.Status])
	if r.Status == check.Skip {
		mark = paint(r.Status, checkSymbols[r.Status])
	}
	fmt.Fprintln(w, wrapText(mark+" "+r.ID+" "+r.Era+"  "+r.Title, width, indent))
	if r.Status == check.Pass {
		return // a pass is one line: its rule
	}
	field := func(label, text string) {
		if text != "" {
			fmt.Fprintln(w, wrapText(indent+label+text, width, indent+strings.Repeat(" ", len(label))))
		}
	}
	field("spec: ", r.Section)
	seen := termsafe.Line(r.Seen)
	label := "seen: "
	if r.Status == check.Skip {
		label = "why:  "
	}
	field(label, seen)
	if r.Quote != "" {
		field("says: ", r.Quote)
	}
}

// wrapText wraps s at spaces to width columns (counted in runes: the report's own words and
// server text that termsafe made safe), continuing each further line with indent. A word
// longer than a line is cut.
func wrapText(s string, width int, indent string) string {
	ind := utf8.RuneCountInString(indent)
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(s, " ") {
		n := utf8.RuneCountInString(visible(word))
		if i > 0 {
			if col+1+n <= width {
				b.WriteByte(' ')
				col++
			} else {
				b.WriteString("\n" + indent)
				col = ind
			}
		}
		// A word longer than a whole line is cut across lines (never one carrying colour).
		for col == ind && n > width-ind && width > ind && !strings.Contains(word, "\x1b[") {
			runes := []rune(word)
			k := width - col
			b.WriteString(string(runes[:k]) + "\n" + indent)
			word, n = string(runes[k:]), n-k
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// visible is s without the escape sequences of colour (Paint's), which take no column.
func visible(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cutTo shortens a line to width columns, ending it with "…" when cut.
func cutTo(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}

// CheckTable prints the verdicts, then what was done with each tool.
func CheckTable(w io.Writer, rep *check.Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tERA\tRESULT\tRULE\tSPEC\tSEEN")
	for _, r := range rep.Results {
		seen := r.Seen
		if len(r.Tools) > 0 && r.Status == check.Pass {
			seen = "on " + strings.Join(r.Tools, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Era, r.Status, r.Title, r.Section, termsafe.Line(seen))
	}
	tw.Flush()
	// The words of the spec each failure and warning breaks, where the catalogue has them.
	first := true
	for _, r := range rep.Results {
		if r.Quote == "" {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s %s %s: the spec says %q\n", r.ID, r.Era, r.Status, r.Quote)
	}
	if len(rep.Tools) == 0 {
		return
	}
	fmt.Fprintln(w)
	toolTable(w, rep.Tools)
}

// toolTable prints what check did with each tool.
func toolTable(w io.Writer, tools []check.ToolReport) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tERA\tCALLED WITH\tSEEN")
	for _, t := range tools {
		with, seen := "-", "not called: "+t.Why
		if t.Args != nil {
			with = string(t.Args)
		}
		if t.Called {
			seen = t.Seen
			if len(t.Answers) > 0 {
				seen += "; input answered with " + strings.Join(t.Answers, ", ")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termsafe.Line(termsafe.Cut(t.Name)), t.Era, termsafe.Line(termsafe.Cut(with)), termsafe.Line(termsafe.Cut(seen)))
	}
	tw.Flush()
}

// The JUnit XML of a check report.
type (
	junitFailure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		Skipped   *junitFailure `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Cases     []junitCase `xml:"testcase"`
		SystemOut string      `xml:"system-out,omitempty"`
	}
	junitSuites struct {
		XMLName xml.Name     `xml:"testsuites"`
		Suites  []junitSuite `xml:"testsuite"`
	}
)

// JUnit renders the results as JUnit XML: one testsuite per era, a failure element for a
// failed check and a skipped element for a skipped one; warnings pass with their note. What
// was done with each tool goes to the suite's system-out.
func JUnit(server string, rep *check.Report) ([]byte, error) {
	var doc junitSuites
	idx := map[string]int{}
	at := func(era string) *junitSuite {
		i, ok := idx[era]
		if !ok {
			i = len(doc.Suites)
			idx[era] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: "mcptask check " + junitText(server) + " (MCP " + era + ")"})
		}
		return &doc.Suites[i]
	}
	for _, r := range rep.Results {
		s := at(r.Era)
		tc := junitCaseOf(r)
		switch {
		case tc.Failure != nil:
			s.Failures++
		case tc.Skipped != nil:
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	for _, t := range rep.Tools {
		s := at(t.Era)
		line := t.Name + ": "
		if t.Called {
			line += "called with " + string(t.Args) + ": " + t.Seen
			if len(t.Answers) > 0 {
				line += "; input answered with " + strings.Join(t.Answers, ", ")
			}
		} else {
			line += "not called: " + t.Why
		}
		s.SystemOut += junitText(line) + "\n"
	}
	if len(rep.Cut) > 0 && len(doc.Suites) > 0 {
		doc.Suites[0].SystemOut += junitText("the "+rep.Budget.String()+" budget cut: "+strings.Join(rep.Cut, "; ")) + "\n"
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// junitText is server text made fit for a CI report: a JUnit file is shown by CI pages and
// printed into job logs, so it keeps no escape sequence, C0 or C1 control, or bidi and
// invisible format character of the server's (termsafe.String; encoding/xml would keep C1 and
// bidi controls, which are valid XML characters).
func junitText(s string) string { return termsafe.String(s) }

// junitCaseOf is the testcase of one verdict.
func junitCaseOf(r check.Result) junitCase {
	r.Seen, r.Quote = junitText(r.Seen), junitText(r.Quote)
	tc := junitCase{Name: r.ID + " " + r.Title, Classname: r.Section}
	msg := fmt.Sprintf("%s (%s): %s", r.ID, r.Section, r.Seen)
	switch r.Status {
	case check.Fail:
		text := r.Title + "\n" + msg
		if r.Quote != "" {
			text += "\nthe spec says: " + r.Quote
		}
		tc.Failure = &junitFailure{Message: msg, Text: text}
	case check.Skip:
		tc.Skipped = &junitFailure{Message: r.Seen}
	case check.Warn:
		tc.SystemOut = "warning: " + msg
	}
	return tc
}
