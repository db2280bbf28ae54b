// Package spectest checks MCP wire messages against the official JSON Schemas kept in
// ../shared/spec (2025-11-25 core, 2026-07-28 core, and the 2026-07-28 tasks extension). It
// exists for tests only: the rpc, cmd and interop tests put a Recorder in front of a real
// server, so that every message mcptask sends is validated against the spec, not against our
// own reading of it.
package spectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	fileLegacy = "mcp-2025-11-25.schema.json"
	fileModern = "mcp-2026-07-28.schema.json"
	fileExt    = "tasks-ext-2026-07-28.schema.json"
)

// Validator validates client-to-server messages.
type Validator struct {
	mu     sync.Mutex
	c      *jsonschema.Compiler
	cache  map[string]*jsonschema.Schema
	urlFor map[string]string
}

// SpecDir finds the schema files: $MCPTASK_SPEC_DIR when set; else shared/spec beside the
// repository root (../shared/spec from the project root), searched upwards from the working
// directory; else the byte-identical copies mcptask check embeds (internal/check/schemas,
// whose test checks their sha256), so that a clean clone without shared/spec needs no
// download.
func SpecDir() (string, error) {
	if d := os.Getenv("MCPTASK_SPEC_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, fileLegacy)); err != nil {
			return "", fmt.Errorf("$MCPTASK_SPEC_DIR=%s lacks %s", d, fileLegacy)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	repo := ""
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "spec"), filepath.Join(dir, "..", "shared", "spec")} {
			if _, err := os.Stat(filepath.Join(cand, fileLegacy)); err == nil {
				return filepath.Clean(cand), nil
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && repo == "" {
			repo = dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if repo != "" {
		cand := filepath.Join(repo, "internal", "check", "schemas")
		if _, err := os.Stat(filepath.Join(cand, fileLegacy)); err == nil {
			return cand, nil
		}
	}
	return "", fmt.Errorf("the MCP schemas (%s) are neither in shared/spec above the working directory nor in internal/check/schemas: set MCPTASK_SPEC_DIR", fileLegacy)
}

// Load returns a Validator, or skips the test (failing it under CI=true) when the schemas are
// not beside the repository.
func Load(t testing.TB) *Validator {
	t.Helper()
	dir, err := SpecDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("spectest: %v", err)
		}
		t.Skipf("spectest: %v", err)
	}
	v, err := New(dir)
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	return v
}

// New loads the three schema files from dir.
func New(dir string) (*Validator, error) {
	v := &Validator{c: jsonschema.NewCompiler(), cache: map[string]*jsonschema.Schema{}, urlFor: map[string]string{}}
	for _, f := range []string{fileLegacy, fileModern, fileExt} {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		url := "file:///spec/" + f
		if m, ok := doc.(map[string]any); ok {
			if id, ok := m["$id"].(string); ok {
				url = id
			}
		}
		if err := v.c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("add %s: %w", f, err)
		}
		v.urlFor[f] = url
	}
	return v, nil
}

// Def validates instance against the definition def of schema file f.
func (v *Validator) Def(f, def string, instance []byte) error {
	v.mu.Lock()
	key := f + "#" + def
	sch, ok := v.cache[key]
	if !ok {
		var err error
		sch, err = v.c.Compile(v.urlFor[f] + "#/$defs/" + def)
		if err != nil {
			v.mu.Unlock()
			return fmt.Errorf("compile %s %s: %w", f, def, err)
		}
		v.cache[key] = sch
	}
	v.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s %s: %v", f, def, err)
	}
	return nil
}

var legacyDefs = map[string]string{
	"initialize":                "InitializeRequest",
	"notifications/initialized": "InitializedNotification",
	"notifications/cancelled":   "CancelledNotification",
	"ping":                      "PingRequest",
	"tools/list":                "ListToolsRequest",
	"tools/call":                "CallToolRequest",
	"tasks/get":                 "GetTaskRequest",
	"tasks/result":              "GetTaskPayloadRequest",
	"tasks/list":                "ListTasksRequest",
	"tasks/cancel":              "CancelTaskRequest",
}

