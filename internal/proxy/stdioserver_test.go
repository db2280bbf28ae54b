package proxy

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestStdioBackendBoundsSessions: a host that opens session after session cannot make the
// proxy start server processes without end: past MaxSessions an initialize is refused (503)
// until a session ends (DELETE); a request naming no known session gets 404 (C25-TRANS
// §Session Management) and starts nothing.
func TestStdioBackendBoundsSessions(t *testing.T) {
	b := NewStdioBackend(StdioBackendOptions{Argv: []string{os.Args[0]}, Env: []string{"PROXY_TEST_ROLE=demo", quickExit}, MaxSessions: 2})
	t.Cleanup(b.Close)
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	post := func(sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	var sids []string
	for range 2 {
		r := post("", init)
		if r.StatusCode != http.StatusOK || r.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %v", r.StatusCode, r.Header)
		}
		sids = append(sids, r.Header.Get("Mcp-Session-Id"))
	}
	if r := post("", init); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third session: %d, want 503", r.StatusCode)
	}
	if r := post("no-such-session", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown session: %d, want 404", r.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodDelete, hs.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if r := post("", init); r.StatusCode != http.StatusOK {
		t.Fatalf("initialize after a session ended: %d", r.StatusCode)
	}
}
