package demo

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// supportedVersions is what server/discover reports. 2025-11-25 is listed because the demo
// also answers initialize (C26-VER §Compatibility Matrix, dual-era servers); it is reached
// through initialize, not through per-request _meta.
var supportedVersions = []string{rpc.VersionModern, rpc.VersionLegacy}

// modernReq is a modern request after its _meta has been checked.
type modernReq struct {
	msg  *rpc.Message
	caps clientCaps
	hdr  http.Header // nil on stdio
	// out sends a notification on the request's stream (an SSE event, or a stdout line):
	// the channel of a subscriptions/listen stream.
	out func(*rpc.Message) error
	// upgrade, over HTTP, turns the response into an SSE stream before anything is sent.
	upgrade func()
	// logLevel is _meta io.modelcontextprotocol/logLevel ("" when absent: then the server
	// MUST NOT send notifications/message for the request, C26-BASIC §_meta).
	logLevel string
}

// clientCaps is the part of per-request clientCapabilities the demo acts on.
type clientCaps struct {
	Extensions  map[string]json.RawMessage `json:"extensions"`
	Elicitation json.RawMessage            `json:"elicitation"`
	Sampling    json.RawMessage            `json:"sampling"`
}

func (c clientCaps) tasks() bool { _, ok := c.Extensions[rpc.TasksExtension]; return ok }

func (c clientCaps) elicitation() bool { return c.declared(c.Elicitation) }

// declared reports whether a capability was given (present and not null).
func (clientCaps) declared(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// requestMeta is params._meta and the fields used for routing.
type requestMeta struct {
	Meta   map[string]json.RawMessage `json:"_meta"`
	Name   *string                    `json:"name"`
	URI    *string                    `json:"uri"`
	TaskID *string                    `json:"taskId"`
}

// isModern reports whether a request carries the per-request protocol version, which is what
// makes it a 2026-07-28 request (C26-VER §Backward Compatibility: era is chosen by how the
// client opens).
func isModern(m *rpc.Message) bool {
	var p requestMeta
	if len(m.Params) == 0 || json.Unmarshal(m.Params, &p) != nil {
		return false
	}
	_, ok := p.Meta[rpc.MetaProtocolVersion]
	return ok
}

func withStatus(e *rpc.Error, status int) *rpc.Error { e.HTTPStatus = status; return e }

func missingCapability(caps map[string]any, msg string) *rpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": caps})
	return &rpc.Error{Code: rpc.CodeMissingCapability, Message: msg, Data: data, HTTPStatus: http.StatusBadRequest}
}

func needTasksExtension(what string) *rpc.Error {
	// EXT §Capability Negotiation: "the server MUST return a -32021 error with
	// data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]".
	return missingCapability(map[string]any{"extensions": map[string]any{rpc.TasksExtension: map[string]any{}}},
		what+" requires the io.modelcontextprotocol/tasks extension; declare it in _meta clientCapabilities.extensions")
}

