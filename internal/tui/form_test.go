package tui

import (
	"encoding/json"
	"testing"
)

// TestFormDefaultsSEP1034: every primitive kind's default (SEP-1034) is pre-filled, and a form
// sent as it stands answers with exactly those defaults, typed as the schema says. The schema
// is the one of the official conformance scenario elicitation-sep1034-client-defaults.
func TestFormDefaultsSEP1034(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","description":"User age","default":30},
		"score":{"type":"number","description":"User score","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`)
	want := map[string]any{"name": "John Doe", "age": int64(30), "score": 95.5, "status": "active", "verified": true}
	fields := parseSchema(schema)
	if len(fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(fields), len(want))
	}
	for _, f := range fields {
		v, ok, err := f.value()
		if err != nil || !ok || v != want[f.name] {
			t.Errorf("%s: pre-filled %q gives %#v (%v, %v), want the default %#v", f.name, f.input.Value(), v, ok, err, want[f.name])
		}
	}
}
