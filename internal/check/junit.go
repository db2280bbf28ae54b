package check

// This file renders a report as JUnit XML, the format CI systems read test results in.

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

// WriteJUnit writes the report as JUnit XML: one testsuite per era, a failure element for a
// failed check and a skipped element for a skipped one; warnings pass with their note. What
// was done with each tool goes to the suite's system-out, and what the budget cut to the first
// suite's. server names the server in the suites' names.
func (rep *Report) WriteJUnit(w io.Writer, server string) error {
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
		s.Cases = append(s.Cases, r.junitCase())
		s.Tests++
		switch r.Status {
		case Fail:
			s.Failures++
		case Skip:
			s.Skipped++
		}
	}
	for _, t := range rep.Tools {
		at(t.Era).SystemOut += t.junitLine() + "\n"
	}
	if len(rep.Cut) > 0 && len(doc.Suites) > 0 {
		doc.Suites[0].SystemOut += "the " + rep.Budget.String() + " budget cut: " + strings.Join(rep.Cut, "; ") + "\n"
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, xml.Header+string(b)+"\n")
	return err
}

// junitCase is one result as a test case.
func (r Result) junitCase() junitCase {
	tc := junitCase{Name: r.ID + " " + r.Title, Classname: r.Section}
	msg := fmt.Sprintf("%s (%s): %s", r.ID, r.Section, r.Seen)
	switch r.Status {
	case Fail:
		text := r.Title + "\n" + msg
		if r.Quote != "" {
			text += "\nthe spec says: " + r.Quote
		}
		tc.Failure = &junitFailure{Message: msg, Text: text}
	case Skip:
		tc.Skipped = &junitFailure{Message: r.Seen}
	case Warn:
		tc.SystemOut = "warning: " + msg
	}
	return tc
}

// junitLine says what was done with a tool, for a suite's system-out.
func (t ToolReport) junitLine() string {
	line := t.Name + ": "
	if !t.Called {
		return line + "not called: " + t.Why
	}
	line += "called with " + string(t.Args) + ": " + t.Seen
	if len(t.Answers) > 0 {
		line += "; input answered with " + strings.Join(t.Answers, ", ")
	}
	return line
}