// checkModern validates the per-request _meta and, over HTTP, the routing headers. The
// returned error carries the HTTP status to use.
func checkModern(m *rpc.Message, hdr http.Header) (*modernReq, *rpc.Error) {
	var p requestMeta
	_ = json.Unmarshal(m.Params, &p)
	var version string
	if err := json.Unmarshal(p.Meta[rpc.MetaProtocolVersion], &version); err != nil || version == "" {
		return nil, withStatus(invalidParams("_meta %s must be a non-empty string", rpc.MetaProtocolVersion), http.StatusBadRequest)
	}
	// C26-BASIC §_meta: protocolVersion and clientCapabilities are required on every request;
	// a request without them gets -32602 (HTTP 400).
	rawCaps, ok := p.Meta[rpc.MetaClientCapabilities]
	var caps clientCaps
	if !ok || len(rawCaps) == 0 || rawCaps[0] != '{' || json.Unmarshal(rawCaps, &caps) != nil {
		return nil, withStatus(invalidParams("missing or invalid _meta %s (send {} for none)", rpc.MetaClientCapabilities), http.StatusBadRequest)
	}
	if hdr != nil {
		// C26-HTTP §Server Validation: a missing or mismatched header is rejected with 400 and
		// HeaderMismatch.
		mismatch := func(format string, args ...any) *rpc.Error {
			return &rpc.Error{Code: rpc.CodeHeaderMismatch, Message: fmt.Sprintf(format, args...), HTTPStatus: http.StatusBadRequest}
		}
		if got := hdr.Get("MCP-Protocol-Version"); got != version {
			return nil, mismatch("MCP-Protocol-Version header %q does not match _meta protocolVersion %q", got, version)
		}
		if got := hdr.Get("Mcp-Method"); got != m.Method {
			return nil, mismatch("Mcp-Method header %q does not match method %q", got, m.Method)
		}
		var want *string
		switch m.Method {
		case "tools/call", "prompts/get":
			want = p.Name
		case "resources/read":
			want = p.URI
		case "tasks/get", "tasks/update", "tasks/cancel":
			// EXT §Streamable HTTP: Routing Headers: Mcp-Name carries params.taskId.
			want = p.TaskID
		}
		if want != nil {
			vals := hdr.Values("Mcp-Name")
			if len(vals) != 1 {
				return nil, mismatch("Mcp-Name header must be sent once with %q", *want)
			}
			got, err := decodeHeaderValue(vals[0])
			if err != nil {
				return nil, mismatch("Mcp-Name header: %v", err)
			}
			if got != *want {
				return nil, mismatch("Mcp-Name header does not match the request body")
			}
		}
	}
	// Only a request whose header and body agree reaches version negotiation: a mismatch is
	// -32020 even when the body names a version the server does not speak (C26-HTTP §Protocol
	// Version Header: "If the values do not match, the server MUST reject the request with 400
	// Bad Request and a HeaderMismatch error").
	if version != rpc.VersionModern {
		// C26-VER: UnsupportedProtocolVersion with data {supported, requested}, HTTP 400.
		data, _ := json.Marshal(map[string]any{"supported": supportedVersions, "requested": version})
		msg := fmt.Sprintf("unsupported protocol version %q", version)
		if version == rpc.VersionLegacy {
			msg += "; 2025-11-25 is served through initialize"
		}
		return nil, &rpc.Error{Code: rpc.CodeUnsupportedVersion, Message: msg, Data: data, HTTPStatus: http.StatusBadRequest}
	}
	req := &modernReq{msg: m, caps: caps, hdr: hdr}
	_ = json.Unmarshal(p.Meta[rpc.MetaLogLevel], &req.logLevel)
	return req, nil
}

// decodeHeaderValue undoes C26-HTTP §Value Encoding: "=?base64?<base64>?=" carries UTF-8
// that cannot travel as a plain header value.
func decodeHeaderValue(v string) (string, error) {
	const pre, suf = "=?base64?", "?="
	if len(v) < len(pre)+len(suf) || v[:len(pre)] != pre || v[len(v)-len(suf):] != suf {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len(pre) : len(v)-len(suf)])
	if err != nil {
		return "", fmt.Errorf("bad base64 value: %w", err)
	}
	return string(b), nil
}

// complete adds resultType "complete" and serverInfo to a modern result. C26-BASIC
// §ResultType: every result carries resultType.
func complete(r map[string]any) map[string]any {
	if r == nil {
		r = map[string]any{}
	}
	r["resultType"] = "complete"
	addServerInfo(r)
	return r
}

func addServerInfo(r map[string]any) {
	meta, _ := r["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[rpc.MetaServerInfo] = map[string]any{"name": serverName, "version": Version}
	r["_meta"] = meta
}

// handleModern serves one checked modern request. It never sends requests to the client
// (C26-HTTP §Receiving Messages: the server MUST NOT send JSON-RPC requests).
func (s *Server) handleModern(ctx context.Context, r *modernReq) (any, *rpc.Error) {
	switch r.msg.Method {
	case "server/discover":
		// C26-DISC: servers MUST implement server/discover.
		caps := map[string]any{
			"tools": map[string]any{},
			// EXT §Capability Negotiation: the server advertises the extension with {}.
			// SEP-2663: legacy tasks.* capabilities are not advertised under 2026-07-28.
			"extensions": map[string]any{rpc.TasksExtension: map[string]any{}},
		}
		if s.opts.Fault == FaultUndeclaredExtension {
			delete(caps, "extensions")
		}
		instructions := "mcptask demo server. Tools: echo, sleep, fail, tool_error, ask, forever, confirm, deploy. Declare the io.modelcontextprotocol/tasks extension to get tasks."
		if s.opts.Conformance {
			// The suite's server-stateless mutates the tool and prompt lists through its
			// diagnostic hooks (test_trigger_tool_change, test_trigger_prompt_change) and
			// expects the change on a subscriptions/listen stream: listChanged says it will come.
			caps["tools"] = map[string]any{"listChanged": true}
			caps["prompts"] = map[string]any{"listChanged": true}
			caps["resources"] = map[string]any{}
			instructions += " Started with --conformance: the fixture tools of the official conformance suite come first."
		}
		// DiscoverResult is a CacheableResult: ttlMs and cacheScope are required.
		return cacheable(complete(map[string]any{
			"supportedVersions": supportedVersions,
			"capabilities":      caps,
			"instructions":      instructions,
		})), nil
	case "tools/list":
		return cacheable(complete(map[string]any{"tools": s.toolsListed(rpc.EraModern)})), nil
	case "tools/call":
		return s.modernCall(ctx, r)
	case "tasks/get", "tasks/update", "tasks/cancel":
		return s.modernTaskMethod(r)
	case "subscriptions/listen":
		return s.listen(ctx, r)
	}
	if res, e, ok := s.conformanceCatalogue(r); ok {
		return res, e
	}
	// C26-HTTP: unknown method → 404 + -32601. SEP-2663 §Backward Compatibility: tasks/result
	// (and tasks/list) MUST get -32601 under 2026-07-28. So do the methods 2026-07-28 removed:
	// ping, initialize, logging/setLevel, resources/subscribe and unsubscribe (C26-CHLOG).
	return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "method not found: " + r.msg.Method, HTTPStatus: http.StatusNotFound}
}

