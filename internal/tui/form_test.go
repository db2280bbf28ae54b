package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcptask/mcptask/internal/elicit"
)

// deploySchema asks for a number with bounds, an enum with titles and a boolean, in that
// order (not sorted: the server's order is the form's).
var deploySchema = json.RawMessage(`{"type":"object","properties":{
	"replicas":{"type":"integer","title":"Replicas","description":"how many copies to run","minimum":1,"maximum":10,"default":3},
	"environment":{"type":"string","title":"Environment","oneOf":[{"const":"staging","title":"Staging"},{"const":"prod","title":"Production"}]},
	"dryRun":{"type":"boolean","title":"Dry run","default":true}},
	"required":["replicas","environment"]}`)

func deployAsk(key string) InputRequest {
	return InputRequest{Key: key, Kind: "elicitation/create", Mode: "form", Message: "Deploy the release?", Schema: deploySchema}
}

// press sends keys to the form one by one, as the program would; the form must stay open.
func press(t *testing.T, f *inputForm, keys ...tea.KeyPressMsg) *inputForm {
	t.Helper()
	for _, k := range keys {
		var done []answered
		f, _, done = f.key(k)
		if f == nil || done != nil {
			t.Fatalf("key %q closed the form (answers %v)", k.String(), done)
		}
	}
	return f
}

func typed(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

var (
	enter     = tea.KeyPressMsg{Code: tea.KeyEnter}
	esc       = tea.KeyPressMsg{Code: tea.KeyEscape}
	backspace = tea.KeyPressMsg{Code: tea.KeyBackspace}
	ctrlD     = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	ctrlX     = tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl}
)

// TestFormGoldens: the form at 60, 100 and 140 columns, as it opens, after a number out of
// range, and asking before it declines. A person sees the task and its question's key and
// message; "Replicas (required)" focused (the bar at the left) with its description, its
// range "(from 1 to 10)" and the default 3 typed in; "Environment (required)" with Staging marked and Production below it;
// "Dry run" with yes marked; the keys at the bottom. After 42 and enter the bar stays on
// Replicas and `field "replicas" must be at most 10` stands above the keys; after ctrl+d the
// keys give way to "Decline the question? (y/n)".
func TestFormGoldens(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		var all strings.Builder
		frame := func(name string, f *inputForm) {
			v := f.view(width)
			for i, line := range strings.Split(ansi.Strip(v), "\n") {
				if w := ansi.StringWidth(line); w > width {
					t.Errorf("%s at %d columns: line %d is %d wide: %q", name, width, i, w, line)
				}
			}
			fmt.Fprintf(&all, "==== %s\n%s", name, v)
		}
		f, _ := newInputForm("task-1", []InputRequest{deployAsk("deploy")}, "/work", newStyles(true), width, 40)
		frame("open", f)
		f = press(t, f, append(append([]tea.KeyPressMsg{backspace}, typed("42")...), enter)...)
		frame("out of range", f)
		f = press(t, f, ctrlD)
		frame("decline?", f)
		golden(t, fmt.Sprintf("form-%d", width), all.String())

		for _, want := range []string{"deploy: Deploy the release?", "> Staging", "> yes", "> 42", "(from 1 to 10)", `field "replicas" must be at most 10`, "enter next", "Decline the question? (y/n)"} {
			if !strings.Contains(all.String(), want) {
				t.Errorf("%d columns: the frames do not say %q", width, want)
			}
		}
	}
}

// TestFormErrorColour: a value the form refuses is said in the view's error colour.
func TestFormErrorColour(t *testing.T) {
	st := newStyles(false)
	f, _ := newInputForm("task-1", []InputRequest{deployAsk("deploy")}, "/work", st, 100, 40)
	f = press(t, f, append(append([]tea.KeyPressMsg{backspace}, typed("0")...), enter)...)
	if msg := `field "replicas" must be at least 1`; !strings.Contains(f.view(100), st.err.Render(msg)) {
		t.Errorf("the error is not in the error colour %q:\n%q", st.err.Render(msg), f.view(100))
	}
}

// TestFormRefusesAsAnswerDoes: the message the form shows for a number out of range is the
// one internal/elicit gives, which is what --answer reports for the same value (see
// answerflags' TestAnswerOutOfRange, which gives that value on the command line).
func TestFormRefusesAsAnswerDoes(t *testing.T) {
	want := elicit.Check(deploySchema, json.RawMessage(`{"replicas":42,"environment":"prod"}`))
	if want == nil || want.Error() != `field "replicas" must be at most 10` {
		t.Fatalf("elicit: %v", want)
	}
	f, _ := newInputForm("t", []InputRequest{deployAsk("deploy")}, "", newStyles(true), 100, 40)
	f = press(t, f, append(append([]tea.KeyPressMsg{backspace}, typed("42")...), enter)...)
	if v := ansi.Strip(f.view(100)); !strings.Contains(v, want.Error()) {
		t.Errorf("the form does not refuse 42 with %q:\n%s", want, v)
	}
}

