package cmd

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// CheckOptions are the inputs of `mcptask check`.
type CheckOptions struct {
	f        *Factory
	Tool     string
	ArgsJSON string
	JUnit    string
}

// NewCmdCheck returns `mcptask check`.
func NewCmdCheck(f *Factory) *cobra.Command {
	opts := &CheckOptions{f: f}
	c := &cobra.Command{
		Use:   "check [--tool NAME --args JSON]",
		Short: "Check a server's Tasks implementation against the spec, rule by rule",
		Long: `Exercise the server's Tasks implementation and report, rule by rule with the spec
section it comes from, what the server gets right and wrong: discovery and capability
declaration, the shape of CreateTaskResult and tasks/get, status transitions, unknown
task ids, tasks/result and tasks/list per era, cancel semantics, header validation,
isError semantics, TTL and poll interval reporting, task id entropy.

Both eras are checked when the server speaks both. The task tool is --tool (with
--args), or one the server offers that needs no arguments. A rule that needs a
behaviour the server's tools do not offer is reported as skipped, never as passed.

EXIT STATUS
  0 nothing failed (warnings allowed); 3 at least one check failed; 1 the server could
  not be reached.`,
		Example: `  mcptask check --server http://127.0.0.1:8080/mcp
  mcptask check --stdio 'node dist/index.js stdio' --tool simulate-research-query --args '{"topic":"x"}'
  mcptask check --server "$URL" --json --junit check.xml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runCheck(c.Context(), opts) },
	}
	c.Flags().StringVar(&opts.Tool, "tool", "", "the task tool to exercise")
	c.Flags().StringVar(&opts.ArgsJSON, "args", "", "its arguments as a JSON object, or @file.json")
	c.Flags().StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE` (for CI)")
	return c
}

func runCheck(ctx context.Context, opts *CheckOptions) error {
	f := opts.f
	args, err := parseArgsJSON(opts.ArgsJSON, f.IO.In)
	if err != nil {
		return err
	}
	if opts.ArgsJSON == "" {
		args = nil
	}
	ref, hdr, err := f.serverRef()
	if err != nil {
		return err
	}
	reached := false
	results := check.Run(ctx, check.Options{
		HTTP: ref.URL != "",
		Tool: opts.Tool, Args: args,
		Connect: func(ctx context.Context, era string) (*rpc.Client, error) {
			c, _, err := f.connectRef(ctx, ref, hdr, rpc.ClientOptions{Protocol: era})
			reached = reached || err == nil
			return c, err
		},
	})
	if !reached {
		return fmt.Errorf("check %s: the server could not be reached in either era (%s)", ref, results[0].Seen)
	}
	if opts.JUnit != "" {
		if err := writeJUnit(opts.JUnit, ref.String(), results); err != nil {
			return err
		}
	}
	counts := map[check.Status]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	if f.Global.JSON {
		if err := writeJSON(f.IO.Out, map[string]any{"type": "check", "server": ref.String(), "results": results, "summary": counts}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CHECK\tERA\tRESULT\tRULE\tSPEC\tSEEN")
		for _, r := range results {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Era, r.Status, r.Title, r.Section, termsafe.Line(r.Seen))
		}
		tw.Flush()
		fmt.Fprintf(f.IO.ErrOut, "%d passed, %d failed, %d warnings, %d skipped\n", counts[check.Pass], counts[check.Fail], counts[check.Warn], counts[check.Skip])
	}
	if check.Failed(results) {
		return &ExitError{Code: ExitTaskFailed, Err: fmt.Errorf("%d check(s) failed", counts[check.Fail]), Silent: !f.Global.JSON}
	}
	return nil
}

// writeJUnit writes the results as JUnit XML: one testsuite per era, a failure element for a
// failed check and a skipped element for a skipped one; warnings pass with their note.
func writeJUnit(path, server string, results []check.Result) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *failure `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []suite  `xml:"testsuite"`
	}
	var doc suites
	idx := map[string]int{}
	for _, r := range results {
		i, ok := idx[r.Era]
		if !ok {
			i = len(doc.Suites)
			idx[r.Era] = i
			doc.Suites = append(doc.Suites, suite{Name: "mcptask check " + server + " (MCP " + r.Era + ")"})
		}
		s := &doc.Suites[i]
		tc := testcase{Name: r.ID + " " + r.Title, Classname: r.Section}
		switch r.Status {
		case check.Fail:
			tc.Failure = &failure{Message: r.Seen, Text: r.Seen}
			s.Failures++
		case check.Skip:
			tc.Skipped = &failure{Message: r.Seen}
			s.Skipped++
		case check.Warn:
			tc.SystemOut = "warning: " + r.Seen
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}
