// Package checktest is a small MCP task server for testing `mcptask check`: it speaks both
// protocol generations over Streamable HTTP (MCP 2026-07-28 with the io.modelcontextprotocol/tasks
// extension, MCP 2025-11-25 with its core tasks) and is conformant unless it is told to break
// one rule, with a Fault.
//
// It is deliberately its own implementation of the wire protocol, built on the standard library
// only: it imports neither internal/rpc nor internal/demo, so a misreading of the spec in the
// client or in the demo cannot be repeated here and hide itself.
//
// Its tools carry ordinary names, so that the checker has to learn what each does by calling
// it: summarize (a task that completes), validate (a task whose tool result has isError),
// explode (a task that fails with a JSON-RPC error), interview (a task that asks for input),
// crawl (a task that runs until it is cancelled), lookup (never a task) and wipe (annotated
// destructiveHint: it must never be called unless named). In 2026-07-28 it also declares prompts
// and resources, with empty lists, so that the cache hints of every list result can be judged.
package checktest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/taskstatus"
)

// Fault names one deliberate defect. The empty Fault is a clean server.
type Fault string

// The faults. Each breaks exactly one rule (in one era, or in both where the rule exists in
// both); the comment says what the server does wrong.
const (
	Clean Fault = ""

	// 2026-07-28 discovery and general rules.
	DiscoverNoCacheHints  Fault = "discover-no-cache-hints"  // server/discover lacks ttlMs and cacheScope
	ListNoCacheHints      Fault = "list-no-cache-hints"      // tools/list lacks ttlMs and cacheScope
	PromptsNoCacheHints   Fault = "prompts-no-cache-hints"   // prompts/list lacks ttlMs and cacheScope
	ResourcesNoCacheHints Fault = "resources-no-cache-hints" // resources/list lacks ttlMs and cacheScope
	TemplatesNoCacheHints Fault = "templates-no-cache-hints" // resources/templates/list lacks ttlMs and cacheScope
	DiscoverNoServerInfo  Fault = "discover-no-serverinfo"   // no _meta serverInfo on server/discover
	DiscoverLegacyCaps    Fault = "discover-legacy-caps"     // capabilities.tasks next to the extension
	ExtensionSettings     Fault = "extension-settings"       // the extension's settings object is not {}
	HalfModern            Fault = "half-modern"              // 2026-07-28 listed, 2025-style tasks capability, no extension
	NoResultTypeOnGet     Fault = "no-resulttype-on-get"     // tasks/get results lack resultType
	NoResultTypeOnCreate  Fault = "no-resulttype-on-create"  // CreateTaskResult lacks resultType
	MetaNotRequired       Fault = "meta-not-required"        // requests without clientCapabilities are served
	AnyVersion            Fault = "any-version"              // any protocol version is accepted
	NoNameValidation      Fault = "no-name-validation"       // a wrong Mcp-Name is accepted
	VersionHeaderCode     Fault = "version-header-code"      // header/body version mismatch answered -32022, not -32020
	PingAnswered          Fault = "ping-answered"            // ping is answered under 2026-07-28
	TasksResultAnswered   Fault = "tasks-result-answered"    // tasks/result is answered under 2026-07-28
	TasksListAnswered     Fault = "tasks-list-answered"      // tasks/list is answered under 2026-07-28
	TaskWithoutExt        Fault = "task-without-ext"         // a task is returned to a client without the extension
	RequiredWrongCode     Fault = "required-wrong-code"      // a task-only tool without the extension: -32601, not -32021
	NoExtensionGate       Fault = "no-extension-gate"        // tasks/* served to a client without the extension
	NestedCreate          Fault = "nested-create"            // CreateTaskResult nests the task under "task"
	GetNotConsistent      Fault = "get-not-consistent"       // the first tasks/get of every task says unknown
	FailedNoError         Fault = "failed-no-error"          // a failed task has no error
	ResultChanges         Fault = "result-changes"           // a finished task's result differs on the next poll
	CancelEnvelope        Fault = "cancel-envelope"          // the tasks/cancel ack carries the task
	CancelUnknownAck      Fault = "cancel-unknown-ack"       // tasks/cancel of an unknown id is acknowledged
	CancelFinishedError   Fault = "cancel-finished-error"    // tasks/cancel of a finished task is an error (allowed: warn)
	UpdateEnvelope        Fault = "update-envelope"          // the tasks/update ack carries the task
	InputKeyReused        Fault = "input-key-reused"         // an inputRequests key is reused for another request
	EarlyExpiry           Fault = "early-expiry"             // finished tasks vanish long before their ttl / ttlMs (both eras)
	ListenNoAck           Fault = "listen-no-ack"            // subscriptions/listen sends no acknowledgement first
	ContentNoText         Fault = "content-no-text"          // a text content block without text (schema only)
	DiscoverResultType    Fault = "discover-resulttype"      // server/discover says resultType "done"
	MissingCapNoData      Fault = "missing-cap-no-data"      // -32021 errors carry no data.requiredCapabilities
	UndeclaredExtension   Fault = "undeclared-extension"     // server/discover omits the extension, yet tasks are served to clients that declare it
	StampedComplete       Fault = "stamped-complete"         // a task's CreateTaskResult says resultType complete, with empty content (TS SDK v2 #2637)
	FractionalMs          Fault = "fractional-ms"            // ttlMs and pollIntervalMs are not integers (1500.5)
	LegacyVocabulary      Fault = "legacy-vocabulary"        // related-task _meta on tasks/get, notifications/tasks/status on the listen stream (C# SDK 2.0.0-preview.3)
	CancelCompletes       Fault = "cancel-completes"         // a task cancelled while working ends completed (allowed: warn)
	UpdateIgnored         Fault = "update-ignored"           // tasks/update is acknowledged, but the task stays input_required
	ListenNoGate          Fault = "listen-no-gate"           // subscriptions/listen for task ids is served without the extension
	HybridTaskParam       Fault = "hybrid-task-param"        // the 2025-11-25 task param makes a task under 2026-07-28, without the extension
	UpdateUnknownAck      Fault = "update-unknown-ack"       // tasks/update of an unknown id is acknowledged (SHOULD: warn)

	// 2025-11-25 rules.
	LegacyCapsKey        Fault = "legacy-caps-key"        // an unknown key under capabilities.tasks
	LegacyFlatCreate     Fault = "legacy-flat-create"     // CreateTaskResult not nested under "task"
	LegacyRequiredCode   Fault = "legacy-required-code"   // a required tool without task: a plain result, not -32601
	LegacyForbiddenTask  Fault = "legacy-forbidden-task"  // a forbidden tool called with task is served (SHOULD: warn)
	LegacyFirstStatus    Fault = "legacy-first-status"    // CreateTaskResult says input_required, not working
	LegacyCancelTerminal Fault = "legacy-cancel-terminal" // cancelling a finished task succeeds
	LegacyCancelNoop     Fault = "legacy-cancel-noop"     // tasks/cancel answers cancelled but the task goes on
	LegacyNoRelatedTask  Fault = "legacy-no-related-task" // tasks/result lacks related-task meta
	LegacyElicitNoMeta   Fault = "legacy-elicit-no-meta"  // the input request lacks related-task meta
	LegacyGetRelated     Fault = "legacy-get-related"     // tasks/get carries related-task meta (SHOULD NOT: warn)
	LegacyListMissing    Fault = "legacy-list-missing"    // tasks/list leaves finished tasks out
	LegacyVersionHeader  Fault = "legacy-version-header"  // an invalid MCP-Protocol-Version is accepted
	LegacyCapsTypes      Fault = "legacy-caps-types"      // capabilities.tasks.list is true, not an object
	LegacyUndeclared     Fault = "legacy-undeclared"      // no tasks capability, yet task-augmented calls make tasks
	LegacyResultEarly    Fault = "legacy-result-early"    // tasks/result of a task that asks for input answers at once, never asking
	LegacyFailedSuccess  Fault = "legacy-failed-success"  // tasks/result of a failed task is a success-shaped result
	LegacyTerminalLate   Fault = "legacy-terminal-late"   // a completed task turns working again, four polls later
	LegacyCancelLate     Fault = "legacy-cancel-late"     // a cancelled task says completed, three polls after the cancel
	LegacyBadCursor      Fault = "legacy-bad-cursor"      // tasks/list ignores a cursor it never gave
	LegacyNotifyChanges  Fault = "legacy-notify-changes"  // a status notification turns a completed task working again
	LegacyNotifyRelated  Fault = "legacy-notify-related"  // status notifications carry related-task meta (SHOULD NOT: warn)
	LegacyMetaWins       Fault = "legacy-meta-wins"       // tasks/get takes the task from related-task meta over taskId
	LegacyResultError    Fault = "legacy-result-error"    // tasks/result of a working task answers an error at once, not waiting (mcp-framework 0.2.22)
	// LegacyNotifyFlood is not a broken rule but a hostile stream: the first status of every
	// task is sent 20000 times (each one valid). The checker judges what it keeps and stays in
	// its budget.
	LegacyNotifyFlood Fault = "legacy-notify-flood"

	// Both eras.
	TerminalChanges Fault = "terminal-changes" // a completed task turns working again
	IsErrorFlipped  Fault = "iserror-flipped"  // isError: failed under 2026-07-28, completed under 2025-11-25
	NoTTL           Fault = "no-ttl"           // tasks lack ttl / ttlMs
	UnknownIDCode   Fault = "unknown-id-code"  // an unknown task id on tasks/get is -32603
	WeakIDs         Fault = "weak-ids"         // task ids are short counters
)

