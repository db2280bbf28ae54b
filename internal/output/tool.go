package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// One tool of a server (mcptask tools NAME): what it is, whether it runs as a task, and its
// arguments, read from its inputSchema.

// TaskSupport is whether a tool runs as a task, as the server's era says it: on 2025-11-25
// the tool's execution.taskSupport ("required", "optional", "forbidden"; MCP 2025-11-25,
// Tasks, §Tool-Level Negotiation), on 2026-07-28 "server-decides" (the tasks extension has no
// per-tool flag: the server decides call by call), and "none" in either era when the server
// declares no task support for tools/call (then no tool runs as a task, whatever it says).
func TaskSupport(t *rpc.Tool, era rpc.Era, serverTasks bool) string {
	switch {
	case !serverTasks:
		return "none"
	case era == rpc.EraModern:
		return "server-decides"
	}
	return t.TaskSupport()
}

// taskSupportText says what a TaskSupport value means for a call of the tool.
func taskSupportText(s string) string {
	switch s {
	case "required":
		return "required: always runs as a task"
	case "optional":
		return "optional: runs as a task when the client asks (mcptask does)"
	case "forbidden":
		return "forbidden: never runs as a task"
	case "server-decides":
		return "the server decides, call by call (MCP 2026-07-28 has no per-tool flag)"
	case "none":
		return "never: the server declares no task support for tools/call"
	}
	return termsafe.Line(s)
}

// taskSupportCell is the TASKS cell of the tools table.
func taskSupportCell(s string) string {
	switch s {
	case "server-decides":
		return "server decides"
	case "none":
		return "never"
	}
	return s
}

// ToolArgs reads the arguments of a tool's inputSchema in the order the schema lists them:
// name, type, whether it is required, its default and its description, as the server wrote
// them (the text view makes them safe). A schema that is not an object gives none.
func ToolArgs(schema json.RawMessage) []ToolArg {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return []ToolArg{}
	}
	names, props := orderedKeys(s.Properties)
	args := make([]ToolArg, 0, len(names))
	for i, name := range names {
		var p struct {
			Type  json.RawMessage   `json:"type"`
			Enum  []json.RawMessage `json:"enum"`
			Items *struct {
				Type json.RawMessage `json:"type"`
			} `json:"items"`
			Default     json.RawMessage `json:"default"`
			Description string          `json:"description"`
			Title       string          `json:"title"`
		}
		_ = json.Unmarshal(props[i], &p)
		a := ToolArg{Name: name, Type: schemaType(p.Type), Default: p.Default, Description: p.Description}
		if a.Description == "" {
			a.Description = p.Title
		}
		if a.Type == "array" && p.Items != nil {
			if it := schemaType(p.Items.Type); it != "" {
				a.Type = "array of " + it
			}
		}
		if len(p.Enum) > 0 {
			var vals []string
			for _, v := range p.Enum {
				vals = append(vals, compactJSON(v))
			}
			a.Enum = vals
		}
		for _, r := range s.Required {
			if r == name {
				a.Required = true
			}
		}
		args = append(args, a)
	}
	return args
}

// orderedKeys returns the keys of a JSON object and their values, in the order written.
func orderedKeys(obj json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		names, vals = append(names, name), append(vals, v)
	}
	return names, vals
}

// schemaType is a JSON Schema "type": a name, or names joined with "|".
func schemaType(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return strings.Join(many, "|")
	}
	return ""
}

// compactJSON is v on one line.
func compactJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// NewToolDoc is the tool document of t on server.
func NewToolDoc(t *rpc.Tool, era rpc.Era, server string, serverTasks bool) ToolDoc {
	return ToolDoc{Type: "tool", Era: era, Server: server, Name: t.Name, TaskSupport: TaskSupport(t, era, serverTasks),
		Arguments: ToolArgs(t.InputSchema), Tool: t.Raw}
}

// Text writes one tool for a person: its name, title, task support and description, then
// its arguments as a table, the descriptions wrapped to width columns (0: not wrapped).
func (d ToolDoc) Text(w io.Writer, t *rpc.Tool, width int) error {
	const label = 13 // "DESCRIPTION  "
	field := func(name, value string) {
		fmt.Fprintf(w, "%-*s%s\n", label, name, indentWrap(value, width, label))
	}
	field("NAME", termsafe.Line(termsafe.Cut(t.Name)))
	if t.Title != "" {
		field("TITLE", termsafe.Line(termsafe.Cut(t.Title)))
	}
	field("TASKS", taskSupportText(d.TaskSupport))
	if desc := strings.TrimSpace(t.Description); desc != "" {
		// A description is prose: its line breaks become spaces, and it is wrapped anew.
		field("DESCRIPTION", termsafe.Line(termsafe.Cut(strings.Join(strings.Fields(desc), " "))))
	}
	fmt.Fprintln(w)
	if len(d.Arguments) == 0 {
		fmt.Fprintln(w, "no arguments")
		return nil
	}
	rows := [][]string{{"ARGUMENT", "TYPE", "REQUIRED", "DEFAULT", "DESCRIPTION"}}
	for _, a := range d.Arguments {
		typ, desc := a.Type, strings.Join(strings.Fields(a.Description), " ")
		if len(a.Enum) > 0 {
			vals := make([]string, len(a.Enum))
			for i, v := range a.Enum {
				var s string
				if json.Unmarshal([]byte(v), &s) != nil {
					s = v
				}
				vals[i] = s
			}
			desc = strings.TrimPrefix(desc+"; one of: "+strings.Join(vals, ", "), "; ")
		}
		if typ == "" {
			typ = "any"
		}
		req, def := "no", "-"
		if a.Required {
			req = "yes"
		}
		if len(a.Default) > 0 {
			def = compactJSON(a.Default)
		}
		rows = append(rows, []string{termsafe.Line(termsafe.CutN(a.Name, 200)), termsafe.Line(Truncate(typ, 40)), req,
			termsafe.Line(Truncate(def, 24)), termsafe.Line(termsafe.Cut(desc))})
	}
	widths := make([]int, 4)
	for _, r := range rows {
		for i := range widths {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	indent := 0
	for _, n := range widths {
		indent += n + 2
	}
	// Too narrow for the descriptions beside the other columns: each goes under its row.
	below := width > 0 && width-indent < 20
	for i, r := range rows {
		var b strings.Builder
		for i := range widths {
			b.WriteString(r[i])
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(r[i])+2))
		}
		switch {
		case !below:
			b.WriteString(indentWrap(r[4], width, indent))
		case i > 0 && r[4] != "":
			line := strings.TrimRight(b.String(), " ")
			b.Reset()
			b.WriteString(line + "\n    " + indentWrap(r[4], width, 4))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	return nil
}

// indentWrap wraps s to the columns left of width after indent, continuation lines indented
// by indent; unwrapped when width is 0 or leaves fewer than 20 columns.
func indentWrap(s string, width, indent int) string {
	if width <= 0 || width-indent < 20 {
		return s
	}
	return strings.Join(wrapWords(s, width-indent), "\n"+strings.Repeat(" ", indent))
}

// wrapWords breaks s into lines of at most n runes at spaces; a word longer than n is cut.
func wrapWords(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > n {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:n])), string(r[n:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}
