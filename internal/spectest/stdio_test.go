package spectest

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

const (
	legacyInit     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptask","version":"dev"}}}`
	legacyInitOK   = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`
	legacyStatus   = `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}`
	legacyListOK   = `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"sleep","inputSchema":{"type":"object"}}]}}`
	legacyList     = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	legacyListBad  = `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"sleep"}]}}` // no inputSchema
	legacyElicit   = `{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`
	legacyElicitOK = `{"jsonrpc":"2.0","id":"s1","result":{"action":"accept","content":{"name":"Ada"}}}`
)

// A Stream passes a conformant exchange and fails each kind of bad frame, in the direction
// that sent it; otherwise the stdio tests built on it prove nothing.
func TestStream(t *testing.T) {
	v := Load(t)
	run := func(serverOnly bool, frames ...string) []string {
		s := &Stream{V: v, ServerOnly: serverOnly}
		for _, f := range frames {
			who, body, _ := strings.Cut(f, " ")
			if who == "c" {
				s.Client([]byte(body))
			} else {
				s.Server([]byte(body))
			}
		}
		return s.Errors()
	}
	if errs := run(false, "c "+legacyInit, "s "+legacyInitOK, "c "+legacyList, "s "+legacyStatus, "s "+legacyListOK,
		"s "+legacyElicit, "c "+legacyElicitOK); len(errs) > 0 {
		t.Errorf("a conformant exchange failed: %v", errs)
	}
	for _, tt := range []struct {
		name       string
		serverOnly bool
		frames     []string
		want       string // in the one error, "" for none
	}{
		{"a result breaking its schema", false, []string{"c " + legacyInit, "s " + legacyInitOK, "c " + legacyList, "s " + legacyListBad}, "server sent: tools/list"},
		{"server garbage", true, []string{"c " + legacyInit, "s {not json"}, "server sent a frame that is not"},
		{"a result for no request", false, []string{"c " + legacyInit, "s " + legacyListOK}, "no request of the client's"},
		{"client garbage", false, []string{"c this is not json"}, "client sent a frame that is not"},
		{"client garbage, server only", true, []string{"c this is not json", "s " + `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`}, ""},
		// JSON-RPC 2.0 answers a parse error with "id": null; the MCP schemas allow only a
		// string or an integer there, so the id must be left out.
		{"a parse error with id null", true, []string{"c this is not json", "s " + `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`}, "got null"},
		{"a bad answer to an elicitation", false, []string{"c " + legacyInit, "s " + legacyElicit, "c " + `{"jsonrpc":"2.0","id":"s1","result":{"action":"maybe"}}`}, "ElicitResult"},
		{"a modern server's request", false, []string{"c " + `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}}}`, "s " + legacyElicit}, "server sent the JSON-RPC request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := run(tt.serverOnly, tt.frames...)
			if tt.want == "" && len(errs) > 0 || tt.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tt.want)) {
				t.Errorf("errors %q, want one with %q", errs, tt.want)
			}
		})
	}
}

// The reader and writer pass the bytes unchanged and validate whole lines as they pass,
// however the lines are cut into reads and writes.
func TestStreamTee(t *testing.T) {
	s := &Stream{V: Load(t)}
	in := legacyInit + "\n" + legacyList + "\n"
	r := s.ClientReader(io.MultiReader(strings.NewReader(in[:30]), strings.NewReader(in[30:])))
	got, _ := io.ReadAll(r)
	var out bytes.Buffer
	w := s.ServerWriter(&out)
	for _, chunk := range []string{legacyInitOK[:10], legacyInitOK[10:] + "\n" + legacyListBad[:5], legacyListBad[5:] + "\n"} {
		io.WriteString(w, chunk)
	}
	if string(got) != in || out.String() != legacyInitOK+"\n"+legacyListBad+"\n" {
		t.Errorf("the bytes changed: %q %q", got, out.String())
	}
	if errs := s.Errors(); s.Frames() != 4 || len(errs) != 1 || !strings.Contains(errs[0], "tools/list") {
		t.Errorf("%d frames, errors %q; want 4 frames and the bad tools/list", s.Frames(), errs)
	}
}

// A child's failures reach the test through the log, each one whole.
func TestChildStreamLog(t *testing.T) {
	dir, err := SpecDir()
	if err != nil {
		t.Skip(err)
	}
	log := filepath.Join(t.TempDir(), "spec.log")
	s := ChildStream(dir, log, false)
	s.Client([]byte(legacyInit))
	s.Server([]byte(legacyInitOK))
	s.Client([]byte(legacyList))
	s.Server([]byte(legacyListBad))
	s.Server([]byte("{oops"))
	errs, err := ReadLog(log)
	if err != nil || len(errs) != 2 || !strings.Contains(errs[0], "tools/list") || !strings.Contains(errs[0], "\n  frame: ") || !strings.Contains(errs[1], "not a JSON-RPC object") {
		t.Errorf("log %q (%v)", errs, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.log")
	ChildStream(t.TempDir(), bad, false).Server([]byte("{oops"))
	if errs, _ := ReadLog(bad); len(errs) != 1 || !strings.Contains(errs[0], "could not load the schemas") {
		t.Errorf("a child without schemas logged %q", errs)
	}
}
