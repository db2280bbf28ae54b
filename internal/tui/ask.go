package tui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
)

// AskModel asks a list of questions, before any task exists: the 2026-07-28 multi round-trip
// input_required answer of tools/call (MCP 2026-07-28, Multi Round-Trip Requests), which is
// answered by calling the tool again with the responses. It is the watch view's form, every
// question in it.
type AskModel struct {
	title     string
	inputs    []InputRequest
	form      *inputForm
	responses map[string]json.RawMessage
	width     int
	cancelled bool
	first     tea.Cmd
}

// NewAsk builds the questionnaire. title names what asks (the tool).
func NewAsk(title string, inputs []InputRequest, opts Options) AskModel {
	m := AskModel{title: title, inputs: inputs, responses: map[string]json.RawMessage{}, width: 80}
	if len(inputs) > 0 {
		// Init cannot change the model, so the form is made here.
		m.form, m.first = newInputForm(title, inputs, opts.WorkDir, newStyles(opts.NoColor), m.width, 0)
		m.form.who = "tool " + safe(title)
	}
	return m
}

// Responses returns the answers by key once every question was answered; nil if the user left.
func (m AskModel) Responses() map[string]json.RawMessage {
	if m.cancelled || len(m.responses) < len(m.inputs) {
		return nil
	}
	return m.responses
}

// Init opens the form.
func (m AskModel) Init() tea.Cmd {
	if len(m.inputs) == 0 {
		return tea.Quit
	}
	return m.first
}

// Update handles keys: ctrl+c, and esc, which has nothing to go back to, leave without
// answering; a finished form ends the questionnaire.
func (m AskModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.form == nil {
		return m, nil
	}
	var f *inputForm
	var cmd tea.Cmd
	var done []answered
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
		m.form.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			m.cancelled = true
			return m, tea.Quit
		}
		f, cmd, done = m.form.key(msg)
	default:
		f, cmd, done = m.form.update(msg)
	}
	if f != nil {
		m.form = f
		return m, cmd
	}
	for _, a := range done {
		m.responses[a.key] = a.response
	}
	m.cancelled = len(done) == 0 // esc: back, with nothing to go back to
	return m, tea.Quit
}

// View draws the form.
func (m AskModel) View() tea.View {
	if m.form == nil {
		return tea.NewView("")
	}
	return tea.NewView(m.form.view(m.width))
}