// Tool sets.
const (
	// AllTools is every tool described in the package comment.
	AllTools = ""
	// RequiredArgs offers only task tools whose arguments are required and constrained, and
	// refuses a call whose arguments do not satisfy the schema.
	RequiredArgs = "required-args"
	// InputOnly offers one task tool, which asks for input, and one plain tool.
	InputOnly = "input-only"
	// Conformance offers the fixture tools the official conformance suite's tasks scenarios
	// call by name (greet, slow_compute, failing_job, protocol_error_job), so that the suite
	// and the checker can judge the same server.
	Conformance = "conformance"
)

// Options configure a Server.
type Options struct {
	Fault Fault
	Tools string
	// Step is how long a task works before it finishes (30 ms when zero).
	Step time.Duration
	// PollMs is the poll interval the tasks suggest (10 ms when zero).
	PollMs int
	// NoTemplates answers resources/templates/list with -32601, as a server whose resources
	// have no templates may (not a fault).
	NoTemplates bool
}

// Server is a running test server.
type Server struct {
	URL string

	o     Options
	hs    *httptest.Server
	start time.Time

	mu       sync.Mutex
	tasks    map[string]*task
	sessions map[string]bool
	pending  map[string]chan json.RawMessage // elicitation id -> answer
	nextID   int
	calls    map[string]int // tool name -> calls, in any era
	wipe     atomic.Bool
	quit     chan struct{} // closed when the test ends, to end the open streams
}

// Start runs a server on loopback until the test ends.
func Start(t interface {
	Helper()
	Cleanup(func())
}, o Options) *Server {
	t.Helper()
	if o.Step <= 0 {
		o.Step = 30 * time.Millisecond
	}
	s := &Server{o: o, start: time.Now(), tasks: map[string]*task{}, sessions: map[string]bool{},
		pending: map[string]chan json.RawMessage{}, calls: map[string]int{}, quit: make(chan struct{})}
	s.hs = httptest.NewServer(s)
	s.URL = s.hs.URL + "/mcp"
	t.Cleanup(s.hs.Close)
	t.Cleanup(func() { close(s.quit) }) // runs first: the streams end, then the server closes
	return s
}

