package rpc

import (
	"bytes"
	"encoding/json"

	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is a scripted MCP server on loopback: answer returns the result (or error) of
// each request; every request is recorded with its headers.
type fakeServer struct {
	t      *testing.T
	url    string
	answer func(method string, params json.RawMessage, h http.Header) (result any, rerr *Error, status int)

	mu    sync.Mutex
	seen  []seenRequest
	other int // requests that were not POSTs
}

type seenRequest struct {
	Method string
	ID     string
	Params json.RawMessage
	Header http.Header
}

func newFakeServer(t *testing.T, answer func(method string, params json.RawMessage, h http.Header) (any, *Error, int)) *fakeServer {
	f := &fakeServer{t: t, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			f.mu.Lock()
			f.other++
			f.mu.Unlock()
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, err := DecodeMessage(body)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, seenRequest{Method: m.Method, ID: string(m.ID), Params: m.Params, Header: r.Header.Clone()})
		f.mu.Unlock()
		if m.IsNotification() || m.IsResponse() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res, rerr, status := f.answer(m.Method, m.Params, r.Header)
		if m.Method == "initialize" && rerr == nil {
			w.Header().Set("Mcp-Session-Id", "sess-1")
		}
		out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if rerr != nil {
			out["error"] = rerr
		} else {
			out["result"] = res
		}
		w.Header().Set("Content-Type", "application/json")
		if status == 0 {
			status = 200
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/mcp"
	return f
}

func (f *fakeServer) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.seen {
		out = append(out, s.Method)
	}
	return out
}

func (f *fakeServer) requests(method string) []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenRequest
	for _, s := range f.seen {
		if s.Method == method {
			out = append(out, s)
		}
	}
	return out
}

func (f *fakeServer) reset() { f.mu.Lock(); f.seen = nil; f.mu.Unlock() }

