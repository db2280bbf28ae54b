// Package elicit reads a form-mode elicitation's requestedSchema into its fields, in the order
// the server wrote them, and checks an answer against it. The schema is a flat object of
// primitive properties (MCP 2025-11-25, Elicitation, §Requested Schema; 2026-07-28
// inputRequests carry the same): string (optionally an enum, a titled oneOf, or a format),
// number, integer, boolean, and the multi-select array of enum strings.
//
// It is its own package because two places must judge an answer alike and may not import each
// other: the live view's form (internal/tui, which imports no engine) and the answers given on
// the command line (--answer, --answers, --on-input exec, checked in internal/follow). An answer
// the form refuses is refused on the command line too, with the same message. The judge is the
// JSON Schema library the checker uses (github.com/google/jsonschema-go); this package only
// puts what it finds into words a person can act on.
package elicit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Field is one property of a requestedSchema. Every string in it is the server's, exactly as
// sent: whoever shows one on a terminal passes it through internal/termsafe first.
type Field struct {
	Name        string
	Title       string
	Description string
	Type        string   // "string", "number", "integer", "boolean" or "array" (multi-select)
	Enum        []string // the values allowed (of each item, for a multi-select)
	EnumNames   []string // what to show for each of Enum (enumNames, or a oneOf's titles); may be shorter
	Required    bool
	Min, Max    *float64 // number bounds
	MinLen      *int     // string length bounds
	MaxLen      *int
	Default     any // as JSON decodes it; nil when there is none

	schema *jsonschema.Resolved // the property's own schema, nil when the library cannot read it
}

// Label is what the field is called: its title, else its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// prop is the part of a PrimitiveSchemaDefinition the fields are made of.
type prop struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	OneOf       []struct {
		Const string `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Items struct {
		Enum  []string `json:"enum"`
		AnyOf []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"anyOf"`
	} `json:"items"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Default   any      `json:"default"`
}

// Fields reads requestedSchema into its fields, in the order the server wrote the properties
// (the order it means them to be asked in). A schema that is not an object of properties has
// no fields.
func Fields(schema json.RawMessage) []Field {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []Field
	for _, name := range order(schema, s.Properties) {
		raw := s.Properties[name]
		var p prop
		_ = json.Unmarshal(raw, &p) // a property of another shape keeps what did decode
		f := Field{
			Name: name, Title: p.Title, Description: p.Description, Type: p.Type,
			Enum: p.Enum, EnumNames: p.EnumNames, Required: slices.Contains(s.Required, name),
			Min: p.Minimum, Max: p.Maximum, MinLen: p.MinLength, MaxLen: p.MaxLength, Default: p.Default,
		}
		for _, o := range p.OneOf {
			f.Enum = append(f.Enum, o.Const)
			f.EnumNames = append(f.EnumNames, o.Title)
		}
		if p.Type == "array" {
			f.Enum = append(f.Enum, p.Items.Enum...)
			for _, o := range p.Items.AnyOf {
				f.Enum = append(f.Enum, o.Const)
				f.EnumNames = append(f.EnumNames, o.Title)
			}
		}
		var js jsonschema.Schema
		if json.Unmarshal(raw, &js) == nil {
			// No loader: a $ref to anything outside the property fails to resolve, and the
			// field is then checked by the words below alone. Nothing is fetched for a server.
			if rs, err := js.Resolve(nil); err == nil {
				f.schema = rs
			}
		}
		out = append(out, f)
	}
	return out
}

// order lists the keys of the schema's "properties" object in document order (a Go map
// forgets it). Keys it cannot place come last, sorted, so the order is always stable.
func order(raw json.RawMessage, props map[string]json.RawMessage) []string {
	var out []string
	for _, name := range Order(raw, "properties") {
		if _, ok := props[name]; ok {
			out = append(out, name)
		}
	}
	var rest []string
	for name := range props {
		if !slices.Contains(out, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Order lists the keys of the object member of the JSON object raw in the order the server
// wrote them, each once: the order it means its fields (requestedSchema's "properties") or its
// questions (a task's "inputRequests") to be asked in, which a Go map forgets. It is nil when
// raw has no such object.
func Order(raw json.RawMessage, member string) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(top[member])))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []string
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
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// FieldError is an answer's field that does not fit the schema. Its text names the field by its
// name in the schema, quoted, so that it reads the same in the form and on the command line.
type FieldError struct {
	Field   string
	Problem string // "must be at most 10"
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %q %s", e.Field, e.Problem) }

// Check judges v, a value as JSON decodes it (string, float64, bool, []any), for the field. A
// value the library finds wrong is a *FieldError saying what is allowed.
func (f Field) Check(v any) error {
	if p := f.problem(v); p != "" {
		return &FieldError{f.Name, p}
	}
	if f.schema != nil {
		if err := f.schema.Validate(v); err != nil {
			return &FieldError{f.Name, "does not fit the schema: " + err.Error()}
		}
	}
	return nil
}

// problem words what is wrong with v by the keywords the form knows; "" when they allow it.
func (f Field) problem(v any) string {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return "must be a string"
		}
		if n := len([]rune(s)); f.MinLen != nil && n < *f.MinLen {
			return fmt.Sprintf("must be at least %d characters", *f.MinLen)
		} else if f.MaxLen != nil && n > *f.MaxLen {
			return fmt.Sprintf("must be at most %d characters", *f.MaxLen)
		}
	case "number", "integer":
		n, ok := v.(float64)
		if !ok {
			return "must be a number"
		}
		if f.Type == "integer" && n != float64(int64(n)) {
			return "must be a whole number"
		}
		if f.Min != nil && n < *f.Min {
			return "must be at least " + num(*f.Min)
		}
		if f.Max != nil && n > *f.Max {
			return "must be at most " + num(*f.Max)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return "must be a list"
		}
		for _, it := range items {
			if s, ok := it.(string); !ok || (len(f.Enum) > 0 && !slices.Contains(f.Enum, s)) {
				return "may hold only " + oneOf(f.Enum)
			}
		}
		return ""
	}
	if len(f.Enum) > 0 {
		if s, ok := v.(string); !ok || !slices.Contains(f.Enum, s) {
			return "must be " + oneOf(f.Enum)
		}
	}
	return ""
}

// Text reads what a person typed for a string, number or integer field into its value; a
// number that does not parse is a *FieldError. The value is then for Check.
func (f Field) Text(s string) (any, error) {
	switch f.Type {
	case "number", "integer":
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			if f.Type == "integer" {
				return nil, &FieldError{f.Name, "must be a whole number"}
			}
			return nil, &FieldError{f.Name, "must be a number"}
		}
		return n, nil
	}
	return s, nil
}

// Check judges an accepted elicitation's content against requestedSchema: every required field
// is there, no field the schema does not ask for, each field fits (Field.Check). An empty
// schema takes anything.
func Check(schema, content json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	var probe struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &probe) != nil {
		return nil
	}
	fields := Fields(schema)
	var c map[string]any
	if len(content) > 0 && string(content) != "null" {
		if err := json.Unmarshal(content, &c); err != nil {
			return fmt.Errorf("content must be a JSON object")
		}
	}
	for _, f := range fields {
		if _, ok := c[f.Name]; f.Required && !ok {
			return &FieldError{f.Name, "is required"}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c)) {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == name })
		if i < 0 {
			return &FieldError{name, "is not in the requested schema"}
		}
		if err := fields[i].Check(c[name]); err != nil {
			return err
		}
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// oneOf words a list of allowed values: one of "a", "b".
func oneOf(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "one of " + strings.Join(q, ", ")
}