type callParams struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
	// Task is the legacy task param; the modern era ignores it (SEP-2663: MUST ignore).
	Task *struct {
		TTL *float64 `json:"ttl"`
	} `json:"task"`
}

func (s *Server) modernCall(ctx context.Context, r *modernReq) (any, *rpc.Error) {
	var p callParams
	if err := json.Unmarshal(r.msg.Params, &p); err != nil {
		return nil, invalidParams("tools/call: %v", err)
	}
	tl := s.findTool(p.Name, rpc.EraModern)
	if tl == nil {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	a, perr := parseArgs(p.Name, p.Arguments)
	if perr != nil {
		return nil, perr
	}
	ext := r.caps.tasks()
	if tl.TaskSupport == "required" && !ext {
		// EXT §Capability Negotiation: a server that cannot serve the call without a task
		// MUST answer -32021 naming the extension (HTTP 400).
		return nil, needTasksExtension("tool " + p.Name)
	}
	if res, e, ok := s.modernFixtureCall(ctx, r, p, a); ok {
		return res, e
	}
	switch p.Name {
	case "echo":
		return complete(rawMap(textResult(*a.Text, false))), nil
	case "progress":
		res, e := s.countProgress(ctx, r.out, progressToken(r.msg.Params), a)
		if e != nil {
			return nil, e
		}
		return complete(rawMap(res)), nil
	case "greet":
		// Sync-only: a legacy task param (ignored, SEP-2663) or the extension never makes
		// it a task.
		return complete(rawMap(greetResult(a))), nil
	case "ask", "deploy":
		if !r.caps.elicitation() {
			// C26-MRTR §Server Requirements: no input requests of a kind the client did not
			// declare.
			return nil, missingCapability(map[string]any{"elicitation": map[string]any{}}, "tool "+p.Name+" needs the elicitation capability to ask its question")
		}
	case "sleep":
		if !ext && s.sleepIsLong(a) {
			return nil, needTasksExtension("sleep longer than 1 second")
		}
	case "confirm":
		if res, e := s.confirmRound(p, r.caps); res != nil || e != nil {
			return res, e
		}
	}
	if !ext {
		// EXT §Capability Negotiation: without the extension a task MUST NOT be returned; run
		// the tool inline.
		res, e := s.runInline(ctx, p.Name, a)
		if e != nil {
			return nil, e
		}
		return complete(rawMap(res)), nil
	}
	s.mu.Lock()
	t := s.newTaskLocked(rpc.EraModern, "", p.Name, p.Arguments, s.opts.TTL, r.caps.elicitation())
	res := s.modernTaskLocked(t)
	s.mu.Unlock()
	// EXT §Polymorphic Results: resultType "task" only on CreateTaskResult of tools/call.
	res["resultType"] = "task"
	addServerInfo(res)
	return res, nil
}

// confirmRound is the MRTR phase of the confirm tool (C26-MRTR): without an answer it returns
// an InputRequiredResult; with an accepted answer it returns nil, nil and the call goes on.
func (s *Server) confirmRound(p callParams, caps clientCaps) (map[string]any, *rpc.Error) {
	ans, answered := p.InputResponses["confirm"]
	if !answered {
		if !caps.elicitation() {
			return nil, missingCapability(map[string]any{"elicitation": map[string]any{}}, "tool confirm needs the elicitation capability to ask for confirmation")
		}
		req := map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{
				"mode":    "form",
				"message": "Proceed?",
				"requestedSchema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
					"required":   []string{"ok"},
				},
			},
		}
		r := map[string]any{"resultType": "input_required", "inputRequests": map[string]any{"confirm": req}, "requestState": confirmState()}
		addServerInfo(r)
		return r, nil
	}
	if p.RequestState == nil || !validConfirmState(*p.RequestState) {
		return nil, invalidParams("confirm: requestState missing or not the one this server issued")
	}
	var a elicitAnswer
	if err := json.Unmarshal(ans, &a); err != nil {
		return nil, invalidParams("confirm: inputResponses.confirm is not an ElicitResult: %v", err)
	}
	if ok, _ := a.Content["ok"].(bool); a.Action != "accept" || !ok {
		return complete(rawMap(textResult("not confirmed; nothing was done", false))), nil
	}
	return nil, nil
}