var modernCoreDefs = map[string]string{
	"server/discover":         "DiscoverRequest",
	"tools/list":              "ListToolsRequest",
	"tools/call":              "CallToolRequest",
	"subscriptions/listen":    "SubscriptionsListenRequest",
	"notifications/cancelled": "CancelledNotification",
}

var modernExtDefs = map[string]string{
	"tasks/get":    "GetTaskRequest",
	"tasks/update": "UpdateTaskRequest",
	"tasks/cancel": "CancelTaskRequest",
}

// Message validates one client-to-server message. Its era is read from the message itself:
// a request whose params._meta carries a protocolVersion is modern (2026-07-28).
// Responses (2025-11-25 answers to server requests) are checked as JSON-RPC responses whose
// result matches the request kind given in respondsTo ("" when unknown).
func (v *Validator) Message(body []byte, respondsTo string) error {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if m.Method == "" {
		if err := v.Def(fileLegacy, "JSONRPCResponse", body); err != nil {
			if m.Error == nil {
				return err
			}
		}
		if respondsTo == "elicitation/create" && m.Result != nil {
			return v.Def(fileLegacy, "ElicitResult", m.Result)
		}
		return nil
	}
	_, modern := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]
	if !modern {
		def, ok := legacyDefs[m.Method]
		if !ok {
			return fmt.Errorf("method %q is not a 2025-11-25 client request mcptask should send", m.Method)
		}
		return v.Def(fileLegacy, def, body)
	}
	if def, ok := modernCoreDefs[m.Method]; ok {
		return v.Def(fileModern, def, body)
	}
	def, ok := modernExtDefs[m.Method]
	if !ok {
		return fmt.Errorf("method %q is not a 2026-07-28 client request mcptask should send", m.Method)
	}
	if err := v.Def(fileExt, def, body); err != nil {
		return err
	}
	// The extension's request schemas leave _meta open; the core says what it must hold.
	var p struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &p)
	if p.Params.Meta == nil {
		return fmt.Errorf("%s has no params._meta (C26-BASIC: required)", m.Method)
	}
	return v.Def(fileModern, "RequestMetaObject", p.Params.Meta)
}

// Recorder is an http.Handler that validates every POSTed message before passing it on, and
// every JSON-RPC message the server behind it answers with (JSON bodies and SSE events, by the
// method and era of the request), and remembers what it saw.
type Recorder struct {
	V    *Validator
	Next http.Handler
	// ServerOnly skips the validation of what the client sent: for tests that send malformed
	// requests on purpose and check the server's answer to them.
	ServerOnly bool

	mu      sync.Mutex
	errs    []string
	methods []string
	bodies  [][]byte
}

// ServeHTTP validates the body of a POST, forwards the request unchanged, and validates what
// the server sent back.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	era, method := EraLegacy, ""
	if req.Method == http.MethodPost {
		body, _ := io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
		era, method = requestEra(body)
		var err error
		if !r.ServerOnly {
			err = r.V.Message(body, "")
		}
		r.mu.Lock()
		r.methods = append(r.methods, method)
		r.bodies = append(r.bodies, body)
		if err != nil {
			r.errs = append(r.errs, fmt.Sprintf("%s: %v\n  body: %s", method, err, body))
		}
		r.mu.Unlock()
	}
	cw := &captureWriter{ResponseWriter: w}
	r.Next.ServeHTTP(cw, req)
	if cw.buf.Len() == 0 {
		return
	}
	errs := r.V.ServerBody(era, method, cw.Header().Get("Content-Type"), cw.buf.Bytes())
	r.mu.Lock()
	for _, err := range errs {
		r.errs = append(r.errs, fmt.Sprintf("server sent: %v", err))
	}
	r.mu.Unlock()
}

// Methods returns the methods of the messages seen so far, in order ("" for responses).
func (r *Recorder) Methods() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.methods...)
}

// Bodies returns the raw bodies seen so far.
func (r *Recorder) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// Errors returns the validation failures seen so far, one per message.
func (r *Recorder) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Check fails t for every message that did not validate.
func (r *Recorder) Check(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		t.Errorf("message does not match the spec schema: %s", e)
	}
}