// client connects a new Client to f with opts, tracing into the returned buffer.
func (f *fakeServer) client(opts ClientOptions) (*Client, *bytes.Buffer, error) {
	var trace bytes.Buffer
	tr, err := NewHTTPTransport(f.url, HTTPOptions{Trace: &TraceOptions{W: &syncWriter{w: &trace}}})
	if err != nil {
		f.t.Fatal(err)
	}
	c := NewClient(tr, opts)
	f.t.Cleanup(func() { c.Close() })
	return c, &trace, c.Connect(f.t.Context())
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

var initializeResult = map[string]any{"protocolVersion": VersionLegacy, "serverInfo": map[string]any{"name": "fake", "version": "1"},
	"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}

func discoverAnswer(versions []string, caps map[string]any) map[string]any {
	return map[string]any{"resultType": "complete", "supportedVersions": versions, "capabilities": caps, "ttlMs": 60000, "cacheScope": "public"}
}

var (
	legacyTasksCaps = map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}
	extCaps         = map[string]any{"tools": map[string]any{}, "extensions": map[string]any{TasksExtension: map[string]any{}}}
	bothVersions    = []string{VersionModern, VersionLegacy}
)

// Auto-detection picks the generation in which the server offers tasks, and says why under
// --trace.
func TestEraChoice(t *testing.T) {
	tests := []struct {
		name     string
		discover func() (any, *Error, int)
		initVer  string
		want     Era
		methods  string
		trace    string
	}{
		{"extension advertised", func() (any, *Error, int) { return discoverAnswer(bothVersions, extCaps), nil, 0 },
			"", EraModern, "server/discover", "advertises the io.modelcontextprotocol/tasks extension"},
		{"half-modern: 2025 tasks capability, no extension", func() (any, *Error, int) { return discoverAnswer(bothVersions, legacyTasksCaps), nil, 0 },
			"", EraLegacy, "server/discover initialize notifications/initialized", "tasks work only through initialize"},
		{"no task support anywhere", func() (any, *Error, int) {
			return discoverAnswer(bothVersions, map[string]any{"tools": map[string]any{}}), nil, 0
		}, "", EraModern, "server/discover", "no task support advertised"},
		{"half-modern but 2026-07-28 only", func() (any, *Error, int) {
			return discoverAnswer([]string{VersionModern}, legacyTasksCaps), nil, 0
		}, "", EraModern, "server/discover", "no task support advertised"},
		{"not a DiscoverResult", func() (any, *Error, int) { return map[string]any{}, nil, 0 },
			"", EraLegacy, "server/discover initialize notifications/initialized", "lacks supportedVersions"},
		{"unsupported version, legacy listed", func() (any, *Error, int) {
			return nil, &Error{Code: CodeUnsupportedVersion, Message: "no", Data: json.RawMessage(`{"supported":["2025-11-25"],"requested":"2026-07-28"}`)}, 400
		}, "", EraLegacy, "server/discover initialize notifications/initialized", "supports 2025-11-25"},
		{"older initialize version accepted", func() (any, *Error, int) { return nil, &Error{Code: CodeMethodNotFound, Message: "no"}, 404 },
			"2025-03-26", EraLegacy, "server/discover initialize notifications/initialized", "negotiated 2025-03-26"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, func(method string, _ json.RawMessage, _ http.Header) (any, *Error, int) {
				switch method {
				case "server/discover":
					return tt.discover()
				case "initialize":
					r := map[string]any{}
					for k, v := range initializeResult {
						r[k] = v
					}
					if tt.initVer != "" {
						r["protocolVersion"] = tt.initVer
					}
					return r, nil, 0
				}
				return map[string]any{}, nil, 0
			})
			c, trace, err := f.client(ClientOptions{})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, trace)
			}
			if c.Era() != tt.want || strings.Join(f.methods(), " ") != tt.methods {
				t.Errorf("era %s after %v, want %s after %s", c.Era(), f.methods(), tt.want, tt.methods)
			}
			if !strings.Contains(trace.String(), tt.trace) {
				t.Errorf("--trace does not say why (%q):\n%s", tt.trace, trace)
			}
			if tt.initVer != "" {
				// The negotiated version goes in the header of every later request.
				c.ListTools(t.Context())
				if got := f.requests("tools/list")[0].Header.Get("Mcp-Protocol-Version"); got != tt.initVer {
					t.Errorf("MCP-Protocol-Version %q, want %q", got, tt.initVer)
				}
			}
		})
	}
}

// A first -32022 naming 2026-07-28 among the supported versions is retried once.
func TestDiscoverRetriesSupportedVersion(t *testing.T) {
	n := 0
	f := newFakeServer(t, func(method string, _ json.RawMessage, _ http.Header) (any, *Error, int) {
		n++
		if n == 1 {
			return nil, &Error{Code: CodeUnsupportedVersion, Message: "try again", Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2026-07-28"}`)}, 400
		}
		return discoverAnswer([]string{VersionModern}, extCaps), nil, 0
	})
	c, trace, err := f.client(ClientOptions{})
	if err != nil || c.Era() != EraModern || len(f.requests("server/discover")) != 2 {
		t.Fatalf("err %v era %s methods %v\n%s", err, c.Era(), f.methods(), trace)
	}
	ids := f.requests("server/discover")
	if ids[0].ID == ids[1].ID {
		t.Errorf("the retry reused id %s", ids[0].ID)
	}
}

// memCache is a MetaCache in memory with a clock the test moves.
type memCache struct {
	mu  sync.Mutex
	now time.Time
	m   map[string]memEntry
}

type memEntry struct {
	data    []byte
	expires time.Time
}

func newMemCache() *memCache { return &memCache{now: time.Unix(1e9, 0), m: map[string]memEntry{}} }

func (c *memCache) Load(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !c.now.Before(e.expires) {
		return nil, false
	}
	return e.data, true
}

func (c *memCache) Store(key string, data []byte, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ttl <= 0 {
		delete(c.m, key)
		return
	}
	c.m[key] = memEntry{data: data, expires: c.now.Add(ttl)}
}

func (c *memCache) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func (c *memCache) keys() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ks []string
	for k := range c.m {
		ks = append(ks, k)
	}
	return strings.Join(ks, "|")
}