// stateKey signs requestState so the demo can stay stateless between MRTR rounds yet reject a
// forged or mangled state.
var stateKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}()

func confirmState() string {
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	mac := hmac.New(sha256.New, stateKey)
	mac.Write(nonce)
	return base64.RawURLEncoding.EncodeToString(append(nonce, mac.Sum(nil)...))
}

func validConfirmState(st string) bool {
	b, err := base64.RawURLEncoding.DecodeString(st)
	if err != nil || len(b) != 12+sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, stateKey)
	mac.Write(b[:12])
	return hmac.Equal(mac.Sum(nil), b[12:])
}

// runInline runs a tool to completion inside the request. The returned CallToolResult may have
// isError; a JSON-RPC failure is returned as the error.
func (s *Server) runInline(ctx context.Context, name string, a toolArgs) (json.RawMessage, *rpc.Error) {
	wait := func(d time.Duration) *rpc.Error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return &rpc.Error{Code: rpc.CodeInternalError, Message: "request cancelled"}
		case <-s.closing:
			return &rpc.Error{Code: rpc.CodeInternalError, Message: "server closing"}
		}
	}
	switch name {
	case "echo":
		return textResult(*a.Text, false), nil
	case "sleep":
		seconds, n, step := s.sleepPlan(a)
		if e := wait(step * time.Duration(n)); e != nil {
			return nil, e
		}
		return textResult(sleepDone(seconds), false), nil
	case "fail":
		if e := wait(s.opts.StepDelay); e != nil {
			return nil, e
		}
		return nil, failError(a)
	case "tool_error":
		if e := wait(s.opts.StepDelay); e != nil {
			return nil, e
		}
		return textResult(toolErrorText(a), true), nil
	case "confirm":
		if e := wait(s.opts.StepDelay); e != nil {
			return nil, e
		}
		return textResult("confirmed", false), nil
	case "greet":
		return greetResult(a), nil
	case "slow_compute":
		seconds, n, step := s.computePlan(a)
		if e := wait(step * time.Duration(n)); e != nil {
			return nil, e
		}
		return computeResult(a, seconds), nil
	case "protocol_error_job":
		if e := wait(s.opts.StepDelay); e != nil {
			return nil, e
		}
		return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "protocol_error_job: internal error, as asked"}
	case "confirm_delete", "multi_input":
		return nil, &rpc.Error{Code: rpc.CodeInvalidRequest, Message: name + " needs input: call it as a task"}
	}
	return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "tool " + name + " cannot run inline"}
}

