package tui

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// field is one property of an elicitation's requestedSchema. Elicitation schemas are flat
// objects of primitives (C25/C26 schema PrimitiveSchemaDefinition): string (optionally with
// an enum or oneOf), number, integer, boolean, and the multi-select array of enum strings.
type field struct {
	name, title, desc, typ string
	enum                   []string // allowed values (single select, or each item of a multi-select)
	multi                  bool     // type "array": comma-separated values
	required               bool
	min, max               *float64 // number bounds
	minLen, maxLen         *int     // string length bounds
	input                  textinput.Model
}

// answered is a finished form: the response to send for one input key.
type answered struct {
	id, key  string
	response json.RawMessage
}

// inputForm answers one input request in the terminal. EXT §Task Update Requests: each
// inputRequests entry MUST be treated "exactly like the standalone request of the same kind:
// same trust model, same user-consent UX", so nothing is answered without a key press: a URL
// is shown and never opened, roots are shared only on y, and sampling is only ever declined.
type inputForm struct {
	id      string
	req     InputRequest
	fields  []field
	focus   int
	errMsg  string
	workDir string
	st      styles
}

func newInputForm(id string, req InputRequest, workDir string, st styles, width int) (*inputForm, tea.Cmd) {
	f := &inputForm{id: id, req: req, workDir: workDir, st: st}
	if req.Kind == "elicitation/create" && req.Mode != "url" {
		f.fields = parseSchema(req.Schema)
		if st.noColor {
			for i := range f.fields {
				f.fields[i].input.SetStyles(textinput.Styles{})
			}
		}
	}
	f.resize(width)
	if len(f.fields) > 0 {
		return f, f.fields[0].input.Focus()
	}
	return f, nil
}