// Calls reports how many times the tool was called, in any era.
func (s *Server) Calls(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tool]
}

func (s *Server) is(f Fault) bool { return s.o.Fault == f }

// ---------------------------------------------------------------------------------------------
// Tools

type tool struct {
	name, desc string
	schema     string
	// support is the 2025-11-25 execution.taskSupport ("" = absent).
	support string
	// kind says what a call does: complete, iserror, fail, input, long, sync.
	kind        string
	destructive bool
}

func (s *Server) tools() []tool {
	switch s.o.Tools {
	case RequiredArgs:
		return []tool{
			{"summarize", "Summarize with options.", `{"type":"object","properties":{
				"count":{"type":"integer","minimum":2,"maximum":5},
				"mode":{"type":"string","enum":["fast","slow"]},
				"label":{"type":"string","minLength":3},
				"tags":{"type":"array","items":{"type":"string"},"minItems":1},
				"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"required":["deep"]}},
				"required":["count","mode","label","tags","opts"]}`, "optional", "complete", false},
			{"crawl", "Crawl to a depth.", `{"type":"object","properties":{"depth":{"type":"integer","minimum":1}},"required":["depth"]}`, "required", "long", false},
		}
	case Conformance:
		return []tool{
			{"greet", "Greet someone.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, "", "sync", false},
			{"slow_compute", "Sleep some seconds, then answer.", `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"default":1},"label":{"type":"string"}}}`, "optional", "complete", false},
			{"failing_job", "A job whose tool reports an error.", `{"type":"object","properties":{}}`, "required", "iserror", false},
			{"protocol_error_job", "A job that crashes.", `{"type":"object","properties":{}}`, "optional", "fail", false},
		}
	case InputOnly:
		return []tool{
			{"interview", "Ask a few questions.", `{"type":"object","properties":{}}`, "required", "input", false},
			{"lookup", "Look a word up.", `{"type":"object","properties":{"word":{"type":"string"}}}`, "", "sync", false},
		}
	}
	return []tool{
		{"summarize", "Summarize some text.", `{"type":"object","properties":{"text":{"type":"string","default":"hello"}}}`, "optional", "complete", false},
		{"validate", "Validate a document.", `{"type":"object","properties":{"doc":{"type":"string"}}}`, "optional", "iserror", false},
		{"explode", "Run a job that crashes.", `{"type":"object","properties":{}}`, "optional", "fail", false},
		{"interview", "Ask a few questions.", `{"type":"object","properties":{}}`, "required", "input", false},
		{"crawl", "Crawl until stopped.", `{"type":"object","properties":{}}`, "required", "long", false},
		{"lookup", "Look a word up.", `{"type":"object","properties":{"word":{"type":"string"}}}`, "", "sync", false},
		{"wipe", "Delete everything.", `{"type":"object","properties":{}}`, "optional", "complete", true},
	}
}

func (s *Server) findTool(name string) *tool {
	for _, t := range s.tools() {
		if t.name == name {
			return &t
		}
	}
	return nil
}

// checkArgs enforces the RequiredArgs schemas by hand.
func (s *Server) checkArgs(t *tool, args map[string]any) string {
	if s.o.Tools != RequiredArgs {
		return ""
	}
	num := func(k string) (float64, bool) { f, ok := args[k].(float64); return f, ok }
	switch t.name {
	case "summarize":
		if c, ok := num("count"); !ok || c != float64(int(c)) || c < 2 || c > 5 {
			return "count must be an integer from 2 to 5"
		}
		if m, _ := args["mode"].(string); m != "fast" && m != "slow" {
			return "mode must be fast or slow"
		}
		if l, _ := args["label"].(string); len(l) < 3 {
			return "label must have at least 3 characters"
		}
		if tags, _ := args["tags"].([]any); len(tags) < 1 {
			return "tags needs at least one item"
		}
		if o, _ := args["opts"].(map[string]any); o == nil {
			return "opts is required"
		} else if _, ok := o["deep"].(bool); !ok {
			return "opts.deep is required"
		}
	case "crawl":
		if d, ok := num("depth"); !ok || d < 1 {
			return "depth must be at least 1"
		}
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Tasks

type task struct {
	id, tool, kind, era, session string
	created                      time.Time
	status                       string // once final or cancelled; else computed
	cancelled                    bool
	answered                     bool
	answer                       map[string]any
	answeredAt                   time.Time
	rounds                       int // input rounds answered
	dur                          time.Duration
	polls                        int // tasks/get answered since the task was finished
	gets                         int // tasks/get received, in any state
	cancelGets                   int // tasks/get received after a cancel
	cancelAsked                  bool
}

const inputKey = "profile"

func (s *Server) newTaskLocked(tl *tool, era, session string) *task {
	s.nextID++
	id := randomID()
	if s.is(WeakIDs) {
		id = fmt.Sprintf("t%d", s.nextID)
	}
	t := &task{id: id, tool: tl.name, kind: tl.kind, era: era, session: session, created: time.Now(), dur: s.o.Step}
	s.tasks[id] = t
	return t
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// state computes a task's status now.
func (s *Server) stateLocked(t *task) string {
	if t.status != "" {
		return t.status
	}
	if t.cancelled {
		return "cancelled"
	}
	age := time.Since(t.created)
	switch t.kind {
	case "long":
		return "working"
	case "input":
		if s.is(InputKeyReused) && t.rounds == 1 && time.Since(t.answeredAt) >= s.o.Step/2 {
			return "input_required" // asks again, under the key it already used
		}
		if !t.answered {
			if age < s.o.Step/2 {
				return "working"
			}
			return "input_required"
		}
		if time.Since(t.answeredAt) < s.o.Step {
			return "working"
		}
		return "completed"
	case "fail":
		if age < t.dur {
			return "working"
		}
		return "failed"
	case "iserror":
		if age < t.dur {
			return "working"
		}
		if (s.is(IsErrorFlipped) && t.era == "modern") || (!s.is(IsErrorFlipped) && t.era == "legacy") {
			return "failed"
		}
		return "completed"
	default:
		if age < t.dur {
			return "working"
		}
		return "completed"
	}
}

// duration is how long a task of tool works: slow_compute's seconds, else one step.
func (s *Server) duration(tl *tool, args map[string]any) time.Duration {
	if sec, ok := args["seconds"].(float64); ok && tl.name == "slow_compute" {
		return time.Duration(sec * float64(time.Second))
	}
	return s.o.Step
}

// toolResult is the CallToolResult of a finished task (or of an inline run).
func (s *Server) toolResult(t *task, kind string, answer map[string]any) map[string]any {
	text := "done"
	switch kind {
	case "iserror":
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "the document is invalid"}}, "isError": true}
	case "input":
		text = fmt.Sprintf("hello %v, you like %v", answer["name"], answer["color"])
	case "sync":
		text = "a word"
		if t == nil && s.o.Tools == Conformance {
			text = "Hello!"
		}
	}
	block := map[string]any{"type": "text", "text": text}
	if s.is(ContentNoText) {
		delete(block, "text")
		block["body"] = text
	}
	if t != nil && s.is(ResultChanges) && t.polls > 1 {
		block["text"] = text + " (again)"
	}
	return map[string]any{"content": []any{block}}
}

var protocolFailure = map[string]any{"code": -32603, "message": "the job crashed"}

func (s *Server) ttlMs() any {
	if s.is(EarlyExpiry) {
		return 3600000
	}
	return 60000
}

func (s *Server) pollMs() int {
	if s.o.PollMs > 0 {
		return s.o.PollMs
	}
	return 10
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// taskObject renders t in era (flat; legacy wraps it in CreateTaskResult itself).
func (s *Server) taskObjectLocked(t *task) map[string]any {
	st := s.stateLocked(t)
	updated := t.created
	if taskstatus.Terminal(st) || st == "input_required" {
		updated = t.created.Add(s.o.Step)
	}
	m := map[string]any{"taskId": t.id, "status": st, "createdAt": stamp(t.created), "lastUpdatedAt": stamp(updated)}
	if t.era == "modern" {
		m["ttlMs"] = s.ttlMs()
		m["pollIntervalMs"] = s.pollMs()
		if s.is(FractionalMs) {
			m["ttlMs"], m["pollIntervalMs"] = 60000.5, 10.5
		}
		if s.is(NoTTL) {
			delete(m, "ttlMs")
		}
	} else {
		m["ttl"] = s.ttlMs()
		m["pollInterval"] = s.pollMs()
		if s.is(NoTTL) {
			delete(m, "ttl")
		}
	}
	return m
}

// detailedLocked is a 2026-07-28 DetailedTask.
func (s *Server) detailedLocked(t *task) map[string]any {
	m := s.taskObjectLocked(t)
	switch m["status"] {
	case "input_required":
		req := map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "Who are you?", "requestedSchema": profileSchema}}
		if s.is(InputKeyReused) && t.rounds > 0 {
			req["params"].(map[string]any)["message"] = "Something else entirely?"
		}
		m["inputRequests"] = map[string]any{inputKey: req}
	case "completed":
		m["result"] = s.toolResult(t, t.kind, t.answer)
	case "failed":
		if t.kind == "iserror" {
			m["error"] = map[string]any{"code": -32603, "message": "the document is invalid"}
		} else {
			m["error"] = protocolFailure
		}
		if s.is(FailedNoError) {
			delete(m, "error")
		}
		m["statusMessage"] = "the job crashed"
	}
	return m
}

