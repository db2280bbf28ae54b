package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
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

// runTagger is PROXY_TEST_ROLE=tagger: a 2026-07-28 stdio server whose every message names
// the call it belongs to. Each tools/call gets at once a notifications/progress "received:NAME"
// on the call's progressToken (NAME is its "name" argument); once three calls are in flight,
// each gets a progress "tag:NAME", a notifications/message "tag:NAME" and its answer, text
// NAME. A notifications/cancelled ends the request it names with an error "cancelled:NAME".
func runTagger(in io.Reader, out io.Writer) int {
	type call struct {
		id    json.RawMessage
		token json.RawMessage
		name  string
	}
	enc := json.NewEncoder(out)
	send := func(v any) { _ = enc.Encode(v) }
	var inFlight []call
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
				Arguments struct {
					Name string `json:"name"`
				} `json:"arguments"`
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "tools/call":
			c := call{m.ID, m.Params.Meta.ProgressToken, m.Params.Arguments.Name}
			inFlight = append(inFlight, c)
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": c.token, "progress": 0, "message": "received:" + c.name}})
			if len(inFlight) < 3 {
				continue
			}
			for _, c := range inFlight {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": c.token, "progress": 1, "message": "tag:" + c.name}})
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "tag:" + c.name}})
				send(map[string]any{"jsonrpc": "2.0", "id": c.id, "result": map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": c.name}}}})
			}
			inFlight = nil
		case "notifications/cancelled":
			for i, c := range inFlight {
				if string(c.id) == string(m.Params.RequestID) {
					send(map[string]any{"jsonrpc": "2.0", "id": c.id, "error": map[string]any{"code": -32800, "message": "cancelled:" + c.name}})
					inFlight = append(inFlight[:i], inFlight[i+1:]...)
					break
				}
			}
		default:
			if len(m.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no such method"}})
			}
		}
	}
	return 0
}

// TestStdioBackendKeepsHostsApart plays three 2026-07-28 hosts of one `proxy --stdio …
// --listen`, which share one server process, with the same request id (1) and the same
// progress token (1). Each host must see only its own call's progress, with its own token,
// and its own answer; no host sees another's log notification; and host B's
// notifications/cancelled {requestId: 1} cancels no one else's request (host A's answer is
// A's result, not an error).
func TestStdioBackendKeepsHostsApart(t *testing.T) {
	b := NewStdioBackend(StdioBackendOptions{Argv: []string{os.Args[0]}, Env: []string{"PROXY_TEST_ROLE=tagger", quickExit}})
	t.Cleanup(b.Close)
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	type event struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Message       string          `json:"message"`
			Data          string          `json:"data"`
		} `json:"params"`
		ID     json.RawMessage `json:"id"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	post := func(body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// call starts host name's tools/call and returns its events as they come.
	call := func(name string) <-chan event {
		resp := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tag","arguments":{"name":"` + name + `"},"_meta":{"progressToken":1,"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		ch := make(chan event, 16)
		go func() {
			defer close(ch)
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var e event
				if json.Unmarshal([]byte(data), &e) == nil {
					ch <- e
				}
			}
		}()
		return ch
	}
	next := func(host string, ch <-chan event) (event, bool) {
		select {
		case e, ok := <-ch:
			return e, ok
		case <-ctx.Done():
			t.Fatalf("host %s: no event before the deadline", host)
			return event{}, false
		}
	}
	hosts := map[string]<-chan event{}
	for _, h := range []string{"B", "A"} {
		hosts[h] = call(h)
		e, _ := next(h, hosts[h])
		if e.Params.Message != "received:"+h || string(e.Params.ProgressToken) != "1" {
			t.Fatalf("host %s's first event: %+v, want its own progress on its own token 1", h, e)
		}
	}
	resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	resp.Body.Close()
	hosts["C"] = call("C")
	for _, h := range []string{"A", "B", "C"} {
		var got []string
		for {
			e, ok := next(h, hosts[h])
			if !ok {
				break
			}
			switch {
			case e.Method == "notifications/progress":
				if string(e.Params.ProgressToken) != "1" {
					t.Errorf("host %s: progress on token %s, want its own 1", h, e.Params.ProgressToken)
				}
				got = append(got, e.Params.Message)
			case e.Method == "notifications/message":
				got = append(got, "log "+e.Params.Data)
			case e.Error != nil:
				got = append(got, "error "+e.Error.Message)
			case e.Result != nil && len(e.Result.Content) == 1:
				if string(e.ID) != "1" {
					t.Errorf("host %s: answer with id %s, want its own 1", h, e.ID)
				}
				got = append(got, "result "+e.Result.Content[0].Text)
			}
		}
		for _, g := range got {
			if !strings.HasSuffix(g, h) && !strings.HasSuffix(g, ":"+h) {
				t.Errorf("host %s received another host's message %q (all: %q)", h, g, got)
			}
		}
		if len(got) == 0 || got[len(got)-1] != "result "+h {
			t.Errorf("host %s: %q, want its own result last", h, got)
		}
	}
}

// TestStdioBackendExpiresIdleSessions: hosts that initialize every place (MaxSessions) and
// vanish lock no one out for good: once they have been idle for SessionIdle, the next
// initialize ends them and gets a session of its own, and their ids then answer 404.
func TestStdioBackendExpiresIdleSessions(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := NewStdioBackend(StdioBackendOptions{Argv: []string{os.Args[0]}, Env: []string{"PROXY_TEST_ROLE=demo", quickExit},
		MaxSessions: 2, SessionIdle: time.Minute, Now: clock})
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
		sids = append(sids, post("", init).Header.Get("Mcp-Session-Id"))
	}
	if r := post("", init); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third session before any expired: %d, want 503", r.StatusCode)
	}
	mu.Lock()
	now = now.Add(30 * time.Second)
	mu.Unlock()
	// One of the two is still in use: it stays when the others expire.
	if r := post(sids[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d", r.StatusCode)
	}
	mu.Lock()
	now = now.Add(45 * time.Second)
	mu.Unlock()
	r := post("", init)
	if r.StatusCode != http.StatusOK || r.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize after the idle one expired: %d", r.StatusCode)
	}
	if r := post(sids[0], `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Fatalf("the expired session: %d, want 404", r.StatusCode)
	}
	if r := post(sids[1], `{"jsonrpc":"2.0","id":4,"method":"ping"}`); r.StatusCode != http.StatusOK {
		t.Fatalf("the session in use was ended: %d", r.StatusCode)
	}
}
