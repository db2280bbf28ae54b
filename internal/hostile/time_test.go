package hostile

import (
	"encoding/json"
	"testing"
)

// TestCyclicSchemasAreValidTools: the cyclic-schema mode's tools must pass for real tools (a
// JSON object schema of type object), or a client would refuse them before the attack lands.
func TestCyclicSchemasAreValidTools(t *testing.T) {
	var tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte("["+CyclicTools()+"]"), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(CyclicSchemas()) {
		t.Fatalf("%d tools, want %d", len(tools), len(CyclicSchemas()))
	}
	for _, tool := range tools {
		if tool.InputSchema["type"] != "object" {
			t.Errorf("%s: inputSchema type %v", tool.Name, tool.InputSchema["type"])
		}
	}
	for _, name := range []string{"silent-handshake", "stall-after-headers", "slow-discovery", "silent-authorization-server", "cyclic-schema"} {
		found := false
		for _, m := range Modes() {
			found = found || m.Name == name
		}
		if !found {
			t.Errorf("mode %s is not registered", name)
		}
	}
}
