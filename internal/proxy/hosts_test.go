package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
)

// rawHost is a hand-driven 2026-07-28 host, to break the rules a real client keeps.
type rawHost struct {
	t    *testing.T
	url  string
	name string
	id   int
}

func (h *rawHost) send(method, mcpName string, params string) (int, map[string]any) {
	h.t.Helper()
	h.id++
	meta := strings.Replace(modernMeta, "raw-host", h.name, 1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`, h.id, method, params, meta)
	hdr := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if mcpName != "" {
		hdr.Set("Mcp-Name", mcpName)
	}
	resp := post(h.t, h.t.Context(), h.url, hdr, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// TestHostRulesAndHostsKeptApart: the rules a host breaks are reported against that host; two
// hosts polling one task each at the right pace are not taken for one host polling too fast.
func TestHostRulesAndHostsKeptApart(t *testing.T) {
	// The hosts break rules on purpose (tasks/result in 2026-07-28): only the demo's side of
	// the traffic must be valid.
	r := newRig(t, checkedDemoUpstream(t, demo.Options{StepDelay: time.Second, PollInterval: 400 * time.Millisecond}, true))
	a := &rawHost{t: t, url: r.url, name: "host-a"}
	b := &rawHost{t: t, url: r.url, name: "host-b"}
	_, res := a.send("tools/call", "sleep", `"name":"sleep","arguments":{"seconds":30}`)
	id, _ := res["result"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", res)
	}
	get := func(h *rawHost, name string) {
		if st, m := h.send("tasks/get", name, fmt.Sprintf(`"taskId":%q`, id)); st != 200 && name == id {
			t.Fatalf("tasks/get: %d %v", st, m)
		}
	}
	// a and b alternate 250 ms apart: each polls every 500 ms (the server asks for 400 ms),
	// the two together every 250 ms.
	for range 3 {
		get(a, id)
		time.Sleep(250 * time.Millisecond)
		get(b, id)
		time.Sleep(250 * time.Millisecond)
	}
	if v := r.ev.rules(); len(v) != 0 {
		t.Fatalf("two well-behaved hosts were flagged: %v", v)
	}
	get(a, id) // 250 ms after b, 500 after its own last: fine
	get(a, id) // at once: too fast
	get(a, "") // no Mcp-Name
	a.send("tasks/result", id, fmt.Sprintf(`"taskId":%q`, id))
	b.send("tasks/get", "nope", `"taskId":"nope"`)
	want := map[string]string{"C24": "host-a/1", "C10": "host-a/1", "C28": "host-a/1", "unknown-task": "host-b/1"}
	for _, ev := range r.ev.of(EventViolation) {
		v := ev.Violation
		host, ok := want[v.Rule]
		if !ok || v.Peer != "host" || !strings.Contains(v.Host, host) {
			t.Errorf("unexpected violation %+v", v)
		}
		delete(want, v.Rule)
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v", want)
	}
	// The record says the same, and who broke the rule.
	for _, l := range checkRecord(t, r.rec.String()) {
		if l["kind"] == "violation" && (l["peer"] != "host" || l["direction"] != ToServer || l["host"] == nil) {
			t.Errorf("violation line %v", l)
		}
	}
}

// TestSessionsKeptApart: two 2025-11-25 hosts through one proxy; each task is recorded with
// the session that made it, and each host is named apart.
func TestSessionsKeptApart(t *testing.T) {
	r := newRig(t, demoUpstream(t, demo.Options{}))
	var sessions []string
	for i := range 2 {
		c := client(t, r.url, rpc.VersionLegacy)
		res, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 1}})
		if err != nil || res.Task == nil {
			t.Fatalf("host %d: %v", i, err)
		}
		rec := record(t, r.store, res.Task.TaskID)
		if rec == nil || rec.SessionID == "" || rec.SessionID != c.SessionID() {
			t.Fatalf("host %d: record %+v, session %q", i, rec, c.SessionID())
		}
		sessions = append(sessions, rec.SessionID)
	}
	if sessions[0] == sessions[1] {
		t.Errorf("both tasks recorded in session %s", sessions[0])
	}
	created := r.ev.of(EventCreated)
	if len(created) != 2 || created[0].Host == created[1].Host {
		t.Errorf("created events %+v", created)
	}
}

// TestTasksBothDirections: a 2025-11-25 server asks the host for a task-augmented sampling
// request on the SSE stream of a tools/call; the host's CreateTaskResult (POSTed back) makes a
// task that lives on the host: shown, but not written to the ledger, which only holds tasks
// mcptask can follow. On a 2026-07-28 listen stream, notifications/tasks update the task's
// status by push, and a progress notification there is the server's violation (B34).
func TestTasksBothDirections(t *testing.T) {
	answered := make(chan []byte, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"result"`): // the host's answer to our request
			answered <- body
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(string(body), "subscriptions/listen"):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, m := range []string{
				`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"taskIds":["srv-task"]},"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`,
				`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"srv-task","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":null,"result":{"content":[]},"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", m)
			}
		default: // a 2025-11-25 tools/call whose stream asks the host for sampling, as a task
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"task":{"ttl":60000},"messages":[],"maxTokens":5}}`)
			w.(http.Flusher).Flush()
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
			}
			fmt.Fprintf(w, "data: %s\n\n", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
		}
	}))
	defer hs.Close()
	r := newRig(t, hs.URL+"/mcp")
	legacy := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {"sess"}}
	resp := post(t, t.Context(), r.url, legacy, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.Contains(line, "sampling/createMessage") {
		t.Fatalf("first event %q", line)
	}
	ans := post(t, t.Context(), r.url, legacy, `{"jsonrpc":"2.0","id":"s1","result":{"task":{"taskId":"host-task","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}}`)
	ans.Body.Close()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	created := r.ev.of(EventCreated)
	if len(created) != 1 || created[0].Task.ID != "host-task" || !created[0].Task.OnHost || created[0].Task.Tool != "sampling/createMessage" {
		t.Fatalf("created %+v", created)
	}
	if rec := record(t, r.store, "host-task"); rec != nil {
		t.Errorf("a task on the host went to the ledger: %+v", rec)
	}

	// A 2026-07-28 listen stream.
	resp = post(t, t.Context(), r.url, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"subscriptions/listen"}},
		`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["srv-task"]},`+modernMeta+`}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var pushed bool
	for _, ev := range r.ev.of(EventStatus) {
		if ev.Task.ID == "srv-task" && ev.Task.Status == "completed" && ev.Via == "push" {
			pushed = true
		}
	}
	if !pushed {
		t.Errorf("notifications/tasks was not taken as a status: %+v", r.ev.of(EventStatus))
	}
	if rules := strings.Join(r.ev.rules(), " "); rules != "B34/server" {
		t.Errorf("violations %q, want B34/server", rules)
	}
}
