package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// listenStream opens a subscriptions/listen stream with the given filter and returns its
// messages as they arrive; the stream is closed when the test ends.
func (e *env) listenStream(filter map[string]any) <-chan *rpc.Message {
	e.t.Helper()
	params := map[string]any{"notifications": filter}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.nextID(), "method": "subscriptions/listen", "params": modernParams(params, capsNone)})
	ctx, cancel := context.WithCancel(e.t.Context())
	e.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/mcp", bytes.NewReader(body))
	req.Header = modernHeaders("subscriptions/listen", params)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		e.t.Fatalf("subscriptions/listen: HTTP %d, Content-Type %q", resp.StatusCode, ct)
	}
	out := make(chan *rpc.Message, 16)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			if m, err := rpc.DecodeMessage([]byte(strings.TrimSpace(data))); err == nil {
				out <- m
			}
		}
	}()
	return out
}

// next returns the next message of a stream, or nil when none comes within d.
func next(ch <-chan *rpc.Message, d time.Duration) *rpc.Message {
	select {
	case m := <-ch:
		return m
	case <-time.After(d):
		return nil
	}
}

// With --conformance the demo declares tools.listChanged and prompts.listChanged, and the
// diagnostic hooks of the suite's server-stateless (test_trigger_tool_change,
// test_trigger_prompt_change) announce a change on every listen stream that asked for it, and
// on no other (C26 SubscriptionFilter: "the server MUST NOT send notification types the client
// has not explicitly requested").
func TestListChangedOnSubscription(t *testing.T) {
	e := newEnv(t, Options{Conformance: true})
	_, m := e.modern("server/discover", map[string]any{}, capsNone)
	caps := mustResult(t, m)["capabilities"].(map[string]any)
	if jsonString(caps["tools"]) != `{"listChanged":true}` || jsonString(caps["prompts"]) != `{"listChanged":true}` {
		t.Errorf("capabilities %s: want tools and prompts with listChanged", jsonString(caps))
	}

	tools := e.listenStream(map[string]any{"toolsListChanged": true})
	prompts := e.listenStream(map[string]any{"promptsListChanged": true})
	for name, s := range map[string]<-chan *rpc.Message{"tools": tools, "prompts": prompts} {
		ack := next(s, 5*time.Second)
		if ack == nil || ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("%s stream: first message %+v, want the acknowledgement", name, ack)
		}
		var p struct {
			Notifications map[string]any `json:"notifications"`
		}
		_ = json.Unmarshal(ack.Params, &p)
		if p.Notifications[name+"ListChanged"] != true {
			t.Errorf("%s stream: the acknowledgement does not honour %sListChanged: %s", name, name, ack.Params)
		}
	}

	for _, c := range []struct {
		tool, method string
		gets, quiet  <-chan *rpc.Message
	}{
		{"test_trigger_tool_change", "notifications/tools/list_changed", tools, prompts},
		{"test_trigger_prompt_change", "notifications/prompts/list_changed", prompts, tools},
	} {
		_, m := e.modern("tools/call", map[string]any{"name": c.tool, "arguments": map[string]any{}}, capsNone)
		if r := mustResult(t, m); r["resultType"] != "complete" {
			t.Errorf("%s: %s", c.tool, m.Result)
		}
		got := next(c.gets, 5*time.Second)
		if got == nil || got.Method != c.method {
			t.Fatalf("%s: the stream that asked got %+v, want %s", c.tool, got, c.method)
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(got.Params, &p)
		if len(p.Meta[rpc.MetaSubscriptionID]) == 0 {
			t.Errorf("%s without the subscription id: %s", c.method, got.Params)
		}
		if leak := next(c.quiet, 200*time.Millisecond); leak != nil {
			t.Errorf("%s: a stream that did not ask got %s %s", c.tool, leak.Method, leak.Params)
		}
	}

	// The plain demo declares no listChanged, has no hooks, and acknowledges no list changes.
	plain := newEnv(t, Options{})
	_, m = plain.modern("server/discover", map[string]any{}, capsNone)
	if caps := mustResult(t, m)["capabilities"].(map[string]any); jsonString(caps["tools"]) != `{}` {
		t.Errorf("plain demo: tools capability %s", jsonString(caps["tools"]))
	}
	ack := next(plain.listenStream(map[string]any{"toolsListChanged": true}), 5*time.Second)
	if ack == nil || strings.Contains(string(ack.Params), "toolsListChanged") {
		t.Errorf("plain demo acknowledged %+v", ack)
	}
	if _, m := plain.modern("tools/call", map[string]any{"name": "test_trigger_tool_change", "arguments": map[string]any{}}, capsNone); m.Error == nil {
		t.Errorf("plain demo has test_trigger_tool_change: %s", m.Result)
	}
}