// TestFormDefaultsSEP1034: every primitive kind's default (SEP-1034) is pre-filled, and a form
// accepted as it stands answers with exactly those defaults, typed as the schema says. The
// schema is the one of the official conformance scenario elicitation-sep1034-client-defaults.
func TestFormDefaultsSEP1034(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","description":"User age","default":30},
		"score":{"type":"number","description":"User score","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`)
	f, _ := newInputForm("t", []InputRequest{{Key: "k", Kind: "elicitation/create", Schema: schema}}, "", newStyles(true), 100, 40)
	got, err := f.accept()
	if err != nil || len(got) != 1 {
		t.Fatalf("accept: %v %v", got, err)
	}
	if want := `{"action":"accept","content":{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}}`; string(got[0].response) != want {
		t.Errorf("answer %s, want the defaults %s", got[0].response, want)
	}
}

// waiting is a model following task t, which asks the questions inputs.
func waiting(f *fakeEngine, inputs ...InputRequest) Model {
	s := Snapshot{TaskID: "t", Status: "input_required", CreatedAt: t0, Inputs: inputs}
	m := New(f, nil, []string{"t"}, map[string]Snapshot{"t": s}, Options{Now: func() time.Time { return t0 }, NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 100, Height: 40})
	return m
}

// TestFormEscGoesBack: esc closes the form and sends nothing: no answer, no cancel, the view
// does not end, and the question is offered again by i.
func TestFormEscGoesBack(t *testing.T) {
	f := newFake()
	m := waiting(f, deployAsk("deploy"))
	m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
	if m.form == nil {
		t.Fatal("i did not open the form")
	}
	m, cmd := update(m, esc)
	if m.form != nil || cmd != nil || m.done {
		t.Fatalf("esc must close the form and do nothing else (form %v, cmd %v, done %v)", m.form != nil, cmd != nil, m.done)
	}
	if n := get(f, func() int { return len(f.answers) + len(f.cancels) }); n != 0 {
		t.Errorf("esc sent %d commands", n)
	}
	if open := m.pendingAll(m.tasks["t"]); len(open) != 1 || open[0].Key != "deploy" {
		t.Errorf("after esc the question must still be open: %v", open)
	}
	if v := m.View().Content; !strings.Contains(v, "input_required") {
		t.Errorf("the task must still be waiting for input:\n%s", v)
	}
}

// TestFormDeclineAndCancelConfirm: ctrl+d and ctrl+x each ask first; n (or any key) goes on with
// the form, y sends that action for every open question, once.
func TestFormDeclineAndCancelConfirm(t *testing.T) {
	for _, c := range []struct {
		name         string
		first, then  tea.KeyPressMsg
		wantAnswered string
	}{
		{"decline", ctrlX, ctrlD, "decline"},
		{"cancel", ctrlD, ctrlX, "cancel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			m := waiting(f, deployAsk("deploy"), InputRequest{Key: "login", Kind: "elicitation/create", Mode: "url", URL: "https://example.com/a_b"})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 40))
			tm.Type("i")
			tm.Send(c.first) // the other action, refused below
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("(y/n)")) }, teatest.WithDuration(20*time.Second))
			tm.Type("n")
			tm.Send(c.then)
			tm.Type("y")
			f.waitUntil(t, "the answers", func() bool { return get(f, func() int { return len(f.answers) }) == 2 })
			tm.Type("q")
			tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
			want := []string{`t/deploy:{"action":"` + c.wantAnswered + `"}`, `t/login:{"action":"` + c.wantAnswered + `"}`}
			if got := get(f, func() []string { return f.answers }); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("answers %q, want %q", got, want)
			}
		})
	}
}

// TestFormAllQuestions: two open questions of a task are in one form, in the server's order
// (zeta before alpha), and one pass of enter answers both, in that order.
func TestFormAllQuestions(t *testing.T) {
	zeta := InputRequest{Key: "zeta", Kind: "elicitation/create", Message: "first of two",
		Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","default":true}}}`)}
	alpha := InputRequest{Key: "alpha", Kind: "elicitation/create", Message: "second of two",
		Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","maximum":5}},"required":["n"]}`)}
	f := newFake()
	m := waiting(f, zeta, alpha)
	m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
	v := ansi.Strip(m.View().Content)
	if i, j := strings.Index(v, "first of two"), strings.Index(v, "second of two"); i < 0 || j < i || !strings.Contains(v, "asks 2 questions") {
		t.Fatalf("both questions, zeta first, must be in the form:\n%s", v)
	}

	tm := teatest.NewTestModel(t, waiting(f, zeta, alpha), teatest.WithInitialTermSize(100, 40))
	tm.Type("i")
	tm.Send(enter) // ok: yes
	// huh moves to the next field by a message of its own, after the key: wait for the keys
	// line to say that enter now accepts, then type.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("accept  ctrl+d")) }, teatest.WithDuration(20*time.Second))
	tm.Type("9")
	tm.Send(enter) // refused: at most 5
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("must be at most 5")) }, teatest.WithDuration(20*time.Second))
	tm.Send(backspace)
	tm.Type("4")
	tm.Send(enter)
	f.waitUntil(t, "the answers", func() bool { return get(f, func() int { return len(f.answers) }) == 2 })
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(Model)
	if note := final.tasks["t"].note; note != "answering zeta, alpha…" {
		t.Errorf("the task's note %q must name both keys being answered", note)
	}
	want := []string{`t/zeta:{"action":"accept","content":{"ok":true}}`, `t/alpha:{"action":"accept","content":{"n":4}}`}
	if got := get(f, func() []string { return f.answers }); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers %q, want %q", got, want)
	}
}

