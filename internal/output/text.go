package output

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/mdterm"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// ToolResult writes a CallToolResult for a human: text content as text, other content
// summarised on a line of its own, structuredContent as indented JSON when there is no text.
// Every server string is stripped of terminal escapes.
func ToolResult(w io.Writer, tr *rpc.ToolResult) { toolResult(w, tr, nil) }

// toolResult is ToolResult, with a text that reads as Markdown drawn as a document when doc
// is set (a person's terminal).
func toolResult(w io.Writer, tr *rpc.ToolResult, doc *mdterm.Options) {
	wroteText := false
	for _, c := range tr.Content {
		switch c.Type {
		case "text":
			s := termsafe.String(c.Text)
			if doc != nil && mdterm.Detect(c.Text) {
				s = mdterm.Render(c.Text, *doc)
			}
			fmt.Fprint(w, s)
			if !strings.HasSuffix(s, "\n") {
				fmt.Fprintln(w)
			}
			wroteText = true
		case "image", "audio":
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, termsafe.Line(c.MimeType), len(c.Data)*3/4)
		case "resource_link":
			fmt.Fprintf(w, "[resource link %s %s]\n", termsafe.Line(c.URI), termsafe.Line(c.Name))
		case "resource":
			var r struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(c.Resource, &r)
			if r.Text != "" {
				fmt.Fprintln(w, termsafe.String(r.Text))
				wroteText = true
			} else {
				fmt.Fprintf(w, "[resource %s]\n", termsafe.Line(r.URI))
			}
		default:
			fmt.Fprintf(w, "[%s content]\n", termsafe.Line(c.Type))
		}
	}
	if !wroteText && len(tr.StructuredContent) > 0 {
		var v any
		if json.Unmarshal(tr.StructuredContent, &v) == nil {
			b, _ := json.MarshalIndent(v, "", "  ")
			fmt.Fprintln(w, termsafe.String(string(b)))
		}
	}
}

// Task writes the human form of one task, its status in style.
func Task(w io.Writer, t *rpc.Task, era rpc.Era, server string, now time.Time, style StatusStyle) {
	fmt.Fprintf(w, "Task:       %s\n", termsafe.Line(t.TaskID))
	fmt.Fprintf(w, "Status:     %s\n", style.Cell(termsafe.Line(string(t.Status))))
	if t.StatusMessage != "" {
		fmt.Fprintf(w, "Message:    %s\n", termsafe.Line(t.StatusMessage))
	}
	if !t.CreatedAt.IsZero() {
		fmt.Fprintf(w, "Created:    %s (%s ago)\n", t.CreatedAt.Format(time.RFC3339), human.Duration(now.Sub(t.CreatedAt)))
	}
	if !t.LastUpdatedAt.IsZero() {
		fmt.Fprintf(w, "Updated:    %s (%s ago)\n", t.LastUpdatedAt.Format(time.RFC3339), human.Duration(now.Sub(t.LastUpdatedAt)))
	}
	switch exp, ok := t.ExpiresAt(); {
	case t.TTL == nil:
		fmt.Fprintf(w, "TTL:        unlimited\n")
	case ok:
		fmt.Fprintf(w, "TTL:        %s (%s left)\n", human.Duration(*t.TTL), human.Duration(max(exp.Sub(now), 0)))
	default:
		fmt.Fprintf(w, "TTL:        %s\n", human.Duration(*t.TTL))
	}
	if t.PollInterval > 0 {
		fmt.Fprintf(w, "Poll every: %s\n", t.PollInterval)
	}
	if t.Error != nil {
		fmt.Fprintf(w, "Error:      %d %s\n", t.Error.Code, termsafe.Line(termsafe.Cut(t.Error.Message)))
	}
	for _, k := range SortedKeys(t.InputRequests) {
		fmt.Fprintf(w, "Needs input: %s %s\n", termsafe.Line(termsafe.Cut(k)), termsafe.Line(termsafe.Cut(InputSummary(t.InputRequests[k]))))
	}
	fmt.Fprintf(w, "Server:     %s (MCP %s)\n", termsafe.Line(server), era)
}

// InputSummary is a one-line description of an input request: its method and message.
func InputSummary(raw json.RawMessage) string {
	var r struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
			Mode    string `json:"mode"`
			URL     string `json:"url"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &r)
	s := r.Method
	if r.Params.Message != "" {
		s += ": " + r.Params.Message
	}
	if r.Params.URL != "" {
		s += " (" + r.Params.URL + ")"
	}
	return s
}

// DescribeInputs is a one-line description of the input requests reqs has under keys.
func DescribeInputs(reqs map[string]json.RawMessage, keys []string) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+InputSummary(reqs[k]))
	}
	return termsafe.Line(strings.Join(parts, "; ")) // the keys and messages are the server's
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
