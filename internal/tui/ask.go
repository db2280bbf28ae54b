package tui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
)

// AskModel asks a list of questions one after another, before any task exists: the 2026-07-28
// multi round-trip input_required answer of tools/call (C26-MRTR), which is answered by
// calling the tool again with the responses. It uses the same forms as the watch view.
type AskModel struct {
	title     string
	inputs    []InputRequest
	i         int
	form      *inputForm
	responses map[string]json.RawMessage
	st        styles
	workDir   string
	width     int
	cancelled bool
	first     tea.Cmd
}

// NewAsk builds the questionnaire. title names what asks (the tool).
func NewAsk(title string, inputs []InputRequest, opts Options) AskModel {
	m := AskModel{title: title, inputs: inputs, responses: map[string]json.RawMessage{}, st: newStyles(opts.NoColor), workDir: opts.WorkDir, width: 80}
	if len(inputs) > 0 {
		m.first = m.open() // Init cannot change the model, so the first form is made here
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

// Init opens the first form.
func (m AskModel) Init() tea.Cmd {
	if len(m.inputs) == 0 {
		return tea.Quit
	}
	return m.first
}

func (m *AskModel) open() tea.Cmd {
	f, cmd := newInputForm(m.title, m.inputs[m.i], m.workDir, m.st, m.width)
	m.form = f
	return cmd
}

// Update handles keys: ctrl+c leaves without answering; a finished form moves to the next.
func (m AskModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			m.cancelled = true
			return m, tea.Quit
		}
		f, cmd, done := m.form.key(msg)
		if done != nil {
			m.responses[done.key] = done.response
			m.i++
			if m.i == len(m.inputs) {
				return m, tea.Quit
			}
			return m, m.open()
		}
		if f == nil { // back without answering: there is nothing to go back to
			m.cancelled = true
			return m, tea.Quit
		}
		m.form = f
		return m, cmd
	default:
		if m.form != nil {
			var cmd tea.Cmd
			m.form, cmd = m.form.update(msg)
			return m, cmd
		}
	}
	return m, nil
}

// View draws the current form.
func (m AskModel) View() tea.View {
	if m.form == nil {
		return tea.NewView("")
	}
	return tea.NewView(m.form.view(m.width))
}