// headerTool is a tool with an x-mcp-header annotation.
var headerTool = map[string]any{"name": "route", "inputSchema": map[string]any{"type": "object",
	"properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}}

// modernToolServer answers discover, a cacheable tools/list with scope, and tools/call.
func modernToolServer(t *testing.T, scope string, ttlMs int) *fakeServer {
	return newFakeServer(t, func(method string, params json.RawMessage, h http.Header) (any, *Error, int) {
		switch method {
		case "server/discover":
			d := discoverAnswer([]string{VersionModern}, extCaps)
			d["cacheScope"], d["ttlMs"] = scope, ttlMs
			return d, nil, 0
		case "tools/list":
			return map[string]any{"resultType": "complete", "tools": []any{headerTool}, "ttlMs": ttlMs, "cacheScope": scope}, nil, 0
		case "tools/call":
			return map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "ok"}}}, nil, 0
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no"}, 404
	})
}

func callRoute(t *testing.T, c *Client) {
	t.Helper()
	if _, err := c.CallTool(t.Context(), CallParams{Name: "route", Arguments: map[string]any{"region": "us-west1"}}); err != nil {
		t.Fatal(err)
	}
}

// The first tools/call mirrors the annotated argument (the schema is fetched before the
// call); a fresh cache makes the next run's call its only round trip; the cache honours ttlMs.
func TestParamHeadersAndToolsCache(t *testing.T) {
	f := modernToolServer(t, "public", 60000)
	cache := newMemCache()
	opts := ClientOptions{Cache: cache, CacheServer: f.url, Credential: "cred-a"}

	c, _, err := f.client(opts)
	if err != nil {
		t.Fatal(err)
	}
	callRoute(t, c)
	if got := strings.Join(f.methods(), " "); got != "server/discover tools/list tools/call" {
		t.Fatalf("first run sent %s", got)
	}
	if h := f.requests("tools/call")[0].Header.Get("Mcp-Param-Region"); h != "us-west1" {
		t.Errorf("first tools/call Mcp-Param-Region = %q", h)
	}

	f.reset()
	c2, trace, err := f.client(opts)
	if err != nil {
		t.Fatal(err)
	}
	callRoute(t, c2)
	if got := strings.Join(f.methods(), " "); got != "tools/call" {
		t.Fatalf("a run with a fresh cache sent %s, want the tools/call alone", got)
	}
	if h := f.requests("tools/call")[0].Header.Get("Mcp-Param-Region"); h != "us-west1" {
		t.Errorf("cached-schema tools/call Mcp-Param-Region = %q", h)
	}
	if !strings.Contains(trace.String(), "cached server/discover") || !strings.Contains(trace.String(), "cached list") {
		t.Errorf("--trace does not say the cache was used:\n%s", trace)
	}

	// Past ttlMs the answers are fetched again.
	cache.advance(61 * time.Second)
	f.reset()
	c3, _, _ := f.client(opts)
	callRoute(t, c3)
	if got := strings.Join(f.methods(), " "); got != "server/discover tools/list tools/call" {
		t.Errorf("after ttlMs the run sent %s", got)
	}
}

// A private answer is kept per credential and never shared; ttlMs 0 or missing hints keep
// nothing.
func TestToolsCacheScope(t *testing.T) {
	f := modernToolServer(t, "private", 60000)
	cache := newMemCache()
	c, _, _ := f.client(ClientOptions{Cache: cache, CacheServer: f.url, Credential: "cred-a"})
	callRoute(t, c)
	if strings.Contains(cache.keys(), "public") || !strings.Contains(cache.keys(), "cred-a") {
		t.Errorf("a private answer was stored as %q", cache.keys())
	}
	f.reset()
	c2, _, _ := f.client(ClientOptions{Cache: cache, CacheServer: f.url, Credential: "cred-b"})
	callRoute(t, c2)
	if got := strings.Join(f.methods(), " "); got != "server/discover tools/list tools/call" {
		t.Errorf("another credential reused a private answer: %s", got)
	}

	for _, tt := range []struct {
		scope string
		ttl   int
	}{{"public", 0}, {"", 60000}, {"shared", 60000}} {
		f := modernToolServer(t, tt.scope, tt.ttl)
		cache := newMemCache()
		c, _, _ := f.client(ClientOptions{Cache: cache, CacheServer: f.url})
		callRoute(t, c)
		if k := cache.keys(); k != "" {
			t.Errorf("scope %q ttlMs %d: stored %q", tt.scope, tt.ttl, k)
		}
	}
}