var profileSchema = map[string]any{"type": "object", "properties": map[string]any{
	"name":  map[string]any{"type": "string", "minLength": 2},
	"color": map[string]any{"type": "string", "enum": []any{"red", "green"}},
}, "required": []any{"name", "color"}}

// ---------------------------------------------------------------------------------------------
// HTTP

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type rpcError struct {
	status int
	code   int
	msg    string
	data   any
}

// missingExt is -32021 naming the extension (EXT §Capability Negotiation).
func (s *Server) missingExt(msg string) *rpcError {
	e := &rpcError{400, -32021, msg, map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ext: map[string]any{}}}}}
	if s.is(MissingCapNoData) {
		e.data = nil
	}
	return e
}

func errf(status, code int, format string, args ...any) *rpcError {
	return &rpcError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.legacyStream(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST and GET only", http.StatusMethodNotAllowed)
		return
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	var m request
	if err := json.Unmarshal(body.Bytes(), &m); err != nil {
		writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
		return
	}
	if m.Method == "" { // a 2025-11-25 client's answer to our elicitation
		s.mu.Lock()
		ch := s.pending[string(m.ID)]
		s.mu.Unlock()
		if ch != nil {
			ch <- m.Result
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if len(m.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if _, modern := p.Meta["io.modelcontextprotocol/protocolVersion"]; modern {
		s.serveModern(w, r, &m, p.Meta)
		return
	}
	s.serveLegacy(w, r, &m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func reply(w http.ResponseWriter, id json.RawMessage, res any, e *rpcError) {
	if e != nil {
		eo := map[string]any{"code": e.code, "message": e.msg}
		if e.data != nil {
			eo["data"] = e.data
		}
		status := e.status
		if status == 0 {
			status = 200
		}
		writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": eo})
		return
	}
	writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28

const ext = "io.modelcontextprotocol/tasks"

func (s *Server) complete(m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m["resultType"] = "complete"
	m["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "checktest", "version": "1"}}
	return m
}

func (s *Server) serveModern(w http.ResponseWriter, r *http.Request, m *request, meta map[string]json.RawMessage) {
	var version string
	_ = json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &version)
	var caps struct {
		Extensions  map[string]json.RawMessage `json:"extensions"`
		Elicitation json.RawMessage            `json:"elicitation"`
	}
	rawCaps, hasCaps := meta["io.modelcontextprotocol/clientCapabilities"]
	_ = json.Unmarshal(rawCaps, &caps)
	var p struct {
		Name   *string `json:"name"`
		TaskID *string `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	// C26-BASIC §_meta: protocolVersion and clientCapabilities are required.
	if (!hasCaps || string(rawCaps) == "null") && !s.is(MetaNotRequired) {
		reply(w, m.ID, nil, errf(400, -32602, "_meta clientCapabilities is required"))
		return
	}
	// C26-HTTP §Server Validation: headers must match the body.
	if h := r.Header.Get("Mcp-Protocol-Version"); h != version {
		if s.is(VersionHeaderCode) {
			reply(w, m.ID, nil, &rpcError{400, -32022, "unsupported", map[string]any{"supported": []string{"2026-07-28", "2025-11-25"}, "requested": version}})
			return
		}
		reply(w, m.ID, nil, errf(400, -32020, "MCP-Protocol-Version header %q does not match _meta %q", h, version))
		return
	}
	if r.Header.Get("Mcp-Method") != m.Method {
		reply(w, m.ID, nil, errf(400, -32020, "Mcp-Method does not match"))
		return
	}
	want := (*string)(nil)
	switch m.Method {
	case "tools/call":
		want = p.Name
	case "tasks/get", "tasks/update", "tasks/cancel":
		want = p.TaskID
	}
	if want != nil && r.Header.Get("Mcp-Name") != *want && !(s.is(NoNameValidation) && m.Method == "tasks/get") {
		reply(w, m.ID, nil, errf(400, -32020, "Mcp-Name does not match"))
		return
	}
	if version != "2026-07-28" && !s.is(AnyVersion) {
		reply(w, m.ID, nil, &rpcError{400, -32022, "unsupported protocol version", map[string]any{"supported": []string{"2026-07-28", "2025-11-25"}, "requested": version}})
		return
	}
	_, hasExt := caps.Extensions[ext]
	res, e := s.modern(w, r, m, hasExt)
	if res == nil && e == nil {
		return // streamed
	}
	reply(w, m.ID, res, e)
}

func (s *Server) modern(w http.ResponseWriter, r *http.Request, m *request, hasExt bool) (any, *rpcError) {
	switch m.Method {
	case "server/discover":
		caps := map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}, "resources": map[string]any{},
			"extensions": map[string]any{ext: map[string]any{}}}
		switch {
		case s.is(DiscoverLegacyCaps):
			caps["tasks"] = map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		case s.is(ExtensionSettings):
			caps["extensions"] = map[string]any{ext: map[string]any{"polling": true}}
		case s.is(UndeclaredExtension):
			delete(caps, "extensions")
		case s.is(HalfModern):
			caps = map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}
		}
		res := s.complete(map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}, "capabilities": caps, "ttlMs": 60000, "cacheScope": "public"})
		if s.is(DiscoverNoCacheHints) {
			delete(res, "ttlMs")
			delete(res, "cacheScope")
		}
		if s.is(DiscoverResultType) {
			res["resultType"] = "done"
		}
		if s.is(DiscoverNoServerInfo) {
			delete(res, "_meta")
		}
		return res, nil
	case "tools/list":
		var list []any
		for _, t := range s.tools() {
			o := map[string]any{"name": t.name, "description": t.desc, "inputSchema": json.RawMessage(t.schema)}
			if t.destructive {
				o["annotations"] = map[string]any{"destructiveHint": true}
			}
			list = append(list, o)
		}
		res := s.complete(map[string]any{"tools": list, "ttlMs": 60000, "cacheScope": "public"})
		if s.is(ListNoCacheHints) {
			delete(res, "ttlMs")
			delete(res, "cacheScope")
		}
		return res, nil
	case "prompts/list", "resources/list", "resources/templates/list":
		if s.is(HalfModern) || (s.o.NoTemplates && m.Method == "resources/templates/list") {
			break // half-modern declares neither; without templates the method is unknown
		}
		key := map[string]string{"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}[m.Method]
		res := s.complete(map[string]any{key: []any{}, "ttlMs": 60000, "cacheScope": "public"})
		if (m.Method == "prompts/list" && s.is(PromptsNoCacheHints)) || (m.Method == "resources/list" && s.is(ResourcesNoCacheHints)) ||
			(m.Method == "resources/templates/list" && s.is(TemplatesNoCacheHints)) {
			delete(res, "ttlMs")
			delete(res, "cacheScope")
		}
		return res, nil
	case "ping":
		if s.is(PingAnswered) {
			return s.complete(nil), nil
		}
	case "tasks/result":
		if s.is(TasksResultAnswered) {
			return s.complete(map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}), nil
		}
	case "tasks/list":
		if s.is(TasksListAnswered) {
			return s.complete(map[string]any{"tasks": []any{}}), nil
		}
	case "tools/call":
		return s.modernCall(r, m, hasExt)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if s.is(HalfModern) {
			break
		}
		return s.modernTaskMethod(m, hasExt)
	case "subscriptions/listen":
		if s.is(HalfModern) {
			break
		}
		s.listen(w, r, m, hasExt)
		return nil, nil
	}
	return nil, errf(404, -32601, "method not found: %s", m.Method)
}

func (s *Server) modernCall(r *http.Request, m *request, hasExt bool) (any, *rpcError) {
	sleep := func() bool {
		select {
		case <-time.After(s.o.Step):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	p, tl, e := s.startCall(m)
	if e != nil {
		return nil, e
	}
	hybrid := s.is(HybridTaskParam) && len(p.Task) > 0 && string(p.Task) != "null"
	task := tl.kind != "sync" && (hasExt || s.is(TaskWithoutExt) || hybrid) && !s.is(HalfModern)
	if !task {
		switch {
		case tl.support == "required":
			if s.is(RequiredWrongCode) || s.is(HalfModern) {
				return nil, errf(200, -32601, "tool %q requires task augmentation", tl.name)
			}
			// EXT §Capability Negotiation: -32021 naming the extension.
			return nil, s.missingExt("this tool runs only as a task")
		case tl.kind == "fail":
			sleep()
			return nil, errf(200, -32603, "the job crashed")
		}
		if tl.kind != "sync" && !sleep() {
			return nil, errf(200, -32603, "request cancelled")
		}
		return s.complete(s.toolResult(nil, tl.kind, nil)), nil
	}
	s.mu.Lock()
	t := s.newTaskLocked(tl, "modern", "")
	t.dur = s.duration(tl, p.Args)
	res := s.taskObjectLocked(t)
	s.mu.Unlock()
	res["resultType"] = "task"
	if s.is(StampedComplete) {
		res["resultType"], res["content"] = "complete", []any{}
	}
	if s.is(NestedCreate) {
		res = map[string]any{"resultType": "task", "task": res}
	}
	if s.is(NoResultTypeOnCreate) {
		delete(res, "resultType")
	}
	return res, nil
}

type callParams struct {
	Name string          `json:"name"`
	Args map[string]any  `json:"arguments"`
	Task json.RawMessage `json:"task"`
}

// startCall decodes a tools/call, counts it, and checks the tool and its arguments.
func (s *Server) startCall(m *request) (callParams, *tool, *rpcError) {
	var p callParams
	_ = json.Unmarshal(m.Params, &p)
	tl := s.findTool(p.Name)
	if tl == nil {
		return p, nil, errf(200, -32602, "unknown tool %q", p.Name)
	}
	s.mu.Lock()
	s.calls[tl.name]++
	s.mu.Unlock()
	if tl.destructive {
		s.wipe.Store(true)
	}
	if msg := s.checkArgs(tl, p.Args); msg != "" {
		return p, nil, errf(200, -32602, "%s: %s", tl.name, msg)
	}
	return p, tl, nil
}

func (s *Server) modernTaskMethod(m *request, hasExt bool) (any, *rpcError) {
	if !hasExt && !s.is(NoExtensionGate) {
		return nil, s.missingExt("declare the tasks extension")
	}
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[p.TaskID]
	if t == nil || t.era != "modern" {
		if m.Method == "tasks/get" && s.is(UnknownIDCode) {
			return nil, errf(200, -32603, "no such task")
		}
		if m.Method == "tasks/cancel" && s.is(CancelUnknownAck) {
			return s.complete(nil), nil
		}
		if m.Method == "tasks/update" && s.is(UpdateUnknownAck) {
			return s.complete(nil), nil
		}
		return nil, errf(200, -32602, "unknown task %q", p.TaskID)
	}
	st := s.stateLocked(t)
	if s.is(EarlyExpiry) && m.Method == "tasks/get" && taskstatus.Terminal(st) && t.polls >= 1 {
		return nil, errf(200, -32602, "unknown task %q", p.TaskID) // ttlMs promised an hour
	}
	switch m.Method {
	case "tasks/get":
		// The first look fails, however long the checker took to send it: a fault that
		// depended on timing passed on a loaded machine (CI under -race).
		t.gets++
		if s.is(GetNotConsistent) && t.gets == 1 {
			return nil, errf(200, -32602, "unknown task %q", p.TaskID)
		}
		d := s.detailedLocked(t)
		if taskstatus.Terminal(st) || st == "input_required" {
			t.polls++
		}
		if s.is(TerminalChanges) && st == "completed" && t.polls > 1 {
			d = s.taskObjectLocked(t)
			d["status"] = "working"
		}
		res := s.complete(d)
		if s.is(LegacyVocabulary) {
			res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"] = map[string]any{"taskId": t.id}
		}
		if s.is(NoResultTypeOnGet) {
			delete(res, "resultType")
		}
		return res, nil
	case "tasks/update":
		if a, ok := p.InputResponses[inputKey]; ok && st == "input_required" && !s.is(UpdateIgnored) {
			var ans struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			_ = json.Unmarshal(a, &ans)
			t.answered, t.answer, t.answeredAt = true, ans.Content, time.Now()
			t.rounds++
		}
		res := s.complete(nil)
		if s.is(UpdateEnvelope) {
			res = s.complete(s.taskObjectLocked(t))
		}
		return res, nil
	default: // tasks/cancel
		if taskstatus.Terminal(st) {
			if s.is(CancelFinishedError) {
				return nil, errf(200, -32602, "task %q has already finished", p.TaskID)
			}
			return s.complete(nil), nil
		}
		if s.is(CancelCompletes) {
			t.status = "completed" // cooperative: the work finished before it saw the cancel
			return s.complete(nil), nil
		}
		t.cancelled = true
		if s.is(CancelEnvelope) {
			return s.complete(s.taskObjectLocked(t)), nil
		}
		return s.complete(nil), nil
	}
}

// listen serves subscriptions/listen: the acknowledgement, then a notifications/tasks with
// the DetailedTask on every change, until every task is terminal.
func (s *Server) listen(w http.ResponseWriter, r *http.Request, m *request, hasExt bool) {
	var p struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if !hasExt && !s.is(ListenNoGate) {
		reply(w, m.ID, nil, s.missingExt("declare the tasks extension"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	sid := m.ID
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": sid}
	if !s.is(ListenNoAck) {
		send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
			"params": map[string]any{"notifications": map[string]any{"taskIds": p.Notifications.TaskIDs}, "_meta": meta}})
	}
	last := map[string]string{}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		s.mu.Lock()
		var out []map[string]any
		for _, id := range p.Notifications.TaskIDs {
			t := s.tasks[id]
			if t == nil {
				continue
			}
			d := s.detailedLocked(t)
			st, _ := d["status"].(string)
			if !taskstatus.Terminal(st) {
				done = false
			}
			if last[id] != st {
				last[id] = st
				d["_meta"] = meta
				out = append(out, d)
			}
		}
		s.mu.Unlock()
		for _, d := range out {
			method := "notifications/tasks"
			if s.is(LegacyVocabulary) {
				method = "notifications/tasks/status"
			}
			send(map[string]any{"jsonrpc": "2.0", "method": method, "params": d})
		}
		if done {
			break
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	res := s.complete(nil)
	res["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] = sid
	send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25

func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request, m *request) {
	if m.Method == "initialize" {
		sid := randomID()
		s.mu.Lock()
		s.sessions[sid] = true
		s.mu.Unlock()
		tasks := map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		if s.is(LegacyCapsKey) {
			tasks["get"] = map[string]any{}
		}
		if s.is(LegacyCapsTypes) {
			tasks["list"] = true // the spec's prose says "boolean properties"; the schema says objects
		}
		caps := map[string]any{"tools": map[string]any{}, "tasks": tasks}
		if s.is(LegacyUndeclared) {
			delete(caps, "tasks")
		}
		w.Header().Set("Mcp-Session-Id", sid)
		reply(w, m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
			"serverInfo": map[string]any{"name": "checktest", "version": "1"}}, nil)
		return
	}
	// C25-TRANS §Protocol Version Header: an invalid or unsupported value gets 400.
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != "2025-11-25" && v != "2025-06-18" && v != "2025-03-26" && !s.is(LegacyVersionHeader) {
		http.Error(w, "unsupported MCP-Protocol-Version", http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	if !known {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	switch m.Method {
	case "ping":
		reply(w, m.ID, map[string]any{}, nil)
	case "tools/list":
		var list []any
		for _, t := range s.tools() {
			o := map[string]any{"name": t.name, "description": t.desc, "inputSchema": json.RawMessage(t.schema)}
			if t.support != "" {
				o["execution"] = map[string]any{"taskSupport": t.support}
			}
			if t.destructive {
				o["annotations"] = map[string]any{"destructiveHint": true}
			}
			list = append(list, o)
		}
		reply(w, m.ID, map[string]any{"tools": list}, nil)
	case "tools/call":
		res, e := s.legacyCall(m, sid)
		reply(w, m.ID, res, e)
	case "tasks/get", "tasks/cancel":
		res, e := s.legacyTask(m, sid)
		reply(w, m.ID, res, e)
	case "tasks/result":
		s.legacyResult(w, r, m, sid)
	case "tasks/list":
		var lp struct {
			Cursor *string `json:"cursor"`
		}
		_ = json.Unmarshal(m.Params, &lp)
		// C25-TASKS §Error Handling: a cursor it never gave is -32602 (it gives none: one page).
		if lp.Cursor != nil && !s.is(LegacyBadCursor) {
			reply(w, m.ID, nil, errf(200, -32602, "invalid cursor %q", *lp.Cursor))
			return
		}
		s.mu.Lock()
		var ids []string
		for id, t := range s.tasks {
			if t.era == "legacy" && t.session == sid && !(s.is(LegacyListMissing) && taskstatus.Terminal(s.stateLocked(t))) {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		var list []any
		for _, id := range ids {
			list = append(list, s.taskObjectLocked(s.tasks[id]))
		}
		s.mu.Unlock()
		if list == nil {
			list = []any{}
		}
		reply(w, m.ID, map[string]any{"tasks": list}, nil)
	default:
		reply(w, m.ID, nil, errf(200, -32601, "method not found: %s", m.Method))
	}
}

func (s *Server) legacyCall(m *request, sid string) (any, *rpcError) {
	p, tl, e := s.startCall(m)
	if e != nil {
		return nil, e
	}
	asTask := len(p.Task) > 0 && string(p.Task) != "null"
	switch {
	case asTask && tl.support == "" && !s.is(LegacyForbiddenTask):
		// C25-TASKS §Tool-Level Negotiation: SHOULD -32601.
		return nil, errf(200, -32601, "tool %q does not support tasks", tl.name)
	case !asTask && tl.support == "required":
		if s.is(LegacyRequiredCode) {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran without a task"}}}, nil
		}
		return nil, errf(200, -32601, "tool %q requires a task", tl.name)
	case !asTask || tl.support == "":
		if tl.kind == "fail" {
			return nil, errf(200, -32603, "the job crashed")
		}
		return s.toolResult(nil, tl.kind, nil), nil
	}
	s.mu.Lock()
	t := s.newTaskLocked(tl, "legacy", sid)
	t.dur = s.duration(tl, p.Args)
	o := s.taskObjectLocked(t)
	s.mu.Unlock()
	if s.is(LegacyFirstStatus) {
		o["status"] = "input_required" // then working: a legal transition, but not the first status
	}
	if s.is(LegacyFlatCreate) {
		return o, nil
	}
	return map[string]any{"task": o}, nil
}

func (s *Server) legacyTask(m *request, sid string) (any, *rpcError) {
	var p struct {
		TaskID string `json:"taskId"`
		Meta   struct {
			Related *struct {
				TaskID string `json:"taskId"`
			} `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if s.is(LegacyMetaWins) && p.Meta.Related != nil {
		p.TaskID = p.Meta.Related.TaskID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[p.TaskID]
	if t == nil || t.era != "legacy" || t.session != sid {
		if s.is(UnknownIDCode) {
			return nil, errf(200, -32603, "no such task")
		}
		return nil, errf(200, -32602, "unknown task %q", p.TaskID)
	}
	st := s.stateLocked(t)
	if s.is(EarlyExpiry) && m.Method == "tasks/get" && taskstatus.Terminal(st) && t.polls >= 1 {
		return nil, errf(200, -32602, "unknown task %q", p.TaskID) // ttl promised an hour
	}
	if m.Method == "tasks/cancel" {
		if taskstatus.Terminal(st) && !s.is(LegacyCancelTerminal) {
			return nil, errf(200, -32602, "task %q is already %s", t.id, st)
		}
		if !s.is(LegacyCancelNoop) {
			t.status = "cancelled"
		}
		t.cancelAsked = true
		o := s.taskObjectLocked(t)
		o["status"] = "cancelled"
		return o, nil
	}
	o := s.taskObjectLocked(t)
	if taskstatus.Terminal(st) {
		t.polls++
		if s.is(TerminalChanges) && st == "completed" && t.polls > 1 {
			o["status"] = "working"
		}
		if s.is(LegacyTerminalLate) && st == "completed" && t.polls > 4 {
			o["status"] = "working"
		}
	}
	if t.cancelAsked {
		t.cancelGets++
		if s.is(LegacyCancelLate) && t.cancelGets > 2 {
			o["status"] = "completed"
		}
	}
	if s.is(LegacyGetRelated) {
		o["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
	}
	return o, nil
}

// legacyResult serves tasks/result: it blocks until the task is terminal, asking for input on
// its own SSE stream when the task needs it (C25-TASKS §Input Required Status).
func (s *Server) legacyResult(w http.ResponseWriter, r *http.Request, m *request, sid string) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	t := s.tasks[p.TaskID]
	s.mu.Unlock()
	if t == nil || t.era != "legacy" || t.session != sid {
		if s.is(UnknownIDCode) {
			reply(w, m.ID, nil, errf(200, -32603, "no such task"))
			return
		}
		reply(w, m.ID, nil, errf(200, -32602, "unknown task %q", p.TaskID))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	related := map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
	asked := false
	if s.is(LegacyResultError) {
		s.mu.Lock()
		st := s.stateLocked(t)
		s.mu.Unlock()
		if !taskstatus.Terminal(st) {
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "task is not finished yet"}})
			return
		}
	}
	for s.is(LegacyResultEarly) {
		s.mu.Lock()
		st := s.stateLocked(t)
		s.mu.Unlock()
		if !taskstatus.Terminal(st) && t.kind == "input" {
			res := s.toolResult(t, t.kind, t.answer) // C25-TASKS §Result Retrieval: it MUST block
			res["_meta"] = related
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
			return
		}
		break
	}
	for {
		s.mu.Lock()
		st := s.stateLocked(t)
		s.mu.Unlock()
		if taskstatus.Terminal(st) {
			break
		}
		if st == "input_required" && !asked {
			asked = true
			eid := fmt.Sprintf(`"elicit-%s"`, t.id)
			ch := make(chan json.RawMessage, 1)
			s.mu.Lock()
			s.pending[eid] = ch
			s.mu.Unlock()
			params := map[string]any{"mode": "form", "message": "Who are you?", "requestedSchema": profileSchema, "_meta": related}
			if s.is(LegacyElicitNoMeta) {
				delete(params, "_meta")
			}
			send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(eid), "method": "elicitation/create", "params": params})
			go func() {
				select {
				case res := <-ch:
					var ans struct {
						Content map[string]any `json:"content"`
					}
					_ = json.Unmarshal(res, &ans)
					s.mu.Lock()
					t.answered, t.answer, t.answeredAt = true, ans.Content, time.Now()
					s.mu.Unlock()
				case <-time.After(30 * time.Second):
				}
			}()
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	s.mu.Lock()
	st := s.stateLocked(t)
	s.mu.Unlock()
	meta := related
	if s.is(LegacyNoRelatedTask) {
		meta = nil
	}
	switch {
	case st == "failed" && t.kind == "fail" && !s.is(LegacyFailedSuccess):
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": protocolFailure})
	case st == "cancelled":
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "the task was cancelled"}})
	default:
		res := s.toolResult(t, t.kind, t.answer)
		if meta != nil {
			res["_meta"] = meta
		}
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	}
}

// legacyStream serves the 2025-11-25 standalone GET stream of a session: it sends
// notifications/tasks/status whenever one of the session's tasks changes status, as servers on
// the official TypeScript SDK do.
func (s *Server) legacyStream(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	if !known {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	last := map[string]string{}
	for {
		s.mu.Lock()
		var out []map[string]any
		for id, t := range s.tasks {
			if t.era != "legacy" || t.session != sid {
				continue
			}
			o := s.taskObjectLocked(t)
			if st, _ := o["status"].(string); last[id] != st {
				last[id] = st
				out = append(out, o)
			}
		}
		s.mu.Unlock()
		for _, o := range out {
			if s.is(LegacyNotifyRelated) {
				o["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": o["taskId"]}}
			}
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": o})
			for i := 0; s.is(LegacyNotifyFlood) && o["status"] == "working" && i < 20000; i++ {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": o})
			}
			if s.is(LegacyNotifyChanges) && o["status"] == "completed" {
				o["status"] = "working"
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": o})
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// WipeCalled reports whether the destructive tool was ever called.
func (s *Server) WipeCalled() bool { return s.wipe.Load() }
