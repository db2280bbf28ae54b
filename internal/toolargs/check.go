package toolargs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/suggest"
)

// Check finds, before anything is sent, the argument mistakes the tool's inputSchema makes
// certain: a required argument missing, and a key the schema does not take. It refuses only
// what the schema rules out or what is plainly a typo, never a call the server may accept:
//
//   - a key missing from the top-level "required" list is refused (JSON Schema 2020-12,
//     §10.3.2.1 "required" holds whatever else the schema says);
//   - an undeclared key (not in "properties", matching no "patternProperties") is refused
//     when "additionalProperties" is false, naming the close names or the ones it takes;
//   - when "additionalProperties" is absent, which JSON Schema reads as allowed, an
//     undeclared key is refused only when it is a near miss of a declared one ("secs" for
//     "seconds"), and only when the schema declares its properties in the open (no allOf,
//     anyOf, oneOf, $ref, if, dependentSchemas or unevaluatedProperties that could declare
//     more); a key like nothing declared goes to the server as given;
//   - "additionalProperties" true or a schema, an unreadable schema or none: nothing is
//     refused for its keys.
//
// flagged names the keys given as --arg key=value (the rest came from --args), so that the
// error names the flag to fix. The error is an *exitcode.UsageError.
func Check(tool string, args map[string]any, flagged map[string]bool, schema json.RawMessage) error {
	var s struct {
		Properties        map[string]json.RawMessage `json:"properties"`
		Required          []string                   `json:"required"`
		Additional        json.RawMessage            `json:"additionalProperties"`
		PatternProperties map[string]json.RawMessage `json:"patternProperties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var missing []string
	for _, k := range s.Required {
		if _, ok := args[k]; !ok && !slices.Contains(missing, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		var how []string
		for _, k := range missing {
			how = append(how, "--arg "+k+"="+placeholder(s.Properties[k]))
		}
		noun := "argument"
		if len(missing) > 1 {
			noun = "arguments"
		}
		return exitcode.Usagef("%s needs the %s %s: add %s", tool, noun, strings.Join(missing, ", "), strings.Join(how, " "))
	}
	closed := strings.TrimSpace(string(s.Additional)) == "false"
	open := len(s.Additional) > 0 && !closed // true, or a schema: any key is welcome
	if open || (!closed && composed(schema)) {
		return nil
	}
	declared := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		declared = append(declared, k)
	}
	slices.Sort(declared)
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := s.Properties[k]; ok {
			continue
		}
		if matched, ok := patternMatch(s.PatternProperties, k); matched || !ok {
			continue // a pattern takes it, or one cannot be read: the server decides
		}
		near := suggest.Closest(k, declared)
		if !closed && len(near) == 0 {
			continue
		}
		src := fmt.Sprintf("--args key %q", k)
		if flagged[k] {
			src = "--arg " + k
		}
		msg := fmt.Sprintf("%s: %s takes no argument %q", src, tool, k)
		switch {
		case len(near) > 0:
			msg += "; did you mean " + suggest.Phrase(near) + "?"
		case len(declared) > 0:
			msg += "; it takes " + suggest.Phrase(declared)
		default:
			msg += "; it takes no arguments"
		}
		return exitcode.Usagef("%s ('mcptask tools' shows each tool's arguments)", msg)
	}
	return nil
}

// placeholder is what a missing argument's value looks like in the hint: its schema type.
func placeholder(prop json.RawMessage) string {
	var p struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(prop, &p)
	if t := schemaType(p.Type); t != "" {
		return strings.ToUpper(t)
	}
	return "VALUE"
}

// composed reports whether schema may declare properties beyond its own "properties".
func composed(schema json.RawMessage) bool {
	var kw map[string]json.RawMessage
	if json.Unmarshal(schema, &kw) != nil {
		return true
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas", "unevaluatedProperties"} {
		if _, ok := kw[k]; ok {
			return true
		}
	}
	return false
}

// patternMatch reports whether a patternProperties pattern matches k; ok is false when a
// pattern is not a regular expression Go reads (the schema then cannot be judged here).
func patternMatch(patterns map[string]json.RawMessage, k string) (matched, ok bool) {
	for p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return false, false
		}
		if re.MatchString(k) {
			return true, true
		}
	}
	return false, true
}