// TestFormAttackerSchema plays a server that hides escapes in every string the form could
// show: the key, the message, titles, descriptions, enum values and enumNames, oneOf titles,
// type strings, defaults, the URL. An OSC 8 hyperlink would put a spoofed link over the rest
// of the form, APC and DCS strings reach the terminal's own handlers, CSI clears the screen.
// None of them may reach a frame, in colour or without, nor the bytes the program writes.
func TestFormAttackerSchema(t *testing.T) {
	const evil = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\x1b_apc\x1b\\\x1bPdcs\x1b\\\x1b[2J\x9b31m\u202e"
	e, _ := json.Marshal(evil)
	q := string(e)
	schema := json.RawMessage(`{"type":"object","properties":{
		` + q + `:{"type":` + q + `,"title":` + q + `,"description":` + q + `,"default":` + q + `},
		"pick":{"type":"string","title":` + q + `,"enum":[` + q + `,"ok"],"enumNames":[` + q + `,` + q + `],"default":` + q + `},
		"size":{"type":"string","oneOf":[{"const":` + q + `,"title":` + q + `}]},
		"many":{"type":"array","title":` + q + `,"items":{"enum":[` + q + `]},"default":[` + q + `]},
		"n":{"type":"integer","title":` + q + `,"minimum":1,"maximum":2,"default":5}},"required":[` + q + `]}`)
	inputs := []InputRequest{
		{Key: evil, Kind: "elicitation/create", Mode: "form", Message: evil, Schema: schema},
		{Key: evil + "2", Kind: "elicitation/create", Mode: "url", Message: evil, URL: "https://x/" + evil},
		{Key: evil + "3", Kind: evil, Message: evil},
	}
	bad := []string{"\x1b]", "\x1b_", "\x1bP", "\x1b\\", "\x1b[2J", "\x9b", "\u202e", "\x07"}
	for _, noColor := range []bool{true, false} {
		f, _ := newInputForm(evil, inputs, evil, newStyles(noColor), 100, 60)
		frames := []string{f.view(100)}
		for range 3 { // the number field's default is out of range: the error names the field
			var done []answered
			f, _, done = f.key(enter)
			if f == nil {
				t.Fatalf("the form closed: %v", done)
			}
			frames = append(frames, f.view(100))
		}
		f = press(t, f, ctrlD)
		frames = append(frames, f.view(100))
		for i, frame := range frames {
			for _, b := range bad {
				if strings.Contains(frame, b) {
					t.Errorf("noColor=%v frame %d: %q reached the screen:\n%q", noColor, i, b, frame)
				}
			}
			if !strings.Contains(ansi.Strip(frame), "click") {
				t.Errorf("noColor=%v frame %d: the text around the escapes is lost:\n%s", noColor, i, ansi.Strip(frame))
			}
		}
	}

	fk := newFake()
	tm := teatest.NewTestModel(t, waiting(fk, inputs...), teatest.WithInitialTermSize(100, 60))
	tm.Type("i")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("esc back")) }, teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		if bytes.Contains(out, []byte(b)) {
			t.Errorf("%q from the server reached the terminal", b)
		}
	}
}

// TestFormBooleanStart: a required boolean without a default starts on no, so that enter alone
// confirms nothing; one that is not required starts on "(leave out)" and is not sent.
func TestFormBooleanStart(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"go":{"type":"boolean"},"maybe":{"type":"boolean"}},"required":["go"]}`)
	f, _ := newInputForm("t", []InputRequest{{Key: "k", Kind: "elicitation/create", Schema: schema}}, "", newStyles(true), 100, 40)
	got, err := f.accept()
	if err != nil || len(got) != 1 || string(got[0].response) != `{"action":"accept","content":{"go":false}}` {
		t.Errorf("as it opens the form answers %v (%v); want go false and maybe left out", got, err)
	}
	if v := ansi.Strip(f.view(100)); !strings.Contains(v, "> no") || !strings.Contains(v, "> (leave out)") {
		t.Errorf("the starting choices are not marked:\n%s", v)
	}
}
