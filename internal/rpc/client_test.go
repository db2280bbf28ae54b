package rpc

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeHeaderValue(t *testing.T) {
	// The examples table of C26-HTTP §Value Encoding.
	tests := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"with inner space", "with inner space"},
		{"786512e2-9e0d-44bd-8f29-789f320fe840", "786512e2-9e0d-44bd-8f29-789f320fe840"},
	}
	for _, tt := range tests {
		got := EncodeHeaderValue(tt.in)
		if got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != tt.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", got, back, err, tt.in)
		}
	}
}

func TestHeaderParams(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		args    map[string]any
		want    http.Header
		wantErr bool
	}{
		{
			name:   "string and nested integer",
			schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"},"opts":{"type":"object","properties":{"shard":{"type":"integer","x-mcp-header":"Shard"}}}}}`,
			args:   map[string]any{"region": "us-west1", "q": "x", "opts": map[string]any{"shard": float64(7)}},
			want:   http.Header{"Mcp-Param-Region": {"us-west1"}, "Mcp-Param-Shard": {"7"}},
		},
		{
			name:   "absent and null values omit the header",
			schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"flag":{"type":"boolean","x-mcp-header":"Flag"}}}`,
			args:   map[string]any{"region": nil},
			want:   http.Header{},
		},
		{
			name:   "boolean and non-ASCII",
			schema: `{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"},"g":{"type":"string","x-mcp-header":"Greeting"}}}`,
			args:   map[string]any{"flag": true, "g": "Hello, 世界"},
			want:   http.Header{"Mcp-Param-Flag": {"true"}, "Mcp-Param-Greeting": {"=?base64?SGVsbG8sIOS4lueVjA==?="}},
		},
		{name: "number type is not allowed", schema: `{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}`, wantErr: true},
		{name: "under items is not reachable", schema: `{"properties":{"xs":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}}`, wantErr: true},
		{name: "under oneOf is not reachable", schema: `{"properties":{"x":{"oneOf":[{"type":"string","x-mcp-header":"X"}]}}}`, wantErr: true},
		{name: "duplicate names", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, wantErr: true},
		{name: "not a token", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := headerParams(json.RawMessage(tt.schema))
			if tt.wantErr {
				if err == nil {
					t.Fatal("want an error for an invalid x-mcp-header annotation")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := paramHeaders(&Tool{InputSchema: json.RawMessage(tt.schema)}, tt.args)
			if got == nil {
				got = http.Header{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeCallResult(t *testing.T) {
	ttl := 60 * time.Second
	tests := []struct {
		name     string
		era      Era
		res      string
		wantKind ResultKind
		wantTask *Task
		wantErr  error
	}{
		{
			name:     "modern plain result",
			era:      EraModern,
			res:      `{"resultType":"complete","content":[{"type":"text","text":"hi"}]}`,
			wantKind: KindComplete,
		},
		{
			name:     "legacy plain result has no resultType",
			era:      EraLegacy,
			res:      `{"content":[{"type":"text","text":"hi"}]}`,
			wantKind: KindComplete,
		},
		{
			name:     "modern absent resultType is complete",
			era:      EraModern,
			res:      `{"content":[]}`,
			wantKind: KindComplete,
		},
		{
			name:     "modern flat task",
			era:      EraModern,
			res:      `{"resultType":"task","taskId":"t1","status":"working","statusMessage":"go","createdAt":"2026-11-22T10:00:00Z","lastUpdatedAt":"2026-11-22T10:00:01Z","ttlMs":60000,"pollIntervalMs":500}`,
			wantKind: KindTask,
			wantTask: &Task{TaskID: "t1", Status: StatusWorking, StatusMessage: "go", CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), LastUpdatedAt: time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC), TTL: &ttl, PollInterval: 500 * time.Millisecond},
		},
		{
			name:     "legacy nested task with null ttl",
			era:      EraLegacy,
			res:      `{"task":{"taskId":"t2","status":"working","createdAt":"2026-11-22T10:00:00Z","lastUpdatedAt":"2026-11-22T10:00:00Z","ttl":null,"pollInterval":2000},"_meta":{"io.modelcontextprotocol/model-immediate-response":"soon"}}`,
			wantKind: KindTask,
			wantTask: &Task{TaskID: "t2", Status: StatusWorking, CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), LastUpdatedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), PollInterval: 2 * time.Second},
		},
		{
			name:     "modern MRTR input_required",
			era:      EraModern,
			res:      `{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"ok?"}}},"requestState":"opaque"}`,
			wantKind: KindInputRequired,
		},
		{name: "unknown resultType is invalid", era: EraModern, res: `{"resultType":"incomplete","content":[]}`, wantErr: ErrMalformed},
		{name: "task without id", era: EraModern, res: `{"resultType":"task","status":"working"}`, wantErr: ErrMalformed},
		{name: "task with bad status", era: EraModern, res: `{"resultType":"task","taskId":"x","status":"running"}`, wantErr: ErrMalformed},
		{name: "non-positive poll interval is absent", era: EraModern, res: `{"resultType":"task","taskId":"x","status":"working","ttlMs":null,"pollIntervalMs":-5}`, wantKind: KindTask, wantTask: &Task{TaskID: "x", Status: StatusWorking}},
		{name: "not an object", era: EraModern, res: `[1,2]`, wantErr: ErrMalformed},
		{name: "result without content", era: EraLegacy, res: `{"isError":false}`, wantErr: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCallResult(json.RawMessage(tt.res), tt.era)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tt.wantKind {
				t.Fatalf("kind = %v, want %v", got.Kind, tt.wantKind)
			}
			if tt.wantTask != nil {
				opt := cmp.FilterPath(func(p cmp.Path) bool {
					s := p.String()
					return s == "Raw" || s == "InputRequests" || s == "Result" || s == "Error"
				}, cmp.Ignore())
				if diff := cmp.Diff(tt.wantTask, got.Task, opt); diff != "" {
					t.Errorf("task (-want +got):\n%s", diff)
				}
				if string(got.Raw) != tt.res {
					t.Errorf("Raw is not the wire object")
				}
			}
			if tt.wantKind == KindInputRequired && (got.RequestState != "opaque" || len(got.InputRequests) != 1) {
				t.Errorf("MRTR fields = %q %v", got.RequestState, got.InputRequests)
			}
		})
	}
}

