package rpc

import (
	"encoding/json"
)

// ElicitDefaults completes an accepted elicitation answer with the defaults of its form: every
// property of requestedSchema that declares a "default" and that the answer's content leaves
// out gets that default (SEP-1034, "Support default values for all primitive types in
// elicitation schemas": defaults are what the user accepts by not changing a field). Answers
// that are not an accept, schemas without defaults, and anything that does not parse are
// returned unchanged.
func ElicitDefaults(requestedSchema, answer json.RawMessage) json.RawMessage {
	var schema struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(requestedSchema, &schema) != nil || len(schema.Properties) == 0 {
		return answer
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(answer, &res) != nil {
		return answer
	}
	var action string
	if json.Unmarshal(res["action"], &action) != nil || action != "accept" {
		return answer
	}
	content := map[string]json.RawMessage{}
	if raw, ok := res["content"]; ok && !isJSONNull(raw) {
		if json.Unmarshal(raw, &content) != nil {
			return answer
		}
	}
	changed := false
	for name, prop := range schema.Properties {
		def, ok := prop["default"]
		if !ok || isJSONNull(def) {
			continue
		}
		if _, given := content[name]; given {
			continue
		}
		content[name] = def
		changed = true
	}
	if !changed {
		return answer
	}
	c, err := json.Marshal(content)
	if err != nil {
		return answer
	}
	res["content"] = c
	out, err := json.Marshal(res)
	if err != nil {
		return answer
	}
	return out
}

// elicitSchema returns params.requestedSchema of an elicitation/create request.
func elicitSchema(params json.RawMessage) json.RawMessage {
	var p struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	_ = json.Unmarshal(params, &p)
	return p.RequestedSchema
}
