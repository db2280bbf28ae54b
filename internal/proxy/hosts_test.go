package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	r := newRig(t, demoUpstream(t, demo.Options{StepDelay: time.Second, PollInterval: 400 * time.Millisecond}))
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
