package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcptask/mcptask/internal/elicit"
)

// The form is built on Charm's huh: its select, multi-select and input fields and their keys
// are the library's. What is ours is what the fields are made of (the
// server's requestedSchema, read by internal/elicit, whose check the command line's --answer
// uses as well), that every server string passes termsafe before the library sees it, and the
// keys around the form: esc goes back sending nothing, ctrl+d declines and ctrl+x cancels,
// each after a y/n confirmation.

// answered is one question of a finished form: the response to send for its input key.
type answered struct {
	id, key  string
	response json.RawMessage
}

// slot is where the huh field of one schema property keeps its value.
type slot struct {
	f    elicit.Field
	text string   // an input's text; a select's chosen value ("" leaves the field out)
	many []string // a multi-select's values
}

// question is one open input request of the form, with the slots of its fields.
type question struct {
	req   InputRequest
	slots []*slot
	yes   bool // a URL elicitation's "I will go there", a roots request's "share"
}

// inputForm answers every open question of one task in one form, in the server's order. MCP
// 2026-07-28, Tasks, §Task Update Requests: each inputRequests entry MUST be treated "exactly
// like the standalone request of the same kind: same trust model, same user-consent UX", so
// nothing is answered without a key press: a URL is shown and never opened, roots are shared
// only when chosen, and sampling is only ever declined.
type inputForm struct {
	id      string
	who     string // what asks: "task ID", or "tool NAME" before a task exists
	qs      []*question
	form    *huh.Form
	last    huh.Field // where enter accepts the form
	confirm string    // "decline" or "cancel" while asking y/n
	errMsg  string
	workDir string
	st      styles
}

// newInputForm makes the form for the open questions reqs of task id (for a tool that asks
// before it starts, id names the tool), for a terminal of width by height cells (0: not known
// yet): one list of fields, each question's under a note with its key and message, so that
// enter moves through them all and accepts at the last.
func newInputForm(id string, reqs []InputRequest, workDir string, st styles, width, height int) (*inputForm, tea.Cmd) {
	f := &inputForm{id: id, who: "task " + safe(id), workDir: workDir, st: st}
	var fields []huh.Field
	for _, req := range reqs {
		q := &question{req: req}
		f.qs = append(f.qs, q)
		head := safe(req.Key)
		if head == "" {
			head = "question"
		}
		if req.Message != "" {
			head += ": " + safe(req.Message)
		}
		fields = append(fields, huh.NewNote().Title(head))
		fields = append(fields, f.fields(q)...)
	}
	km := huh.NewDefaultKeyMap()
	// ctrl+d declines the form; the select lists page with pgup and pgdown instead.
	km.Select.HalfPageDown = key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdown", "½ page down"))
	km.Select.HalfPageUp = key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "½ page up"))
	km.MultiSelect.HalfPageDown, km.MultiSelect.HalfPageUp = km.Select.HalfPageDown, km.Select.HalfPageUp
	if len(fields) == 0 {
		fields = append(fields, huh.NewNote().Title("nothing is asked"))
	}
	f.last = fields[len(fields)-1]
	f.form = huh.NewForm(huh.NewGroup(fields...)).WithShowHelp(false).WithTheme(formTheme(st)).WithKeyMap(km)
	f.form.SubmitCmd, f.form.CancelCmd = nil, nil // the view, not the library, ends the program
	cmd := f.form.Init()
	f.resize(width, height)
	return f, cmd
}

