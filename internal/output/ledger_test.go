package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestServersDocument: the typed servers document writes the bytes the untyped map it replaced
// wrote (keys sorted, url or command, shadowedBy only when set), and [] with no servers.
func TestServersDocument(t *testing.T) {
	servers := []config.Server{
		{Name: "web", Source: "/u/config.json", Scope: config.User, URL: "https://web.example/mcp?a=<b>", Trusted: true},
		{Name: "web", Source: "/p/.mcp.json", Scope: config.Project, Command: "npx", Args: []string{"srv", "--x"}, ShadowedBy: "/u/config.json"},
		{Name: "tool", Source: "/p/.mcp.json", Scope: config.Project, Command: ""},
	}
	var want []map[string]any
	for _, s := range servers {
		e := map[string]any{"name": s.Name, "source": s.Source, "scope": s.Scope.String(), "trust": s.TrustLabel()}
		if s.URL != "" {
			e["url"] = s.URL
		} else {
			e["command"] = append([]string{s.Command}, s.Args...)
		}
		if s.ShadowedBy != "" {
			e["shadowedBy"] = s.ShadowedBy
		}
		want = append(want, e)
	}
	var got, old bytes.Buffer
	if err := WriteJSON(&got, NewServers(servers)); err != nil {
		t.Fatal(err)
	}
	_ = WriteJSON(&old, map[string]any{"type": "servers", "servers": want})
	if got.String() != old.String() {
		t.Fatalf("servers document\n got %s\nwant %s", got.String(), old.String())
	}
	got.Reset()
	_ = WriteJSON(&got, NewServers(nil))
	if got.String() != `{"servers":[],"type":"servers"}`+"\n" {
		t.Fatalf("no servers: %s", got.String())
	}
}

// TestAdoptDocument: grants are [] rather than null, and the text says what resuming will do.
func TestAdoptDocument(t *testing.T) {
	doc := NewAdopt([]ledger.Adoption{
		{Record: state.Record{TaskID: "t1", Server: state.Server{URL: "http://127.0.0.1:1/mcp"}}},
		{Record: state.Record{TaskID: "t2", Server: state.Server{Command: []string{"helper"}}}, Adopted: true},
	})
	b, _ := json.Marshal(doc)
	if !strings.Contains(string(b), `{"taskId":"t1","server":"http://127.0.0.1:1/mcp","grants":[],"adopted":false}`) || !strings.HasSuffix(string(b), `"type":"adopt"}`) {
		t.Fatalf("adopt document %s", b)
	}
	var text bytes.Buffer
	_ = doc.Text(&text)
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], ": already yours") || !strings.Contains(lines[1], ": adopted; resuming it will start the command helper") {
		t.Fatalf("adopt text:\n%s", text.String())
	}
}

// TestListingDoc: no records is [] (not null), and only --remote names a server and carries
// the server's tasks as it sent them.
func TestListingDoc(t *testing.T) {
	b, _ := json.Marshal(Listing{}.Doc())
	if string(b) != `{"type":"list","records":[]}` {
		t.Fatalf("empty list document %s", b)
	}
	l := Listing{WithRemote: true, Server: "http://127.0.0.1:1/mcp", Remote: []*rpc.Task{{TaskID: "r", Raw: json.RawMessage(`{"taskId":"r","x":1}`)}}}
	b, _ = json.Marshal(l.Doc())
	if string(b) != `{"type":"list","server":"http://127.0.0.1:1/mcp","records":[],"remote":[{"taskId":"r","x":1}]}` {
		t.Fatalf("remote list document %s", b)
	}
}
