package check

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

func TestLinterFlagsWhatItSees(t *testing.T) {
	var got []string
	l := NewLinter(func(v Violation) { got = append(got, v.Rule) })
	now := time.Unix(1000, 0)
	l.Now = func() time.Time { return now }
	get := func(body string) {
		l.Observe(rpc.EraModern, "tasks/get", map[string]any{"taskId": "t1"}, json.RawMessage(body), nil)
	}
	l.Observe(rpc.EraModern, "tools/call", nil, json.RawMessage(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`), nil)
	get(`{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"x","lastUpdatedAt":"x","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"a"}}}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"x","lastUpdatedAt":"x","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"b"}}}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"completed","createdAt":"x","lastUpdatedAt":"x","result":{}}`)
	get(`{"resultType":"complete","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x"}`)
	l.Observe(rpc.EraModern, "tasks/update", nil, json.RawMessage(`{"resultType":"task"}`), nil)
	l.Observe(rpc.EraModern, "tools/call", nil, json.RawMessage(`{"resultType":"task","taskId":"t2","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":1}`), nil)
	now = now.Add(time.Second)
	l.Observe(rpc.EraModern, "tasks/get", map[string]any{"taskId": "t2"}, nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown"})
	l.ObserveStream("notifications/progress")
	l.ObserveStream("notifications/tasks/other")
	want := []string{"B32", "B33", "B23", "B25", "B34"}
	if len(got) != len(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("violations %v, want %v", got, want)
		}
	}
}

func TestLinterFlagsTheHost(t *testing.T) {
	var got []Violation
	l := NewLinter(func(v Violation) { got = append(got, v) })
	now := time.Unix(1000, 0)
	l.Now = func() time.Time { return now }
	caps := json.RawMessage(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	hdr := func(method, name string) http.Header {
		h := http.Header{"Mcp-Method": {method}}
		if name != "" {
			h.Set("Mcp-Name", name)
		}
		return h
	}
	req := func(host, method, id string, h http.Header) HostRequest {
		return HostRequest{Host: host, Era: rpc.EraModern, Method: method, TaskID: id, HTTP: true, Header: h, ClientCaps: caps}
	}
	// The server says: poll every second.
	l.Observe(rpc.EraModern, "tools/call", nil, json.RawMessage(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":1000}`), nil)
	l.ObserveHost(req("a", "tasks/get", "t1", hdr("tasks/get", "t1")))
	now = now.Add(900 * time.Millisecond) // within a quarter of the interval: fine
	l.ObserveHost(req("a", "tasks/get", "t1", hdr("tasks/get", "t1")))
	now = now.Add(200 * time.Millisecond) // another host, its first poll: fine
	l.ObserveHost(req("b", "tasks/get", "t1", hdr("tasks/get", "t1")))
	now = now.Add(300 * time.Millisecond) // host b again: too fast
	l.ObserveHost(req("b", "tasks/get", "t1", hdr("tasks/get", "t1")))
	l.ObserveHost(req("a", "tasks/update", "t1", hdr("tasks/update", "t1")))
	now = now.Add(10 * time.Millisecond) // right after an update: fine
	l.ObserveHost(req("a", "tasks/get", "t1", hdr("tasks/get", "t1")))
	l.ObserveHost(req("a", "tasks/result", "t1", hdr("tasks/result", "t1")))
	l.ObserveHost(req("a", "tasks/cancel", "t1", hdr("tasks/cancel", "")))
	l.ObserveHost(req("a", "tasks/update", "t1", hdr("tasks/update", "t2")))
	l.ObserveHost(HostRequest{Host: "a", Era: rpc.EraModern, Method: "tasks/get", TaskID: "t1", HTTP: true, Header: hdr("tasks/get", "t1")})
	l.ObserveHost(HostRequest{Host: "c", Era: rpc.EraLegacy, Method: "tasks/list", ServerCaps: json.RawMessage(`{"tasks":{"cancel":{}}}`)})
	l.ObserveHost(HostRequest{Host: "c", Era: rpc.EraLegacy, Method: "tasks/cancel", ServerCaps: json.RawMessage(`{"tasks":{"cancel":{}}}`)})
	l.ObserveHost(HostRequest{Host: "c", Era: rpc.EraLegacy, Method: "tools/call", TaskParam: true, ServerCaps: json.RawMessage(`{}`)})
	l.ObserveHostError(HostRequest{Host: "c", Method: "tasks/get", TaskID: "never"}, &rpc.Error{Code: rpc.CodeInvalidParams})
	l.ObserveHostError(HostRequest{Host: "c", Method: "tasks/get", TaskID: "t1"}, &rpc.Error{Code: rpc.CodeInvalidParams})
	var rules []string
	for _, v := range got {
		if v.Peer != PeerHost {
			t.Errorf("%s reported against %q, want the host", v.Rule, v.Peer)
		}
		rules = append(rules, v.Rule+"@"+v.Host)
	}
	want := []string{"C24@b", "C28@a", "C10@a", "C10@a", "C19@a", "C4@c", "C4@c", "unknown-task@c"}
	if strings.Join(rules, " ") != strings.Join(want, " ") {
		t.Errorf("violations\n%v, want\n%v", rules, want)
	}
}

// The divergences released SDKs shipped under 2026-07-28 are named by the linter of --record
// and the proxy with the checker's rule ids: the 2025-11-25 related-task key and notification
// (B39), a task stamped complete (B18b), millisecond fields that are not integers (B24b). A
// clean exchange and a 2025-11-25 one that uses its own vocabulary are not flagged.
func TestLinterNamesSDKDivergences(t *testing.T) {
	var got []string
	l := NewLinter(func(v Violation) {
		if v.Section == "" {
			t.Errorf("%s has no section", v.Rule)
		}
		got = append(got, v.Rule)
	})
	obs := func(era rpc.Era, method, body string) {
		l.Observe(era, method, map[string]any{"taskId": "t1"}, json.RawMessage(body), nil)
	}
	obs(rpc.EraModern, "tools/call", `{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":60000,"pollIntervalMs":500}`)
	obs(rpc.EraLegacy, "tasks/get", `{"taskId":"t9","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t9"}}}`)
	obs(rpc.EraModern, "tasks/get", `{"resultType":"complete","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":60000.5,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`)
	obs(rpc.EraModern, "tools/call", `{"resultType":"complete","content":[],"taskId":"t3","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`)
	l.ObserveStream("notifications/tasks/status")
	want := "B39 B24b B18b B39"
	if strings.Join(got, " ") != want {
		t.Errorf("violations %v, want %s", got, want)
	}
}
