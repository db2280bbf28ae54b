package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/rpc"
)

// A broken server is the demo server behind a rewrite of one kind of message: each breaks one
// rule on purpose, and must fail exactly the checks for that rule.
type rewrite func(method string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any

func serve(t *testing.T, rw rewrite, before func(method string, r *http.Request, req map[string]json.RawMessage)) string {
	t.Helper()
	srv, err := demo.New(demo.Options{StepDelay: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	inner := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if before != nil {
			before(msg.Method, r, msg.Params)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rw == nil || msg.Method == "subscriptions/listen" { // a stream cannot be buffered
			inner.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			var resp map[string]any
			if json.Unmarshal(out, &resp) == nil {
				if nr := rw(msg.Method, msg.Params, r, resp); nr != nil {
					out, _ = json.Marshal(nr)
				}
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(out)
	}))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL + "/mcp"
}

func run(t *testing.T, url string) []Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	return Run(ctx, Options{HTTP: true, Wait: 20 * time.Second, Connect: func(ctx context.Context, era string) (*rpc.Client, error) {
		tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
		if err != nil {
			return nil, err
		}
		c := rpc.NewClient(tr, rpc.ClientOptions{Protocol: era, Info: rpc.Implementation{Name: "check-test", Version: "1"}})
		if err := c.Connect(ctx); err != nil {
			tr.Close()
			return nil, err
		}
		return c, nil
	}})
}

func failed(rs []Result) []string {
	var ids []string
	for _, r := range rs {
		if r.Status == Fail {
			ids = append(ids, r.Era[:4]+"/"+r.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func TestDemoPassesEveryCheck(t *testing.T) {
	rs := run(t, serve(t, nil, nil))
	if f := failed(rs); len(f) != 0 {
		t.Fatalf("the demo server fails %v: %+v", f, rs)
	}
	eras := map[string]int{}
	for _, r := range rs {
		if r.Status == Skip {
			t.Errorf("skipped against the demo server: %+v", r)
		}
		eras[r.Era]++
	}
	if eras[rpc.VersionModern] < 10 || eras[rpc.VersionLegacy] < 10 {
		t.Errorf("checks per era: %v", eras)
	}
}

func TestBrokenServersFailExactlyTheirChecks(t *testing.T) {
	var mu sync.Mutex
	sleepTasks := map[string]bool{}
	cases := []struct {
		name   string
		rw     rewrite
		before func(string, *http.Request, map[string]json.RawMessage)
		want   []string
	}{
		{"task creation says complete", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			if res, ok := resp["result"].(map[string]any); ok && m == "tools/call" && res["resultType"] == "task" {
				res["resultType"] = "complete"
			}
			return resp
		}, nil, []string{"2026/B24"}},
		{"nested CreateTaskResult on 2026", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			if res, ok := resp["result"].(map[string]any); ok && m == "tools/call" && res["resultType"] == "task" {
				task := map[string]any{}
				for k, v := range res {
					if k != "resultType" && k != "_meta" {
						task[k] = v
						delete(res, k)
					}
				}
				res["task"] = task
			}
			return resp
		}, nil, []string{"2026/B24"}},
		{"terminal status changes", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			res, _ := resp["result"].(map[string]any)
			if res == nil {
				return resp
			}
			if m == "tools/call" && str(req["name"]) == "sleep" {
				task, _ := res["task"].(map[string]any)
				if task == nil {
					task = res
				}
				if id, ok := task["taskId"].(string); ok {
					mu.Lock()
					sleepTasks[id] = false
					mu.Unlock()
				}
			}
			if m == "tasks/get" {
				id, _ := res["taskId"].(string)
				mu.Lock()
				defer mu.Unlock()
				done, tracked := sleepTasks[id]
				if tracked && res["status"] == "completed" {
					if done {
						res["status"] = "working"
					}
					sleepTasks[id] = true
				}
			}
			return resp
		}, nil, []string{"2025/A6", "2026/B33"}},
		{"no ttl", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			if res, ok := resp["result"].(map[string]any); ok && m == "tools/call" {
				delete(res, "ttlMs")
				if task, ok := res["task"].(map[string]any); ok {
					delete(task, "ttl")
				}
			}
			return resp
		}, nil, []string{"2025/A5", "2026/B24"}},
		{"cancel errors on 2026", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			if m == "tasks/cancel" && r.Header.Get("Mcp-Method") != "" {
				delete(resp, "result")
				resp["error"] = map[string]any{"code": -32603, "message": "cannot cancel"}
			}
			return resp
		}, nil, []string{"2026/B28"}},
		{"wrong code for an unknown task", func(m string, req map[string]json.RawMessage, r *http.Request, resp map[string]any) map[string]any {
			if e, ok := resp["error"].(map[string]any); ok && m == "tasks/get" && e["code"] == float64(-32602) {
				e["code"] = -32603
			}
			return resp
		}, nil, []string{"2025/A7", "2026/B29"}},
		{"no header validation", nil, func(m string, r *http.Request, req map[string]json.RawMessage) {
			if m == "tasks/get" && r.Header.Get("Mcp-Name") != "" {
				r.Header.Set("Mcp-Name", str(req["taskId"])) // "fixes" whatever the client sent
			}
		}, []string{"2026/B21"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := failed(run(t, serve(t, c.rw, c.before)))
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("failed checks %v, want exactly %v", got, c.want)
			}
		})
	}
}
