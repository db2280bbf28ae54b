package spectest

import (
	"strings"
	"testing"
)

// The validator must accept what the spec shows and reject what it forbids; otherwise every
// test built on it proves nothing.
func TestMessage(t *testing.T) {
	v := Load(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcptask","version":"dev"}}`
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"legacy tools/call with task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{},"task":{"ttl":60000}}}`, true},
		{"legacy tools/call task ttl string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","task":{"ttl":"soon"}}}`, false},
		{"legacy tasks/get", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"abc"}}`, true},
		{"legacy tasks/get without taskId", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{}}`, false},
		{"legacy initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptask","version":"dev"}}}`, true},
		{"modern discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`, true},
		{"modern tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{}, ` + meta + `}}`, true},
		{"modern tasks/get", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"abc",` + meta + `}}`, true},
		{"modern tasks/update", `{"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":"abc","inputResponses":{"k":{"action":"accept","content":{"name":"Ada"}}},` + meta + `}}`, true},
		{"modern tasks/get missing capabilities", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"abc","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
		{"modern tasks/result does not exist", `{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"abc",` + meta + `}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Message([]byte(tt.body), "")
			if tt.ok && err != nil {
				t.Errorf("valid message rejected: %v", err)
			}
			if !tt.ok && err == nil {
				t.Errorf("invalid message accepted: %s", tt.body)
			}
		})
	}
}

func TestElicitResponse(t *testing.T) {
	v := Load(t)
	good := `{"jsonrpc":"2.0","id":"s1","result":{"action":"accept","content":{"name":"Ada"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`
	if err := v.Message([]byte(good), "elicitation/create"); err != nil {
		t.Errorf("valid elicitation response rejected: %v", err)
	}
	bad := `{"jsonrpc":"2.0","id":"s1","result":{"action":"maybe"}}`
	if err := v.Message([]byte(bad), "elicitation/create"); err == nil || !strings.Contains(err.Error(), "ElicitResult") {
		t.Errorf("invalid elicitation response: err = %v, want an ElicitResult violation", err)
	}
}
