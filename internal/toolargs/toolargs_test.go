package toolargs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
)

func TestParseJSON(t *testing.T) {
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(`{"n": 12345678901234567890, "s": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, stdin string
		want      map[string]any
	}{
		{"", "", map[string]any{}},
		{`{"a": 1}`, "", map[string]any{"a": json.Number("1")}},
		// A large integer reaches the server as written, not as a float.
		{"@" + file, "", map[string]any{"n": json.Number("12345678901234567890"), "s": "x"}},
		{"@-", `{"from": "stdin"}`, map[string]any{"from": "stdin"}},
	} {
		got, err := ParseJSON(tc.in, strings.NewReader(tc.stdin))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseJSON(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseJSONUsageErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[1]`:                  "--args must be a JSON object like '{\"key\": \"value\"}', not an array",
		`"x"`:                  "not a string",
		`null`:                 "not null",
		`{"a":1} {"b":2}`:      "--args holds more than one JSON value",
		`{"a":`:                "--args is not valid JSON",
		"@/nonexistent/a.json": "--args @/nonexistent/a.json: open /nonexistent/a.json",
		"@-":                   "--args @- (stdin) is not valid JSON",
	} {
		_, err := ParseJSON(in, strings.NewReader(""))
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJSON(%q) = %v; want a exitcode.UsageError containing %q", in, err, want)
		}
	}
}

func TestParsePairs(t *testing.T) {
	got, err := ParsePairs([]string{"a=1", "b=x=y", "c="})
	want := []Pair{{"a", "1"}, {"b", "x=y"}, {"c", ""}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParsePairs = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"novalue", "=v"} {
		var ue *exitcode.UsageError
		if _, err := ParsePairs([]string{bad}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "want key=value") {
			t.Errorf("ParsePairs(%q) = %v; want a exitcode.UsageError", bad, err)
		}
	}
}

const schema = `{"type":"object","properties":{
	"s":{"type":"string"}, "i":{"type":"integer"}, "n":{"type":"number"},
	"b":{"type":"boolean"}, "o":{"type":"object"}, "a":{"type":"array"},
	"opt":{"type":["null","integer"]}}}`

func TestType(t *testing.T) {
	args := map[string]any{"i": "from --args", "keep": true}
	pairs := []Pair{
		{"s", "42"}, {"i", "7"}, {"n", "2.5"}, {"b", "true"}, {"o", `{"k":1}`}, {"a", `[1,"x"]`},
		{"opt", "3"},
		// Keys the schema does not describe: JSON when it is JSON, else the string.
		{"free", `{"x":true}`}, {"word", "hello"}, {"quoted", `"q"`}, {"num", "5"},
	}
	if err := Type(args, pairs, json.RawMessage(schema)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": "42", "i": int64(7), "n": 2.5, "b": true, "o": map[string]any{"k": 1.0}, "a": []any{1.0, "x"},
		"opt": int64(3), "free": map[string]any{"x": true}, "word": "hello", "quoted": `"q"`, "num": 5.0,
		"keep": true,
	}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("Type =\n%#v\nwant\n%#v", args, want)
	}
}

func TestTypeWithoutSchema(t *testing.T) {
	args := map[string]any{}
	if err := Type(args, []Pair{{"n", "1"}, {"s", "abc"}}, nil); err != nil {
		t.Fatal(err)
	}
	if args["n"] != 1.0 || args["s"] != "abc" {
		t.Errorf("Type without schema = %#v", args)
	}
}

func TestTypeWrongValues(t *testing.T) {
	for _, tc := range []struct {
		p    Pair
		want string
	}{
		{Pair{"i", "1.5"}, "--arg i=1.5: the tool wants an integer"},
		{Pair{"n", "many"}, "--arg n=many: the tool wants a number"},
		{Pair{"b", "yes"}, "--arg b=yes: the tool wants true or false"},
		{Pair{"o", "{"}, "--arg o: the tool wants JSON (object)"},
		{Pair{"a", "x"}, "--arg a: the tool wants JSON (array)"},
	} {
		err := Type(map[string]any{}, []Pair{tc.p}, json.RawMessage(schema))
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Type(%v) = %v; want a exitcode.UsageError %q", tc.p, err, tc.want)
		}
	}
}