// fields are the fields that ask q. Every question has at least one that waits for a key
// (a select of one choice where there is nothing to choose), so that nothing is answered
// without one.
func (f *inputForm) fields(q *question) []huh.Field {
	req := q.req
	only := func(title, desc, choice string) huh.Field {
		return huh.NewSelect[bool]().Title(title).Description(desc).Options(huh.NewOption(choice, false)).Value(&q.yes)
	}
	switch {
	case req.Kind == "roots/list" && f.workDir == "":
		return []huh.Field{only("The server asks for your workspace roots",
			"mcptask knows no working directory to share; it answers with none.", "share none")}
	case req.Kind == "roots/list":
		return []huh.Field{huh.NewSelect[bool]().Title("The server asks for your workspace roots").
			Options(huh.NewOption("share none", false), huh.NewOption("share "+safe(f.workDir), true)).Value(&q.yes)}
	case req.Kind == "elicitation/create" && req.Mode == "url":
		return []huh.Field{huh.NewSelect[bool]().Title("Open this URL yourself; mcptask never opens it for you").
			Description(safe(req.URL)).
			Options(huh.NewOption("I will not (decline)", false), huh.NewOption("I will go there (accept)", true)).Value(&q.yes)}
	case req.Kind == "elicitation/create" || req.Kind == "":
		var out []huh.Field
		for _, fl := range elicit.Fields(req.Schema) {
			s := &slot{f: fl}
			q.slots = append(q.slots, s)
			out = append(out, s.field())
		}
		if len(out) == 0 {
			out = append(out, only("Nothing to fill in", "", "accept"))
		}
		return out
	case req.Kind == "sampling/createMessage":
		return []huh.Field{only("The server asks for an LLM sampling request",
			"mcptask declares no sampling capability and never samples, so it is declined.", "decline")}
	}
	return []huh.Field{only("mcptask cannot answer "+safe(req.Kind), "", "decline")}
}

// field makes the huh field for one schema property: a select for an enum and for a boolean,
// a multi-select for an array, an input checked by elicit for the rest. Its value starts at
// the schema's default (SEP-1034).
func (s *slot) field() huh.Field {
	fl := s.f
	title := safe(fl.Label())
	if fl.Required {
		title += " (required)"
	}
	desc := safe(fl.Description)
	if r := bounds(fl); r != "" && (fl.Type == "number" || fl.Type == "integer") {
		desc = strings.TrimSpace(desc + " (" + strings.TrimSpace(r) + ")")
	}
	optional := !fl.Required && fl.Default == nil
	switch {
	case fl.Type == "array":
		opts := options(fl)
		for _, d := range asList(fl.Default) {
			if slices.Contains(fl.Enum, d) {
				s.many = append(s.many, d)
			}
		}
		// huh v2.0.3 sizes a multi-select without a height one line short per line of title
		// and description; its height is given whole, title and description included.
		h := len(opts) + 1
		if desc != "" {
			h++
		}
		return huh.NewMultiSelect[string]().Title(title).Description(desc).Options(opts...).Value(&s.many).
			Height(h).Validate(func(v []string) error { return s.check(v) })
	case fl.Type == "boolean":
		opts := []huh.Option[string]{huh.NewOption("yes", "true"), huh.NewOption("no", "false")}
		if optional {
			opts = append(opts, huh.NewOption("(leave out)", ""))
			s.text = ""
		}
		if d, ok := fl.Default.(bool); ok {
			s.text = strconv.FormatBool(d)
		} else if !optional {
			s.text = "false" // a stray enter confirms nothing
		}
		return huh.NewSelect[string]().Title(title).Description(desc).Options(opts...).Value(&s.text)
	case len(fl.Enum) > 0:
		opts := options(fl)
		if optional {
			opts = append(opts, huh.NewOption("(leave out)", ""))
		}
		if d, ok := fl.Default.(string); ok && slices.Contains(fl.Enum, d) {
			s.text = d
		} else if !optional {
			s.text = fl.Enum[0]
		}
		return huh.NewSelect[string]().Title(title).Description(desc).Options(opts...).Value(&s.text)
	}
	switch d := fl.Default.(type) {
	case string:
		s.text = safe(d) // what is sent is what the person saw
	case float64:
		s.text = strconv.FormatFloat(d, 'f', -1, 64)
	}
	in := huh.NewInput().Title(title).Description(desc).Value(&s.text).CharLimit(4096).
		Placeholder(placeholder(fl)).Validate(func(text string) error {
		v, ok, err := s.parse(text)
		if err != nil || !ok {
			return err
		}
		return s.check(v)
	})
	return in
}

// placeholder hints at what an input takes, in words mcptask chose: never a string of the
// server's, which could carry escapes into a field the library draws as it is.
func placeholder(fl elicit.Field) string {
	var p string
	switch fl.Type {
	case "integer":
		p = "a whole number"
	case "number":
		p = "a number"
	default:
		p = "text"
	}
	return p + bounds(fl)
}

