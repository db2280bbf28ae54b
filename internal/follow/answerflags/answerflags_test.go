package answerflags

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
)

func TestMode(t *testing.T) {
	for _, tc := range []struct {
		onInput string
		tty     bool
		want    string
		err     string
	}{
		{"", true, "prompt", ""},
		{"", false, "fail", ""},
		{"fail", true, "fail", ""},
		{"decline", false, "decline", ""},
		{"prompt", true, "prompt", ""},
		{"prompt", false, "", "--on-input prompt needs a terminal"},
		{"exec:./answer.sh", false, "exec", ""},
		{"ask", true, "", `--on-input "ask": want fail, decline, prompt or exec:CMD`},
	} {
		got, err := Flags{OnInput: tc.onInput}.Mode(tc.tty)
		if tc.err != "" {
			var ue *exitcode.UsageError
			if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("Mode(%q, tty %v) = %q, %v; want a exitcode.UsageError %q", tc.onInput, tc.tty, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Mode(%q, tty %v) = %q, %v; want %q", tc.onInput, tc.tty, got, err, tc.want)
		}
	}
}

func TestNone(t *testing.T) {
	for f, want := range map[*Flags]bool{
		{}:                        true,
		{OnInput: "decline"}:      true, // declining answers nothing by itself for update
		{OnInput: "exec:x"}:       false,
		{Answers: "a.json"}:       false,
		{Answer: []string{"k=1"}}: false,
	} {
		if got := f.None(); got != want {
			t.Errorf("%+v.None() = %v; want %v", *f, got, want)
		}
	}
}

func TestGiven(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "answers.json")
	one := filepath.Join(dir, "one.json")
	if err := os.WriteFile(file, []byte(`{"name":{"name":"Ada"},"confirm":{"ok":false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(one, []byte(`{"action":"decline"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Flags{
		Answers: file,
		// --answer wins over --answers for the same key.
		Answer:  []string{`confirm={"ok":true}`, "other=@" + one, "piped=@-"},
		OnInput: "decline",
	}.Given(strings.NewReader(`"from stdin"`))
	if err != nil {
		t.Fatal(err)
	}
	want := follow.Answers{
		"*":       json.RawMessage(`{"action":"decline"}`),
		"name":    json.RawMessage(`{"name":"Ada"}`),
		"confirm": json.RawMessage(`{"ok":true}`),
		"other":   json.RawMessage(`{"action":"decline"}`),
		"piped":   json.RawMessage(`"from stdin"`),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Given =\n%s\nwant\n%s", got, want)
	}
	if got, err := (Flags{OnInput: "fail"}).Given(nil); got != nil || err != nil {
		t.Errorf("Given without answers = %v, %v; want nil, nil", got, err)
	}
}

func TestGivenUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, tc := range []struct {
		f    Flags
		want string
	}{
		{Flags{Answer: []string{"novalue"}}, `--answer "novalue": want KEY=JSON or KEY=@file.json`},
		{Flags{Answer: []string{"=1"}}, `--answer "=1": want KEY=JSON`},
		{Flags{Answer: []string{"name=Ada"}}, `--answer name: the value is not valid JSON (quote strings: --answer name='"text"')`},
		{Flags{Answer: []string{"name=@" + missing}}, "--answer name: open " + missing},
		{Flags{Answers: missing}, "--answers " + missing + ": open"},
		{Flags{Answers: "-"}, "--answers - must be a JSON object of key -> response"},
		{Flags{OnInput: "maybe"}, `--on-input "maybe": want fail`},
	} {
		_, err := tc.f.Given(strings.NewReader("[1]"))
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v.Given = %v; want a exitcode.UsageError %q", tc.f, err, tc.want)
		}
	}
}

func TestProgramAndJoin(t *testing.T) {
	if x, err := (Flags{OnInput: "decline"}).Program(nil); x != nil || err != nil {
		t.Errorf("Program without exec = %v, %v; want nil, nil", x, err)
	}
	for _, bad := range []string{"exec:", "exec:   ", `exec:'unclosed`} {
		var ue *exitcode.UsageError
		if _, err := (Flags{OnInput: bad}).Program(nil); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--on-input ") {
			t.Errorf("Program(%q) = %v; want a exitcode.UsageError naming --on-input", bad, err)
		}
	}
	var stderr bytes.Buffer
	x, err := Flags{OnInput: "exec:sh -c 'cat >/dev/null; echo {}'"}.Program(&stderr)
	if err != nil || x == nil || x.Stderr != &stderr {
		t.Fatalf("Program = %+v, %v; want an Exec writing to stderr", x, err)
	}

	// A nil interface, not a nil map inside one: the engine tests Answerer against nil.
	if a := Join(nil, nil); a != nil {
		t.Errorf("Join(nil, nil) = %#v; want nil", a)
	}
	given := follow.Answers{"k": json.RawMessage(`1`)}
	if a := Join(given, nil); !reflect.DeepEqual(a, given) {
		t.Errorf("Join(given, nil) = %#v", a)
	}
	if a := Join(nil, x); a != follow.Answerer(x) {
		t.Errorf("Join(nil, x) = %#v", a)
	}
	if a, ok := Join(given, x).(follow.Chain); !ok || len(a) != 2 {
		t.Errorf("Join(given, x) = %#v; want the chain given, then the program", a)
	}
}

// TestAnswerOutOfRange: a number out of the schema's range given with --answer is refused
// before anything is sent, with the message the live view's form shows for the same value
// (internal/tui TestFormRefusesAsAnswerDoes types it there): both come from internal/elicit.
// Before, --answer never looked at minimum or maximum.
func TestAnswerOutOfRange(t *testing.T) {
	schema := `{"type":"object","properties":{
		"replicas":{"type":"integer","title":"Replicas","minimum":1,"maximum":10,"default":3},
		"environment":{"type":"string","oneOf":[{"const":"staging","title":"Staging"},{"const":"prod","title":"Production"}]},
		"dryRun":{"type":"boolean","default":true}},"required":["replicas","environment"]}`
	params := json.RawMessage(`{"mode":"form","message":"Deploy the release?","requestedSchema":` + schema + `}`)
	req := follow.Request{TaskID: "t1", Key: "deploy", Method: "elicitation/create", Params: params}
	given, err := Flags{Answer: []string{`deploy={"replicas":42,"environment":"prod"}`}}.Given(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ok, err := given.Answer(t.Context(), req)
	var ae *follow.AnswerError
	if ok || !errors.As(err, &ae) || err.Error() != `answer deploy: field "replicas" must be at most 10` {
		t.Errorf("--answer replicas=42: %v, %v; want it refused with the form's message", ok, err)
	}
	given, err = Flags{Answer: []string{`deploy={"replicas":10,"environment":"prod"}`}}.Given(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok, err := given.Answer(t.Context(), req)
	if err != nil || !ok || string(resp) != `{"action":"accept","content":{"dryRun":true,"environment":"prod","replicas":10}}` {
		t.Errorf("--answer replicas=10: %s, %v, %v; want it accepted with the default dryRun", resp, ok, err)
	}
}
