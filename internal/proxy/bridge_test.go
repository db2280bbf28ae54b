package proxy

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptask/mcptask/internal/rpc"
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
