// Package toolargs reads the arguments of a tools/call as a person gives them on the command
// line: a JSON object (inline, @file.json, or @- for stdin, as `call --args` and `check --tool
// NAME --args` take it) and key=value pairs (`call --arg`) whose values are typed from the
// tool's inputSchema. It holds that one idea, apart from internal/follow, because it is input
// parsing with no server in it: the engine gets a map, and these rules are tested with strings
// and files alone. Nothing here knows flags beyond naming them in its errors.
package toolargs

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mcptask/mcptask/internal/exitcode"
)

// MaxStdin bounds what --args @- reads from stdin.
const MaxStdin = 64 << 20

// ParseJSON reads --args: a JSON object, @file, or @- (stdin). Numbers stay json.Number, so
// that a large integer reaches the server as it was written. An empty s is no arguments.
func ParseJSON(s string, stdin io.Reader) (map[string]any, error) {
	args := map[string]any{}
	if s == "" {
		return args, nil
	}
	data := []byte(s)
	src := "--args"
	if strings.HasPrefix(s, "@") {
		var err error
		if s == "@-" {
			data, err = io.ReadAll(io.LimitReader(stdin, MaxStdin))
			src = "--args @- (stdin)"
		} else {
			data, err = os.ReadFile(s[1:])
			src = "--args " + s
		}
		if err != nil {
			return nil, exitcode.Usagef("%s: %v", src, err)
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, exitcode.Usagef("%s is not valid JSON: %v", src, err)
	}
	if dec.More() {
		return nil, exitcode.Usagef("%s holds more than one JSON value", src)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, exitcode.Usagef("%s must be a JSON object like '{\"key\": \"value\"}', not %s", src, jsonKind(v))
	}
	return obj, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "something else"
}

// Pair is one --arg key=value, its value not yet typed.
type Pair struct{ Key, Value string }

// ParsePairs splits --arg key=value pairs at the first "=".
func ParsePairs(pairs []string) ([]Pair, error) {
	var out []Pair
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, exitcode.Usagef("--arg %q: want key=value", p)
		}
		out = append(out, Pair{k, v})
	}
	return out, nil
}

// Type sets each pair into args, typed by the property's type in the tool's inputSchema:
// integer, number, boolean, object and array values are parsed; strings stay strings. A key
// the schema does not describe is parsed as JSON when it is JSON and kept as a string
// otherwise. A pair wins over what args held for its key.
func Type(args map[string]any, pairs []Pair, schema json.RawMessage) error {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	for _, kv := range pairs {
		v, err := typed(kv.Key, kv.Value, schemaType(s.Properties[kv.Key].Type))
		if err != nil {
			return err
		}
		args[kv.Key] = v
	}
	return nil
}

// typed is the value v of key k as the schema type typ wants it.
func typed(k, v, typ string) (any, error) {
	switch typ {
	case "string":
		return v, nil
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, exitcode.Usagef("--arg %s=%s: the tool wants an integer", k, v)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, exitcode.Usagef("--arg %s=%s: the tool wants a number", k, v)
		}
		return n, nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, exitcode.Usagef("--arg %s=%s: the tool wants true or false", k, v)
		}
		return b, nil
	case "object", "array":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, exitcode.Usagef("--arg %s: the tool wants JSON (%s): %v", k, typ, err)
		}
		return x, nil
	case "":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err == nil {
			if _, isStr := x.(string); !isStr {
				return x, nil
			}
		}
	}
	return v, nil
}

// schemaType is the type a JSON Schema "type" names: the first non-null one of a list
// (["integer","null"]), "" for none.
func schemaType(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if xs, _ := x.(string); xs != "" && xs != "null" {
				return xs
			}
		}
	}
	return ""
}
