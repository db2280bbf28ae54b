package hostile

// Class 7 (time) and class 9 (the checker bounds its own work): servers that try to hold
// mcptask up, by never answering, by answering with headers and then nothing, by answering
// the opening late, or by listing tools whose inputSchemas make building arguments explode.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// SlowDiscoveryDelay is how late the "slow-discovery" mode answers server/discover and
// initialize: longer than any --timeout a test gives, short enough to end on its own.
const SlowDiscoveryDelay = 5 * time.Second

// maxStall bounds how long a silent handler holds its request when the client never goes
// away, so that a test's server can always shut down.
const maxStall = 2 * time.Minute

func init() {
	Register(Mode{Name: "silent-handshake", Class: 7,
		Doc: "accepts the connection, reads every request (server/discover, initialize, tasks/get, ...) and never answers",
		Wrap: func(_ *Server, _ http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stall(r) })
		}})
	Register(Mode{Name: "stall-after-headers", Class: 7,
		Doc: "answers every request with 200 and text/event-stream headers, then sends nothing",
		Wrap: func(_ *Server, _ http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				stall(r)
			})
		}})
	Register(Mode{Name: "slow-discovery", Class: 7,
		Doc: "answers server/discover and initialize honestly but only after SlowDiscoveryDelay; everything else at once",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if m := methodOf(r); m == "server/discover" || m == "initialize" {
					t := time.NewTimer(SlowDiscoveryDelay)
					defer t.Stop()
					select {
					case <-r.Context().Done():
						return
					case <-t.C:
					}
				}
				next.ServeHTTP(w, r)
			})
		}})
	Register(Mode{Name: "silent-authorization-server", Class: 7,
		Doc: "answers every MCP request 401 naming its protected-resource metadata, whose URL (like every /.well-known one) never answers",
		Wrap: func(s *Server, _ http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/.well-known/") {
					stall(r)
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.Base+`/.well-known/oauth-protected-resource/mcp"`)
				http.Error(w, "login required", http.StatusUnauthorized)
			})
		}})
	Register(Mode{Name: "cyclic-schema", Class: 9,
		Doc: "lists, beside the demo's tools, tools whose inputSchemas are $ref cycles through anyOf/oneOf/allOf, long $ref chains, deep nesting, a huge enum and an array that must hold 10^15 items",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if methodOf(r) != "tools/list" {
					next.ServeHTTP(w, r)
					return
				}
				Rewrite(next, w, r, func(body []byte) []byte {
					return bytes.Replace(body, []byte(`"tools":[`), []byte(`"tools":[`+CyclicTools()+`,`), 1)
				})
			})
		}})
}

// stall holds r unanswered until the client goes away (or maxStall passes).
func stall(r *http.Request) {
	t := time.NewTimer(maxStall)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}

// methodOf is the JSON-RPC method of a POSTed request ("" for anything else). Start has
// buffered the body, so it can be read again.
func methodOf(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	r.Body = readCloser{bytes.NewReader(buf.Bytes())}
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(buf.Bytes(), &m)
	return m.Method
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// CyclicSchemas are the inputSchemas of the "cyclic-schema" mode's tools, by tool name. None
// can be satisfied cheaply (or at all): a checker that follows them naively loops, explodes
// combinatorially or allocates without bound.
func CyclicSchemas() map[string]string {
	alts := make([]string, 200)
	for i := range alts {
		alts[i] = `{"$ref":"#/$defs/loop"}`
	}
	anyOf := `{"type":"object","required":["x"],"properties":{"x":{"$ref":"#/$defs/loop"}},"$defs":{"loop":{"anyOf":[` + strings.Join(alts, ",") + `]}}}`
	oneOf := strings.Replace(anyOf, "anyOf", "oneOf", 1)

	// A chain of 5000 $refs, each to the next, the last back to the first.
	var defs strings.Builder
	const chain = 5000
	for i := range chain {
		if i > 0 {
			defs.WriteByte(',')
		}
		fmt.Fprintf(&defs, `"d%d":{"$ref":"#/$defs/d%d"}`, i, (i+1)%chain)
	}
	refChain := `{"type":"object","required":["x"],"properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{` + defs.String() + `}}`

	// allOf whose parts are the schema itself, twice over, under a required property.
	allOf := `{"type":"object","required":["x","y"],"properties":{"x":{"$ref":"#"},"y":{"allOf":[{"$ref":"#"},{"$ref":"#/properties/y"}]}}}`

	// Nested 2000 objects deep, each requiring the next.
	var deep strings.Builder
	const depth = 2000
	for range depth {
		deep.WriteString(`{"type":"object","required":["a"],"properties":{"a":`)
	}
	deep.WriteString(`{"type":"string"}`)
	for range depth {
		deep.WriteString(`}}`)
	}
	nested := `{"type":"object","required":["a"],"properties":{"a":` + deep.String() + `}}`

	// An array of 10^15 items, each an anyOf that cycles.
	huge := `{"type":"object","required":["x"],"properties":{"x":{"type":"array","minItems":1e15,"items":{"$ref":"#/$defs/loop"}}},"$defs":{"loop":{"anyOf":[` + strings.Join(alts[:20], ",") + `]}}}`

	// An enum of 100000 values, then one under an allOf of itself that is never satisfied.
	enum := make([]string, 100000)
	for i := range enum {
		enum[i] = fmt.Sprint(i)
	}
	bigEnum := `{"type":"object","required":["x","y"],"properties":{"x":{"enum":[` + strings.Join(enum, ",") + `]},"y":{"allOf":[{"$ref":"#/properties/y"},{"enum":[` + strings.Join(enum[:1000], ",") + `]}]}}}`

	return map[string]string{
		"hostile_anyof_cycle": anyOf, "hostile_oneof_cycle": oneOf, "hostile_ref_chain": refChain,
		"hostile_allof_cycle": allOf, "hostile_deep_nesting": nested, "hostile_huge_array": huge,
		"hostile_big_enum": bigEnum,
	}
}

// CyclicTools is the "cyclic-schema" mode's tools as JSON array elements (without the
// brackets), ready to splice into a tools/list result.
var CyclicTools = sync.OnceValue(func() string {
	schemas := CyclicSchemas()
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf(`{"name":%q,"description":"a tool whose inputSchema attacks the checker","inputSchema":%s}`, name, schemas[name]))
	}
	return strings.Join(parts, ",")
})