// bounds words a number field's minimum and maximum, " from 1 to 10"; "" without.
func bounds(fl elicit.Field) string {
	switch {
	case fl.Min != nil && fl.Max != nil:
		return fmt.Sprintf(" from %s to %s", num(*fl.Min), num(*fl.Max))
	case fl.Min != nil:
		return " from " + num(*fl.Min)
	case fl.Max != nil:
		return " up to " + num(*fl.Max)
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// options lists an enum's values, each shown by its name when the schema gives one.
func options(fl elicit.Field) []huh.Option[string] {
	var out []huh.Option[string]
	for i, v := range fl.Enum {
		label := v
		if i < len(fl.EnumNames) && fl.EnumNames[i] != "" {
			label = fl.EnumNames[i]
		}
		out = append(out, huh.NewOption(safe(label), v))
	}
	return out
}

func asList(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// parse reads the slot's value as the JSON it is sent as; false when the field is left out.
func (s *slot) parse(text string) (any, bool, error) {
	fl := s.f
	switch {
	case fl.Type == "array":
		if len(s.many) == 0 && !fl.Required {
			return nil, false, nil
		}
		out := make([]any, len(s.many))
		for i, v := range s.many {
			out[i] = v
		}
		return out, true, nil
	case fl.Type == "boolean":
		if text == "" {
			return nil, false, nil
		}
		return text == "true", true, nil
	}
	if strings.TrimSpace(text) == "" {
		if fl.Required {
			return nil, false, shown(&elicit.FieldError{Field: fl.Name, Problem: "is required"})
		}
		return nil, false, nil
	}
	v, err := fl.Text(text)
	return v, err == nil, shown(err)
}

// check is elicit's judgement of v, the one --answer gets too, made safe to show.
func (s *slot) check(v any) error {
	if l, ok := v.([]string); ok {
		items := make([]any, len(l))
		for i, x := range l {
			items[i] = x
		}
		v = items
	}
	return shown(s.f.Check(v))
}

// shown makes an error's text safe for the terminal (it names the server's field).
func shown(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(safe(err.Error()))
}

// formTheme is huh's base theme in the view's colours; with NoColor, plain.
func formTheme(st styles) huh.Theme {
	return huh.ThemeFunc(func(dark bool) *huh.Styles {
		t := huh.ThemeBase(dark)
		t.Group.Title = st.title
		t.Group.Description = st.dim
		for _, fs := range []*huh.FieldStyles{&t.Focused, &t.Blurred} {
			fs.Title = st.label
			fs.Description = st.dim
			fs.NoteTitle = st.title
			fs.ErrorIndicator = st.err.SetString(" ✗")
			fs.ErrorMessage = st.err
			fs.SelectSelector = st.selected.SetString("> ")
			fs.MultiSelectSelector = st.selected.SetString("> ")
			if st.noColor {
				fs.TextInput.Placeholder = lipgloss.NewStyle()
			}
		}
		t.Focused.Title = st.selected
		// A select that is not focused still marks its choice, so the whole form can be read.
		t.Blurred.MultiSelectSelector = lipgloss.NewStyle().SetString("  ")
		return t
	})
}

// key handles a key press: esc goes back sending nothing, ctrl+d and ctrl+x ask to decline or
// cancel every question, the rest is the form's. It returns the form (nil when closed) and the
// answers once the user chose them.
func (f *inputForm) key(msg tea.KeyPressMsg) (*inputForm, tea.Cmd, []answered) {
	if f.confirm != "" {
		action := f.confirm
		f.confirm = ""
		if k := msg.String(); k == "y" || k == "Y" {
			return f.all(action)
		}
		return f, nil, nil
	}
	switch msg.String() {
	case "esc":
		return nil, nil, nil // back: nothing sent, the task keeps waiting
	case "ctrl+d":
		f.confirm = "decline"
		return f, nil, nil
	case "ctrl+x":
		f.confirm = "cancel"
		return f, nil, nil
	}
	return f.update(msg)
}

// update passes a message to the form, and reads the answers when the form is complete.
func (f *inputForm) update(msg tea.Msg) (*inputForm, tea.Cmd, []answered) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		f.errMsg = ""
	}
	_, cmd := f.form.Update(msg)
	if f.form.State != huh.StateCompleted {
		return f, cmd, nil
	}
	out, err := f.accept()
	if err != nil {
		// The fields check themselves as they are left, so this is all but unreachable; it
		// is the last word before sending. huh cannot reopen a finished form: what is left is
		// the error, esc, decline and cancel.
		f.errMsg = safe(err.Error())
		return f, cmd, nil
	}
	return nil, nil, out
}

// accept makes the answer of every question from the form's values.
func (f *inputForm) accept() ([]answered, error) {
	var out []answered
	for _, q := range f.qs {
		var v any
		switch {
		case q.req.Kind == "roots/list":
			v = map[string]any{"roots": []any{}}
			if q.yes && f.workDir != "" {
				v = map[string]any{"roots": []any{map[string]any{"uri": fileURI(f.workDir), "name": filepath.Base(f.workDir)}}}
			}
		case q.req.Kind == "elicitation/create" && q.req.Mode == "url":
			v = map[string]any{"action": map[bool]string{true: "accept", false: "decline"}[q.yes]}
		case q.req.Kind == "elicitation/create" || q.req.Kind == "":
			content := map[string]any{}
			for _, s := range q.slots {
				val, ok, err := s.parse(s.text)
				if err != nil {
					return nil, err
				}
				if ok {
					content[s.f.Name] = val
				}
			}
			raw, _ := json.Marshal(content)
			if err := elicit.Check(q.req.Schema, raw); err != nil {
				return nil, err
			}
			v = map[string]any{"action": "accept", "content": content}
		default:
			v = map[string]any{"action": "decline"}
		}
		out = append(out, answered{id: f.id, key: q.req.Key, response: respond(v)})
	}
	return out, nil
}

// all answers every question with action, "decline" or "cancel": roots with none, sampling
// and what mcptask cannot answer declined.
func (f *inputForm) all(action string) (*inputForm, tea.Cmd, []answered) {
	var out []answered
	for _, q := range f.qs {
		var v any = map[string]any{"action": "decline"}
		switch q.req.Kind {
		case "roots/list":
			v = map[string]any{"roots": []any{}}
		case "elicitation/create", "":
			v = map[string]any{"action": action}
		}
		out = append(out, answered{id: f.id, key: q.req.Key, response: respond(v)})
	}
	return nil, nil, out
}

func respond(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

// resize fits the form to a terminal of width by height cells (0: not known), leaving room
// for the lines around it; the library scrolls the fields within.
func (f *inputForm) resize(width, height int) {
	if height <= 0 {
		height = 1000
	}
	f.form.WithWidth(min(max(width, 20), 100))
	f.form.Update(tea.WindowSizeMsg{Width: width, Height: max(height-7, 5)})
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

func (f *inputForm) view(width int) string {
	st := f.st
	var b strings.Builder
	what, the := "a question", "the question"
	if len(f.qs) > 1 {
		what, the = strconv.Itoa(len(f.qs))+" questions", "the "+strconv.Itoa(len(f.qs))+" questions"
	}
	b.WriteString(st.title.Render(clip(f.who+" asks "+what, width)) + "\n\n")
	b.WriteString(f.form.View() + "\n")
	if f.errMsg != "" {
		b.WriteString("\n" + st.err.Render(f.errMsg) + "\n")
	}
	b.WriteString("\n")
	switch f.confirm {
	case "decline", "cancel":
		// The header names the task; the prompt stays short so that (y/n) fits at 60 columns.
		b.WriteString(st.warn.Render(clip(fmt.Sprintf("%s %s? (y/n)", map[string]string{"decline": "Decline", "cancel": "Cancel"}[f.confirm], the), width)) + "\n")
	default:
		enter := " next  "
		if f.form.GetFocusedField() == f.last {
			enter = " accept  "
		}
		b.WriteString(st.key.Render("enter") + enter + st.key.Render("ctrl+d") + " decline  " +
			st.key.Render("ctrl+x") + " cancel  " + st.key.Render("esc") + " back\n")
	}
	return b.String()
}
