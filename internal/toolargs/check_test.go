package toolargs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/exitcode"
)

// TestCheck refuses what the schema rules out or what is plainly a typo, and nothing a server
// may accept: an open schema (additionalProperties true, a schema, or keys that may be declared
// elsewhere) passes any key; an absent additionalProperties passes a key like nothing declared.
func TestCheck(t *testing.T) {
	sleep := `{"type":"object","properties":{"seconds":{"type":"number"},"steps":{"type":"integer"}}}`
	echo := `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	closed := `{"type":"object","properties":{"seconds":{"type":"number"}},"additionalProperties":false}`
	for _, c := range []struct {
		name, schema string
		args         map[string]any
		flagged      string
		want         string // "" passes
	}{
		{"typo of a property", sleep, map[string]any{"secs": 3}, "secs", `--arg secs: sleep takes no argument "secs"; did you mean seconds?`},
		{"typo from --args", sleep, map[string]any{"secs": 3}, "", `--args key "secs": sleep takes no argument "secs"; did you mean seconds?`},
		{"like nothing declared, schema open by default", sleep, map[string]any{"colour": "red"}, "colour", ""},
		{"declared", sleep, map[string]any{"seconds": 3}, "", ""},
		{"additionalProperties true", `{"properties":{"seconds":{}},"additionalProperties":true}`, map[string]any{"secs": 3}, "", ""},
		{"additionalProperties a schema", `{"properties":{"seconds":{}},"additionalProperties":{"type":"string"}}`, map[string]any{"secs": "3"}, "", ""},
		{"composed: allOf may declare it", `{"properties":{"seconds":{}},"allOf":[{"properties":{"secs":{}}}]}`, map[string]any{"secs": 3}, "", ""},
		{"patternProperties takes it", `{"properties":{"seconds":{}},"patternProperties":{"^sec":{}},"additionalProperties":false}`, map[string]any{"secs": 3}, "", ""},
		{"closed: any undeclared key", closed, map[string]any{"colour": "red"}, "colour", `--arg colour: sleep takes no argument "colour"; it takes seconds`},
		{"closed with no properties", `{"type":"object","additionalProperties":false}`, map[string]any{"x": 1}, "x", "it takes no arguments"},
		{"missing required", echo, map[string]any{}, "", "sleep needs the argument text: add --arg text=STRING"},
		{"required given", echo, map[string]any{"text": "hi"}, "", ""},
		{"no schema", "", map[string]any{"secs": 3}, "", ""},
		{"unreadable schema", `[1,2]`, map[string]any{"secs": 3}, "", ""},
	} {
		flagged := map[string]bool{c.flagged: c.flagged != ""}
		err := Check("sleep", c.args, flagged, json.RawMessage(c.schema))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a usage error saying %q", c.name, err, c.want)
		}
	}
}