func TestModernResult(t *testing.T) {
	done, _ := DecodeTask(json.RawMessage(`{"taskId":"a","status":"completed","ttlMs":null,"result":{"content":[{"type":"text","text":"x"}],"isError":true}}`))
	tr, _, err := ModernResult(done)
	if err != nil || !tr.IsError || tr.Content[0].Text != "x" {
		t.Errorf("completed isError task: %+v, %v (EXT: isError results are completed, not failed)", tr, err)
	}
	failed, _ := DecodeTask(json.RawMessage(`{"taskId":"a","status":"failed","ttlMs":null,"error":{"code":-32603,"message":"boom"}}`))
	_, _, err = ModernResult(failed)
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Code != -32603 {
		t.Errorf("failed task: err = %v, want the inline JSON-RPC error", err)
	}
	working, _ := DecodeTask(json.RawMessage(`{"taskId":"a","status":"working","ttlMs":null}`))
	if _, _, err := ModernResult(working); !errors.Is(err, ErrNotTerminal) {
		t.Errorf("working task: err = %v, want ErrNotTerminal", err)
	}
}

func TestFallsBackToLegacy(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"unsupported version is modern", &Error{Code: CodeUnsupportedVersion, HTTPStatus: 400}, false},
		{"header mismatch is modern", &Error{Code: CodeHeaderMismatch, HTTPStatus: 400}, false},
		{"missing capability is modern", &Error{Code: CodeMissingCapability, HTTPStatus: 400}, false},
		{"method not found", &Error{Code: CodeMethodNotFound}, true},
		{"invalid params", &Error{Code: CodeInvalidParams}, true},
		{"implementation-defined not initialized", &Error{Code: -32000, HTTPStatus: 400}, true},
		{"405 without body", &HTTPError{Status: 405}, true},
		{"400 non-JSON body", &HTTPError{Status: 400, Body: "Bad Request"}, true},
		{"500 is a failure, not an era", &HTTPError{Status: 500}, false},
		{"401 is a failure", &HTTPError{Status: 401}, false},
		{"connection refused", ErrTransport, false},
	}
	for _, tt := range tests {
		if got := fallsBackToLegacy(tt.err); got != tt.want {
			t.Errorf("%s: fallsBackToLegacy = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzDecodeCallResult(f *testing.F) {
	for _, s := range []string{
		`{"resultType":"task","taskId":"t","status":"working","ttlMs":1000,"pollIntervalMs":5}`,
		`{"task":{"taskId":"t","status":"working","ttl":null}}`,
		`{"content":[{"type":"text","text":"x"}]}`,
		`{"resultType":"input_required","inputRequests":{"a":{}}}`,
		`{"resultType":7}`,
		`{"task":null}`,
		`{"resultType":"task","taskId":"t","status":"working","createdAt":"bogus"}`,
		`{"resultType":"task","taskId":"t","status":"working","ttlMs":1e300}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, modern bool) {
		era := EraLegacy
		if modern {
			era = EraModern
		}
		res, err := DecodeCallResult(data, era)
		if err != nil {
			return
		}
		switch res.Kind {
		case KindTask:
			if res.Task == nil || res.Task.TaskID == "" || !res.Task.Status.Valid() {
				t.Fatalf("accepted a task without id or valid status: %s", data)
			}
			if res.Task.PollInterval < 0 || (res.Task.TTL != nil && *res.Task.TTL < 0) {
				t.Fatalf("negative durations accepted: %s", data)
			}
		case KindComplete:
			if res.Tool == nil {
				t.Fatalf("complete result without tool result: %s", data)
			}
		}
	})
}

func FuzzDecodeTask(f *testing.F) {
	f.Add([]byte(`{"taskId":"t","status":"completed","ttlMs":null,"result":{"content":[]}}`))
	f.Add([]byte(`{"taskId":"t","status":"failed","ttl":5,"error":{"code":1,"message":"m"}}`))
	f.Add([]byte(`{"taskId":"t","status":"input_required","ttlMs":5,"inputRequests":{"k":{"method":"elicitation/create"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := DecodeTask(data)
		if err != nil {
			return
		}
		if task.Status.Terminal() && task.Status == StatusCompleted {
			_, _, _ = ModernResult(task)
		}
	})
}

func TestHugeDurationsClamp(t *testing.T) {
	task, err := DecodeTask(json.RawMessage(`{"taskId":"t","status":"working","ttlMs":1e300,"pollIntervalMs":1e300}`))
	if err != nil {
		t.Fatal(err)
	}
	if task.TTL == nil || *task.TTL <= 0 || task.PollInterval <= 0 {
		t.Errorf("ttl %v poll %v: a huge value must clamp to the maximum, not wrap", task.TTL, task.PollInterval)
	}
}
