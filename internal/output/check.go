package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// CheckReport prints the report of 'mcptask check': the Check document, or for a person the
// verdict table on stdout and the summary (and what the budget cut) on errOut.
func (p *Printer) CheckReport(errOut io.Writer, server string, rep *check.Report) error {
	counts := rep.Counts()
	doc := Check{Type: "check", Server: server, Results: rep.Results, Tools: rep.Tools,
		Budget:  CheckBudget{LimitMs: rep.Budget.Milliseconds(), UsedMs: rep.Used.Milliseconds(), Cut: rep.Cut},
		Summary: counts}
	return p.Print(doc, func(w io.Writer) error {
		CheckTable(w, rep)
		fmt.Fprintf(errOut, "%d passed, %d failed, %d warnings, %d skipped in %s (budget %s)\n", counts[check.Pass], counts[check.Fail], counts[check.Warn], counts[check.Skip],
			rep.Used.Round(100*time.Millisecond), rep.Budget)
		if len(rep.Cut) > 0 {
			fmt.Fprintf(errOut, "the %s budget cut: %s; give more with --budget\n", rep.Budget, termsafe.Line(strings.Join(rep.Cut, "; ")))
		}
		return nil
	})
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
			doc.Suites = append(doc.Suites, junitSuite{Name: "mcptask check " + server + " (MCP " + era + ")"})
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
		s.SystemOut += line + "\n"
	}
	if len(rep.Cut) > 0 && len(doc.Suites) > 0 {
		doc.Suites[0].SystemOut += "the " + rep.Budget.String() + " budget cut: " + strings.Join(rep.Cut, "; ") + "\n"
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// junitCaseOf is the testcase of one verdict.
func junitCaseOf(r check.Result) junitCase {
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