func rawMap(b json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// modernTaskLocked renders t as a 2026-07-28 Task (flat, ttlMs/pollIntervalMs).
func (s *Server) modernTaskLocked(t *task) map[string]any {
	m := map[string]any{
		"taskId":         t.ID,
		"status":         t.Status,
		"createdAt":      timestamp(t.CreatedAt),
		"lastUpdatedAt":  timestamp(t.UpdatedAt),
		"ttlMs":          ttlMsValue(t),
		"pollIntervalMs": s.opts.PollInterval.Milliseconds(),
	}
	if t.Message != "" {
		m["statusMessage"] = t.Message
	}
	return m
}

// detailedTaskLocked renders t as a DetailedTask: EXT §Task Polling: inputRequests when
// input_required, result when completed, error when failed.
func (s *Server) detailedTaskLocked(t *task) map[string]any {
	m := s.modernTaskLocked(t)
	switch t.Status {
	case rpc.StatusInputRequired:
		// EXT §Task Polling: inputRequests holds every outstanding request; answered keys are
		// gone.
		reqs := map[string]json.RawMessage{}
		for _, in := range t.pendingLocked() {
			reqs[in.Key] = in.Request
		}
		m["inputRequests"] = reqs
	case rpc.StatusCompleted:
		// EXT §Task Polling: result is the result the tools/call would have returned, so a
		// 2026-07-28 CallToolResult, which carries resultType (C26-BASIC §ResultType; the
		// official TS client's ext-tasks refuses an inline result without it).
		r := rawMap(t.Result)
		r["resultType"] = "complete"
		m["result"] = r
	case rpc.StatusFailed:
		m["error"] = t.Error
	}
	return m
}

type taskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

func (s *Server) modernTaskMethod(r *modernReq) (any, *rpc.Error) {
	// EXT §Protocol Errors: tasks/* from a client that did not declare the extension → -32021.
	if !r.caps.tasks() {
		return nil, needTasksExtension(r.msg.Method)
	}
	var p taskParams
	if err := json.Unmarshal(r.msg.Params, &p); err != nil || p.TaskID == "" {
		return nil, invalidParams("%s: params.taskId is required", r.msg.Method)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.lookupLocked(p.TaskID)
	if t == nil || t.Era != rpc.EraModern {
		// EXT §Protocol Errors: unknown taskId → -32602.
		return nil, taskNotFound(p.TaskID)
	}
	switch r.msg.Method {
	case "tasks/get":
		// EXT §Task Polling: resultType MUST be "complete" for tasks/get.
		return complete(s.detailedTaskLocked(t)), nil
	case "tasks/update":
		for k, v := range p.InputResponses {
			s.answerLocked(t, k, v)
		}
		return complete(nil), nil
	default: // tasks/cancel
		// EXT §Task Cancellation: an ack; the work stops cooperatively and the task becomes
		// cancelled shortly after, unless it has already finished.
		if !t.Status.Terminal() && !t.CancelRequested {
			t.CancelRequested = true
			s.persistLocked()
			wakeTask(t)
		}
		return complete(nil), nil
	}
}

// listen serves subscriptions/listen for task ids (EXT §Task Status Notifications, C26-SUBS):
// it acknowledges the ids it knows, then sends a notifications/tasks with the full DetailedTask
// each time one of them changes (and, with Options.Conformance, a notifications/tools or
// prompts/list_changed when the filter asked for it and the list changed), every message
// carrying the subscription id, until the client goes away (the stream closes, or
// notifications/cancelled on stdio) or the server shuts down, which ends the subscription
// gracefully with a complete result.
func (s *Server) listen(ctx context.Context, r *modernReq) (any, *rpc.Error) {
	var p struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
			listFilter
		} `json:"notifications"`
	}
	_ = json.Unmarshal(r.msg.Params, &p)
	lists := s.honoredLists(p.Notifications.listFilter)
	if len(p.Notifications.TaskIDs) > 0 && !r.caps.tasks() {
		return nil, needTasksExtension("subscriptions/listen with taskIds")
	}
	if r.out == nil {
		return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "this transport cannot stream"}
	}
	meta := map[string]any{rpc.MetaSubscriptionID: r.msg.ID}
	s.mu.Lock()
	seenLists := s.lists
	var acked []string
	for _, id := range p.Notifications.TaskIDs {
		if t := s.lookupLocked(id); t != nil && t.Era == rpc.EraModern {
			acked = append(acked, id)
		}
	}
	s.mu.Unlock()
	if acked == nil {
		acked = []string{}
	}
	notify := func(method string, params map[string]any) error {
		params["_meta"] = meta
		b, _ := json.Marshal(params)
		return r.out(&rpc.Message{JSONRPC: "2.0", Method: method, Params: b})
	}
	// C26-SUBS §Acknowledgment: the acknowledgement is the first message of the subscription.
	ackd := map[string]any{"taskIds": acked}
	lists.ack(ackd)
	if err := notify("notifications/subscriptions/acknowledged", map[string]any{"notifications": ackd}); err != nil {
		return nil, nil
	}
	last := map[string]string{}
	for {
		changed := s.waitChange()
		s.mu.Lock()
		var updates []map[string]any
		for _, id := range acked {
			t := s.lookupLocked(id)
			if t == nil {
				continue
			}
			d := s.detailedTaskLocked(t)
			b, _ := json.Marshal(d)
			if last[id] != string(b) {
				last[id] = string(b)
				updates = append(updates, d)
			}
		}
		listChanges := s.listChangesLocked(lists, &seenLists)
		s.mu.Unlock()
		for _, d := range updates {
			delete(d, "resultType")
			if err := notify("notifications/tasks", d); err != nil {
				return nil, nil
			}
		}
		for _, method := range listChanges {
			if err := notify(method, map[string]any{}); err != nil {
				return nil, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-s.closing:
			return complete(map[string]any{"_meta": meta}), nil // C26-SUBS §Graceful Closure
		case <-changed:
		}
	}
}
