package ci

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// Row is one task in a job summary.
type Row struct {
	TaskID string
	Tool   string
	Server string
	// Outcome is the task's end as mcptask names it: completed, failed, cancelled, expired,
	// input_required, timeout (still running), interrupted, error.
	Outcome string
	// Took is the time the task was followed (or lived, when its creation time is known).
	Took time.Duration
	// Message is the last status message, or the error.
	Message string
	// Resume is the command that picks the task up again, for one still running.
	Resume string
}

// maxSummaryRows bounds the table: GitHub takes at most 1 MiB of summary per step, and a table
// of thousands of rows helps nobody. The rest are counted.
const maxSummaryRows = 500

// outcomeMark gives each outcome a sign a reader finds at a glance.
var outcomeMark = map[string]string{
	"completed":      "✅",
	"failed":         "❌",
	"cancelled":      "🚫",
	"expired":        "⌛",
	"timeout":        "⏳",
	"input_required": "❓",
	"interrupted":    "⏸️",
	"error":          "⚠️",
}

// WriteSummary writes the Markdown table of rows under a heading naming command (call, watch,
// resume, result, cancel). Everything a server wrote is escaped for Markdown, so that it shows
// as text and cannot add links, images or HTML to the job's page.
func WriteSummary(w io.Writer, command string, rows []Row) error {
	var b strings.Builder
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Outcome]++
	}
	fmt.Fprintf(&b, "### mcptask %s: %d task%s", command, len(rows), plural(len(rows)))
	var parts []string
	for _, o := range []string{"completed", "failed", "cancelled", "expired", "input_required", "timeout", "interrupted", "error"} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], strings.ReplaceAll(o, "_", " ")))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	b.WriteString("\n\n| Task | Tool | Server | Outcome | Time | Last status message | Next step |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range rows {
		if i == maxSummaryRows {
			fmt.Fprintf(&b, "\n… and %d more task%s (see the job log, or `mcptask list`).\n", len(rows)-i, plural(len(rows)-i))
			break
		}
		mark := outcomeMark[r.Outcome]
		if mark != "" {
			mark += " "
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s%s | %s | %s | %s |\n",
			code(r.TaskID), cell(r.Tool), cell(r.Server), mark, cell(r.Outcome), took(r.Took), cell(r.Message), code(r.Resume))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// AppendSummary appends the table to the file GitHub names in $GITHUB_STEP_SUMMARY.
func AppendSummary(path, command string, rows []Row) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if err := WriteSummary(f, command, rows); err != nil {
		f.Close()
		return fmt.Errorf("job summary %s: %w", path, err)
	}
	return f.Close()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// mdEscape backslash-escapes Markdown's punctuation, and HTML's angle brackets as entities.
// ":", "." and "@" are escaped too: GitHub's Markdown (cmark-gfm's autolink extension) turns
// "https://…", "www.…" and "name@host" in plain text into links, and ":name:" into an emoji;
// an escaped character ends the text run that extension looks at, and shows as itself.
var mdEscape = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "{", `\{`, "}", `\}`, "[", `\[`, "]", `\]`,
	"(", `\(`, ")", `\)`, "#", `\#`, "+", `\+`, "!", `\!`, "|", `\|`, "~", `\~`,
	":", `\:`, ".", `\.`, "@", `\@`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// cell makes server text one escaped, redacted table cell.
func cell(s string) string {
	s = strings.TrimSpace(termsafe.Line(redact.Text(s)))
	if len([]rune(s)) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	if s == "" {
		return " "
	}
	return mdEscape.Replace(s)
}

// code shows s as inline code: a task id or a command to copy. A code span cannot be escaped
// from inside, so a backtick in s is replaced and the cell's pipes are escaped (GitHub splits
// table cells on | even inside code).
func code(s string) string {
	s = strings.TrimSpace(termsafe.Line(redact.Text(s)))
	if s == "" {
		return " "
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "|", `\|`)
	return "`" + s + "`"
}

// took is the table's cell for how long a task was followed: empty when that is not known.
func took(d time.Duration) string {
	if d <= 0 {
		return " "
	}
	return human.Duration(d)
}
