package proxy

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

func TestRewriteTools(t *testing.T) {
	in := `{"tools":[{"name":"a","description":"Runs long.","execution":{"taskSupport":"required"}},{"name":"b","execution":{"taskSupport":"optional"}},{"name":"c"}],"nextCursor":"x"}`
	out := rewriteTools(json.RawMessage(in))
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"nextCursor": "x", "tools": []any{
		map[string]any{"name": "a", "description": "Runs long. (mcptask runs it as a task and answers when it ends.)", "execution": map[string]any{"taskSupport": "optional"}},
		map[string]any{"name": "b", "execution": map[string]any{"taskSupport": "optional"}},
		map[string]any{"name": "c"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rewritten list (-want +got):\n%s", d)
	}
	if rewriteTools(json.RawMessage(`{"tools":[{"name":"b","execution":{"taskSupport":"optional"}}]}`)) != nil {
		t.Errorf("a list without required tools was rewritten")
	}
}

func TestBridgeTaskParams(t *testing.T) {
	b := newBridge(New(Options{}), BridgeOptions{})
	legacy, err := b.taskParams(json.RawMessage(`{"name":"t","arguments":{"x":1},"_meta":{"progressToken":7,"k":"v"}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(legacy, &got)
	if d := cmp.Diff(map[string]any{"name": "t", "arguments": map[string]any{"x": 1.0}, "task": map[string]any{}, "_meta": map[string]any{"k": "v"}}, got); d != "" {
		t.Errorf("2025-11-25 task call params (-want +got):\n%s", d)
	}
	modern, err := b.taskParams(json.RawMessage(`{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	_ = json.Unmarshal(modern, &got)
	want := map[string]any{"name": "t", "_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"extensions": map[string]any{rpc.TasksExtension: map[string]any{}}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("2026-07-28 task call params (-want +got):\n%s", d)
	}
	if !modernTasksDeclared(modern) || modernTasksDeclared(json.RawMessage(`{"_meta":{}}`)) {
		t.Errorf("modernTasksDeclared does not read the extension")
	}
}

// TestBridgeAnswersOnlyFromTheHostAsked: the answer to a question the proxy sent one host is
// taken from that host only; another host that makes up (or learns) the id cannot answer it,
// and an id shaped like the proxy's but without its random token is not the proxy's.
func TestBridgeAnswersOnlyFromTheHostAsked(t *testing.T) {
	p := New(Options{})
	b := newBridge(p, BridgeOptions{})
	asked, other := p.hostFor("s:a", "a"), p.hostFor("s:b", "b")
	id := json.RawMessage(strconv.Quote(b.nextID()))
	ch := make(chan *rpc.Message, 1)
	b.hostWaits[asked.key+"\x00"+idKey(id)] = ch
	answer := &rpc.Message{JSONRPC: "2.0", ID: id, Result: json.RawMessage(`{"action":"accept","content":{"name":"Mallory"}}`)}
	b.hostAnswer(other, answer)
	select {
	case <-ch:
		t.Fatal("another host answered the question")
	default:
	}
	if !b.hostAnswer(asked, answer) || len(ch) != 1 {
		t.Fatal("the host asked could not answer")
	}
	if b.isBridgeID(json.RawMessage(`"mcptask-bridge-1"`)) || b.isBridgeID(json.RawMessage(`"mcptask-bridge-0000000000000000-1"`)) {
		t.Error("an id without the proxy's token was taken for one of its own")
	}
}

// TestBridgeMRTRState: the requestState of the proxy's own input_required rounds names its task
// and tool, and no other requestState passes for one: altered, signed by another proxy run or
// for another server. A requestState that is not the proxy's is the server's own.
func TestBridgeMRTRState(t *testing.T) {
	p := New(Options{Server: state.Server{URL: "http://127.0.0.1:1/mcp"}})
	b := newBridge(p, BridgeOptions{})
	q := func(s string) json.RawMessage { return json.RawMessage(strconv.Quote(s)) }
	s := b.mrtrState("task-1", "ask")
	if id, tool, ours, err := b.parseMRTRState(q(s)); id != "task-1" || tool != "ask" || !ours || err != nil {
		t.Fatalf("parse(%s) = %q %q %v %v", s, id, tool, ours, err)
	}
	other := newBridge(p, BridgeOptions{}) // another run of the proxy: another secret
	otherServer := newBridge(New(Options{Server: state.Server{URL: "http://127.0.0.1:2/mcp"}}), BridgeOptions{})
	otherServer.secret = b.secret
	bad := map[string]json.RawMessage{
		"another run":    q(other.mrtrState("task-1", "ask")),
		"another server": q(otherServer.mrtrState("task-1", "ask")),
		"altered":        q(s[:len(s)-3] + "AAA"),
		"no signature":   q(mrtrStatePrefix + "e30"),
		"huge":           q(mrtrStatePrefix + strings.Repeat("A", 5000) + ".A"),
	}
	for name, raw := range bad {
		if _, _, ours, err := b.parseMRTRState(raw); !ours || err == nil {
			t.Errorf("%s: ours %v err %v, want refused", name, ours, err)
		}
	}
	for _, raw := range []json.RawMessage{nil, q("server-state"), json.RawMessage(`{"x":1}`)} {
		if _, _, ours, _ := b.parseMRTRState(raw); ours {
			t.Errorf("%s was taken for the proxy's", raw)
		}
	}
}

// TestHostInputCaps: what a 2026-07-28 request declares it can answer.
func TestHostInputCaps(t *testing.T) {
	meta := func(caps string) json.RawMessage {
		return json.RawMessage(`{"name":"x","_meta":{"io.modelcontextprotocol/clientCapabilities":` + caps + `}}`)
	}
	form := Question{Key: "a", Method: "elicitation/create", Params: json.RawMessage(`{"mode":"form"}`)}
	url := Question{Key: "b", Method: "elicitation/create", Params: json.RawMessage(`{"mode":"url"}`)}
	sample := Question{Key: "c", Method: "sampling/createMessage"}
	for _, tc := range []struct {
		caps string
		want []bool // form, url, sampling
	}{
		{`{}`, nil},
		{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, nil},
		{`{"elicitation":{}}`, []bool{true, false, false}},
		{`{"elicitation":{"url":{}}}`, []bool{false, true, false}},
		{`{"elicitation":{"form":{},"url":{}},"sampling":{}}`, []bool{true, true, true}},
	} {
		c := hostInputCaps(meta(tc.caps))
		if tc.want == nil {
			if c != nil {
				t.Errorf("%s: %+v, want nothing declared", tc.caps, c)
			}
			continue
		}
		if got := []bool{c.can(form), c.can(url), c.can(sample)}; !slices.Equal(got, tc.want) {
			t.Errorf("%s: can form, url, sampling = %v, want %v", tc.caps, got, tc.want)
		}
	}
}