// A -32020 makes the client list the tools again and retry once, with a new id and the
// headers of the fresh schema.
func TestHeaderMismatchRelistsAndRetries(t *testing.T) {
	calls := 0
	f := newFakeServer(t, func(method string, params json.RawMessage, h http.Header) (any, *Error, int) {
		switch method {
		case "server/discover":
			return discoverAnswer([]string{VersionModern}, extCaps), nil, 0
		case "tools/list":
			return map[string]any{"resultType": "complete", "tools": []any{headerTool}, "ttlMs": 60000, "cacheScope": "public"}, nil, 0
		case "tools/call":
			calls++
			if calls == 1 {
				return nil, &Error{Code: CodeHeaderMismatch, Message: "Mcp-Param-Region missing"}, 400
			}
			return map[string]any{"resultType": "complete", "content": []any{}}, nil, 0
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no"}, 404
	})
	cache := newMemCache()
	// A stale list in the cache: the tool had no annotation then.
	stale, _ := json.Marshal(toolsCacheEntry{Tools: []json.RawMessage{json.RawMessage(`{"name":"route","inputSchema":{"type":"object"}}`)}})
	c, _, err := f.client(ClientOptions{Cache: cache, CacheServer: f.url})
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := c.cacheKeys("tools", VersionModern)
	cache.Store(pub, stale, time.Minute)
	callRoute(t, c)
	got := f.requests("tools/call")
	if len(got) != 2 || got[0].Header.Get("Mcp-Param-Region") != "" || got[1].Header.Get("Mcp-Param-Region") != "us-west1" || got[0].ID == got[1].ID {
		t.Fatalf("tools/call attempts: %+v", got)
	}
	if n := len(f.requests("tools/list")); n != 1 {
		t.Errorf("tools/list sent %d times, want 1 (after the -32020)", n)
	}
}

// A cached server/discover that no longer holds (the server now refuses the version) is
// dropped and the server probed again; the request then goes through.
func TestCachedDiscoverReprobes(t *testing.T) {
	modern := true
	f := newFakeServer(t, func(method string, params json.RawMessage, h http.Header) (any, *Error, int) {
		if h.Get("Mcp-Protocol-Version") == VersionModern && !modern {
			return nil, &Error{Code: CodeUnsupportedVersion, Message: "2026-07-28 is gone here", Data: json.RawMessage(`{"supported":["2025-11-25"]}`)}, 400
		}
		switch method {
		case "server/discover":
			return discoverAnswer([]string{VersionModern}, extCaps), nil, 0
		case "initialize":
			return initializeResult, nil, 0
		}
		return map[string]any{"tools": []any{}}, nil, 0
	})
	cache := newMemCache()
	c, _, _ := f.client(ClientOptions{Cache: cache, CacheServer: f.url})
	c.Close()
	modern = false
	f.reset()
	c2, trace, err := f.client(ClientOptions{Cache: cache, CacheServer: f.url})
	if err != nil || c2.Era() != EraModern {
		t.Fatalf("connect from the cache: %v %s", err, c2.Era())
	}
	if _, _, err := c2.ListTools(t.Context()); err != nil {
		t.Fatalf("list after the re-probe: %v\n%s", err, trace)
	}
	if c2.Era() != EraLegacy || !strings.Contains(trace.String(), "probing again") {
		t.Errorf("era %s, methods %v\n%s", c2.Era(), f.methods(), trace)
	}
	if strings.Contains(cache.keys(), "discover") {
		t.Errorf("the stale discover answer is still cached: %s", cache.keys())
	}
}