// schemaProp is the part of a PrimitiveSchemaDefinition the form uses.
type schemaProp struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	OneOf       []struct {
		Const string `json:"const"`
	} `json:"oneOf"`
	Items struct {
		Enum  []string `json:"enum"`
		AnyOf []struct {
			Const string `json:"const"`
		} `json:"anyOf"`
	} `json:"items"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Default   any      `json:"default"`
}

// parseSchema reads requestedSchema into form fields in the order the server wrote the
// properties, which is the order it means them to be asked in.
func parseSchema(raw json.RawMessage) []field {
	var s struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []field
	for _, name := range propertyOrder(raw, s.Properties) {
		p := s.Properties[name]
		fl := field{
			name: name, title: p.Title, desc: p.Description, typ: p.Type, enum: p.Enum,
			required: slices.Contains(s.Required, name), min: p.Minimum, max: p.Maximum,
			minLen: p.MinLength, maxLen: p.MaxLength,
		}
		for _, o := range p.OneOf {
			fl.enum = append(fl.enum, o.Const)
		}
		if p.Type == "array" {
			fl.multi = true
			fl.enum = append(fl.enum, p.Items.Enum...)
			for _, o := range p.Items.AnyOf {
				fl.enum = append(fl.enum, o.Const)
			}
		}
		ti := textinput.New()
		ti.Prompt = ""
		ti.CharLimit = 4096
		ti.SetWidth(40)
		switch {
		case fl.multi:
			ti.Placeholder = "any of: " + strings.Join(fl.enum, ", ")
		case len(fl.enum) > 0:
			ti.Placeholder = strings.Join(fl.enum, " | ")
		case fl.typ == "boolean":
			ti.Placeholder = "yes | no"
		default:
			ti.Placeholder = fl.typ
		}
		switch d := p.Default.(type) {
		case string:
			ti.SetValue(d)
		case bool:
			ti.SetValue(map[bool]string{true: "yes", false: "no"}[d])
		case float64:
			ti.SetValue(strconv.FormatFloat(d, 'f', -1, 64))
		case []any:
			var parts []string
			for _, v := range d {
				if s, ok := v.(string); ok {
					parts = append(parts, s)
				}
			}
			ti.SetValue(strings.Join(parts, ", "))
		}
		fl.input = ti
		out = append(out, fl)
	}
	return out
}

// propertyOrder lists the keys of the schema's "properties" object in document order (a Go
// map forgets it). Keys it cannot place come last, sorted, so the form is always stable.
func propertyOrder(raw json.RawMessage, props map[string]schemaProp) []string {
	var order []string
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) == nil {
		dec := json.NewDecoder(strings.NewReader(string(top["properties"])))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				name, _ := tok.(string)
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
				if _, ok := props[name]; ok && !slices.Contains(order, name) {
					order = append(order, name)
				}
			}
		}
	}
	var rest []string
	for name := range props {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(order, rest...)
}

// value converts a field's text to its JSON value, or says what is wrong, so that the
// server is never sent a form its own schema rejects.
func (fl field) value() (any, bool, error) {
	v := strings.TrimSpace(fl.input.Value())
	if v == "" {
		if fl.required {
			return nil, false, fmt.Errorf("%s is required", fl.label())
		}
		return nil, false, nil
	}
	if fl.multi {
		var picked []string
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if len(fl.enum) > 0 && !slices.Contains(fl.enum, part) {
				return nil, false, fmt.Errorf("%s: %q is not one of: %s", fl.label(), part, strings.Join(fl.enum, ", "))
			}
			picked = append(picked, part)
		}
		return picked, true, nil
	}
	if len(fl.enum) > 0 && !slices.Contains(fl.enum, v) {
		return nil, false, fmt.Errorf("%s must be one of: %s", fl.label(), strings.Join(fl.enum, ", "))
	}
	switch fl.typ {
	case "number", "integer":
		return fl.number(v)
	case "boolean":
		switch strings.ToLower(v) {
		case "y", "yes", "true":
			return true, true, nil
		case "n", "no", "false":
			return false, true, nil
		}
		return nil, false, fmt.Errorf("%s must be yes or no", fl.label())
	}
	if n := len([]rune(v)); fl.minLen != nil && n < *fl.minLen {
		return nil, false, fmt.Errorf("%s must be at least %d characters", fl.label(), *fl.minLen)
	} else if fl.maxLen != nil && n > *fl.maxLen {
		return nil, false, fmt.Errorf("%s must be at most %d characters", fl.label(), *fl.maxLen)
	}
	return v, true, nil
}

// number converts the text v of a number or integer field, within the schema's bounds.
func (fl field) number(v string) (any, bool, error) {
	var n float64
	var out any
	if fl.typ == "integer" {
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%s must be a whole number", fl.label())
		}
		n, out = float64(i), i
	} else {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%s must be a number", fl.label())
		}
		n, out = f, f
	}
	if fl.min != nil && n < *fl.min {
		return nil, false, fmt.Errorf("%s must be at least %s", fl.label(), strconv.FormatFloat(*fl.min, 'f', -1, 64))
	}
	if fl.max != nil && n > *fl.max {
		return nil, false, fmt.Errorf("%s must be at most %s", fl.label(), strconv.FormatFloat(*fl.max, 'f', -1, 64))
	}
	return out, true, nil
}

func (fl field) label() string {
	if fl.title != "" {
		return safe(fl.title)
	}
	return safe(fl.name)
}

func respond(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

// key handles a key press. It returns the form (nil when closed) and, when the user chose an
// answer, what to send.
func (f *inputForm) key(msg tea.KeyPressMsg) (*inputForm, tea.Cmd, *answered) {
	k := msg.String()
	if k == "ctrl+b" {
		return nil, nil, nil // back, nothing sent
	}
	switch {
	case f.req.Kind == "roots/list":
		return f.rootsKey(k)
	case f.req.Kind == "sampling/createMessage" || (f.req.Kind != "elicitation/create" && f.req.Kind != ""):
		if k == "enter" || k == "esc" || k == "d" {
			return f.done(map[string]any{"action": "decline"})
		}
		return f, nil, nil
	case f.req.Mode == "url":
		switch k {
		case "a":
			return f.done(map[string]any{"action": "accept"})
		case "d":
			return f.done(map[string]any{"action": "decline"})
		case "esc":
			return f.done(map[string]any{"action": "cancel"})
		}
		return f, nil, nil
	}
	return f.formKey(msg, k)
}

// done closes the form with v as the answer.
func (f *inputForm) done(v any) (*inputForm, tea.Cmd, *answered) {
	return nil, nil, &answered{id: f.id, key: f.req.Key, response: respond(v)}
}

// rootsKey answers a roots/list request: yes shares the working directory, no shares none.
func (f *inputForm) rootsKey(k string) (*inputForm, tea.Cmd, *answered) {
	switch k {
	case "y", "Y":
		if f.workDir == "" {
			return f, nil, nil // nothing to share; only no is offered
		}
		return f.done(map[string]any{"roots": []any{map[string]any{"uri": fileURI(f.workDir), "name": filepath.Base(f.workDir)}}})
	case "n", "N", "esc":
		return f.done(map[string]any{"roots": []any{}})
	}
	return f, nil, nil
}

// formKey handles a key in form mode: moving between fields, submitting, or typing.
func (f *inputForm) formKey(msg tea.KeyPressMsg, k string) (*inputForm, tea.Cmd, *answered) {
	switch k {
	case "esc":
		return f.done(map[string]any{"action": "cancel"})
	case "ctrl+d":
		return f.done(map[string]any{"action": "decline"})
	case "tab", "down":
		f.move(1)
		return f, f.refocus(), nil
	case "shift+tab", "up":
		f.move(-1)
		return f, f.refocus(), nil
	case "enter", "ctrl+s":
		if k == "enter" && f.focus < len(f.fields)-1 {
			f.move(1)
			return f, f.refocus(), nil
		}
		return f.submit()
	}
	if len(f.fields) == 0 {
		return f, nil, nil
	}
	var cmd tea.Cmd
	f.fields[f.focus].input, cmd = f.fields[f.focus].input.Update(msg)
	f.errMsg = ""
	return f, cmd, nil
}

// submit accepts the form when every field is valid, or shows the first field's error.
func (f *inputForm) submit() (*inputForm, tea.Cmd, *answered) {
	content := map[string]any{}
	for _, fl := range f.fields {
		v, ok, err := fl.value()
		if err != nil {
			f.errMsg = err.Error()
			return f, nil, nil
		}
		if ok {
			content[fl.name] = v
		}
	}
	return f.done(map[string]any{"action": "accept", "content": content})
}

// resize fits the inputs to a terminal of width columns, leaving room for the labels.
func (f *inputForm) resize(width int) {
	for i := range f.fields {
		f.fields[i].input.SetWidth(min(max(width-lipgloss.Width(f.fields[i].label())-8, 8), 60))
	}
}

func (f *inputForm) move(d int) {
	if len(f.fields) == 0 {
		return
	}
	f.focus = (f.focus + d + len(f.fields)) % len(f.fields)
}

func (f *inputForm) refocus() tea.Cmd {
	var cmd tea.Cmd
	for i := range f.fields {
		if i == f.focus {
			cmd = f.fields[i].input.Focus()
		} else {
			f.fields[i].input.Blur()
		}
	}
	return cmd
}

// update passes non-key messages (cursor blink) to the focused input.
func (f *inputForm) update(msg tea.Msg) (*inputForm, tea.Cmd) {
	if len(f.fields) == 0 {
		return f, nil
	}
	var cmd tea.Cmd
	f.fields[f.focus].input, cmd = f.fields[f.focus].input.Update(msg)
	return f, cmd
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

func (f *inputForm) view(width int) string {
	st := f.st
	var b strings.Builder
	b.WriteString(st.title.Render(clip("task "+safe(f.id)+" asks ("+safe(f.req.Key)+")", width)) + "\n\n")
	if f.req.Message != "" {
		b.WriteString(clip(safe(f.req.Message), width*4) + "\n\n")
	}
	switch {
	case f.req.Kind == "roots/list" && f.workDir == "":
		b.WriteString("The server asks for your workspace roots. mcptask knows no working directory to share; press n to answer with none.\n")
	case f.req.Kind == "roots/list":
		b.WriteString(fmt.Sprintf("The server asks for your workspace roots. Share %s? (y/n)\n", clip(safe(f.workDir), width-30)))
	case f.req.Kind == "sampling/createMessage":
		b.WriteString("The server asks mcptask to run an LLM sampling request. mcptask declares no sampling\n" +
			"capability and never samples, so this request will be declined. Press enter to decline.\n")
	case f.req.Kind != "elicitation/create" && f.req.Kind != "":
		b.WriteString(fmt.Sprintf("mcptask cannot answer %s; press enter to decline.\n", safe(f.req.Kind)))
	case f.req.Mode == "url":
		b.WriteString("Open this URL yourself to continue (mcptask never opens it for you):\n  " + clip(safe(f.req.URL), width-2) + "\n\n")
		b.WriteString(st.key.Render("a") + " I will go there (accept)  " + st.key.Render("d") + " decline  " + st.key.Render("esc") + " cancel\n")
	default:
		for i, fl := range f.fields {
			mark := "  "
			if i == f.focus {
				mark = "> "
			}
			req := ""
			if fl.required {
				req = "*"
			}
			b.WriteString(fmt.Sprintf("%s%s%s: %s\n", mark, fl.label(), req, fl.input.View()))
			if fl.desc != "" && i == f.focus {
				b.WriteString(st.dim.Render("    "+clip(safe(fl.desc), width-4)) + "\n")
			}
		}
		if f.errMsg != "" {
			b.WriteString("\n" + st.err.Render(f.errMsg) + "\n")
		}
		b.WriteString("\n" + st.key.Render("enter") + " next/accept  " + st.key.Render("ctrl+d") + " decline  " + st.key.Render("esc") + " cancel  " + st.key.Render("ctrl+b") + " back\n")
	}
	return b.String()
}
