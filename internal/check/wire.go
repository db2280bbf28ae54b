package check

// This file is the checker's own wire: it builds each request exactly as the checker means it
// (right, or deliberately wrong), sends it through the era's transport, and validates every
// answer against the official schema of the era before any rule looks at it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/mcptask/mcptask/internal/rpc"
)

// req says how to build one request.
type req struct {
	// noExt declares no extension (2026-07-28): the client capabilities are {}.
	noExt bool
	// noCaps leaves clientCapabilities out of _meta altogether.
	noCaps bool
	// version replaces the _meta protocol version; hdrVersion the MCP-Protocol-Version header
	// (both default to the era's version).
	version, hdrVersion string
	// name replaces the Mcp-Name header.
	name string
	// tool is the tool of a tools/call, for its Mcp-Param-* headers.
	tool *toolInfo
}

const unknownID = "mcptask-check-no-such-task-7f3a9c1e"

// send sends one request and returns the answer: a message with Result or Error. A Go error
// is a transport failure, or errBudget when the time budget ended the exchange.
func (r *runner) send(ctx context.Context, method string, params map[string]any, q req) (*rpc.Message, error) {
	p := make(map[string]any, len(params)+1)
	for k, v := range params {
		p[k] = v
	}
	hdr := http.Header{}
	if r.modern {
		r.modernEnvelope(method, params, p, q, hdr)
	} else {
		// C25-TRANS §Protocol Version Header: on every request after initialize.
		hdr.Set("Mcp-Protocol-Version", rpc.VersionLegacy)
		if q.hdrVersion != "" {
			hdr.Set("Mcp-Protocol-Version", q.hdrVersion)
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	msg := &rpc.Message{JSONRPC: "2.0", ID: rpc.IntID(r.nextID.Add(1)), Method: method, Params: raw}
	// The exchange is tagged, so that a 2025-11-25 request the server sends on its stream can
	// be told to belong to a task's tasks/result or to a plain tools/call.
	tag := &exchange{method: method}
	switch method {
	case "tasks/result":
		tag.taskID, _ = params["taskId"].(string)
		r.inFlight(r.payloads, tag.taskID, 1)
		defer r.inFlight(r.payloads, tag.taskID, -1)
	case "tools/call":
		tag.tool, _ = params["name"].(string)
		r.say("calling tools", tag.tool)
		if _, task := params["task"]; !task {
			r.inFlight(r.plainCalls, tag.tool, 1)
			defer r.inFlight(r.plainCalls, tag.tool, -1)
		}
	}
	resp, err := r.c.Transport().RoundTrip(context.WithValue(ctx, exchangeKey{}, tag), msg, hdr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errBudget
		}
		return nil, err
	}
	if resp == nil || (resp.Result == nil && resp.Error == nil) {
		return nil, fmt.Errorf("the answer to %s has neither result nor error", method)
	}
	r.validate(method, resp)
	return resp, nil
}

// modernEnvelope adds what every 2026-07-28 request carries, as q asks (a missing or wrong
// part for the probes): _meta with the protocol version and the client's capabilities in p,
// and the version, method and name headers in hdr.
func (r *runner) modernEnvelope(method string, params, p map[string]any, q req, hdr http.Header) {
	version := rpc.VersionModern
	if q.version != "" {
		version = q.version
	}
	caps := map[string]any{
		"extensions":  map[string]any{rpc.TasksExtension: map[string]any{}},
		"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
	}
	if q.noExt {
		caps = map[string]any{}
	}
	meta := map[string]any{
		rpc.MetaProtocolVersion: version,
		rpc.MetaClientInfo:      map[string]any{"name": "mcptask-check", "version": "1"},
	}
	if !q.noCaps {
		meta[rpc.MetaClientCapabilities] = caps
	}
	p["_meta"] = meta
	// C26-HTTP §Protocol Version Header, §Standard Request Headers; EXT §Streamable HTTP:
	// Routing Headers.
	hv := version
	if q.hdrVersion != "" {
		hv = q.hdrVersion
	}
	hdr.Set("Mcp-Protocol-Version", hv)
	hdr.Set("Mcp-Method", method)
	name := q.name
	if name == "" {
		switch method {
		case "tools/call":
			name, _ = params["name"].(string)
		case "tasks/get", "tasks/update", "tasks/cancel":
			name, _ = params["taskId"].(string)
		}
	}
	if name != "" {
		hdr.Set("Mcp-Name", rpc.EncodeHeaderValue(name))
	}
	if q.tool != nil {
		args, _ := params["arguments"].(map[string]any)
		for k, v := range paramHeaders(q.tool.schema, args) {
			hdr[k] = v
		}
	}
}

// paramHeaders mirrors the arguments whose inputSchema property carries x-mcp-header into
// Mcp-Param-{Name} (C26-HTTP §Custom Headers from Tool Parameters).
func paramHeaders(schema json.RawMessage, args map[string]any) http.Header {
	var s struct {
		Properties map[string]struct {
			Header string `json:"x-mcp-header"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	h := http.Header{}
	for name, prop := range s.Properties {
		v, ok := args[name]
		if prop.Header == "" || !ok || v == nil {
			continue
		}
		var val string
		switch x := v.(type) {
		case string:
			val = x
		case bool:
			val = strconv.FormatBool(x)
		case json.Number:
			val = x.String()
		case float64:
			val = strconv.FormatFloat(x, 'f', -1, 64)
		case int:
			val = strconv.Itoa(x)
		default:
			continue
		}
		h.Set("Mcp-Param-"+prop.Header, rpc.EncodeHeaderValue(val))
	}
	return h
}

// validate checks one answer against the official schema of the era, and in 2026-07-28 that
// it carries a resultType allowed for its method (C26-BASIC §ResultType; EXT §Polymorphic
// Results).
func (r *runner) validate(method string, m *rpc.Message) {
	file, def, kind := r.schemaDef(method, m)
	if def == "" {
		return
	}
	var instance []byte
	if m.Error != nil {
		e := map[string]any{"code": m.Error.Code, "message": m.Error.Message}
		if len(m.Error.Data) > 0 {
			e["data"] = m.Error.Data
		}
		instance, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "error": e})
	} else {
		instance = m.Result
	}
	problem := official.validate(file, def, instance)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.schemaN[kind]++
	if problem != "" {
		r.schemaBad[kind] = append(r.schemaBad[kind], problem)
	}
	if !r.modern || m.Error != nil {
		return
	}
	r.wireShapes(method, m.Result)
	r.resultTypeN++
	rt, ok := obj(m.Result)["resultType"]
	switch v := str(rt); {
	case !ok && obj(m.Result)["taskId"] != nil:
		r.resultTypeBad = append(r.resultTypeBad, method+" result has no resultType, though it carries a taskId: a client must take it as a complete result, not a task")
	case !ok:
		r.resultTypeBad = append(r.resultTypeBad, method+" result has no resultType")
	case v == "complete":
	case (v == "task" || v == "input_required") && method == "tools/call":
	default:
		r.resultTypeBad = append(r.resultTypeBad, fmt.Sprintf("%s result has resultType %s", method, quote(rt)))
	}
}

// schemaDef names the schema definition an answer must match, and the kind it is counted under.
func (r *runner) schemaDef(method string, m *rpc.Message) (file, def, kind string) {
	if m.Error != nil {
		if !r.modern {
			return schemaLegacy, "JSONRPCErrorResponse", "errors"
		}
		switch m.Error.Code {
		case rpc.CodeHeaderMismatch:
			return schemaModern, "HeaderMismatchError", "errors"
		case rpc.CodeMissingCapability:
			return schemaModern, "MissingRequiredClientCapabilityError", "errors"
		case rpc.CodeUnsupportedVersion:
			return schemaModern, "UnsupportedProtocolVersionError", "errors"
		}
		return schemaModern, "JSONRPCErrorResponse", "errors"
	}
	if r.modern {
		if method == "tools/call" {
			switch str(obj(m.Result)["resultType"]) {
			case "task":
				return schemaExt, "CreateTaskResult", method
			case "input_required":
				return schemaModern, "InputRequiredResult", method
			}
		}
		if d, ok := modernResults[method]; ok {
			return d[0], d[1], method
		}
		return schemaModern, "Result", "other"
	}
	if _, task := obj(m.Result)["task"]; method == "tools/call" && task {
		return schemaLegacy, "CreateTaskResult", method
	}
	if d, ok := legacyResults[method]; ok {
		return schemaLegacy, d, method
	}
	return schemaLegacy, "Result", "other"
}

// modernResults names the schema file and definition of each 2026-07-28 result.
var modernResults = map[string][2]string{
	"server/discover":          {schemaModern, "DiscoverResult"},
	"tools/list":               {schemaModern, "ListToolsResult"},
	"prompts/list":             {schemaModern, "ListPromptsResult"},
	"resources/list":           {schemaModern, "ListResourcesResult"},
	"resources/templates/list": {schemaModern, "ListResourceTemplatesResult"},
	"tools/call":               {schemaModern, "CallToolResult"},
	"tasks/get":                {schemaExt, "GetTaskResult"},
	"tasks/update":             {schemaExt, "UpdateTaskResult"},
	"tasks/cancel":             {schemaExt, "CancelTaskResult"},
	"subscriptions/listen":     {schemaModern, "SubscriptionsListenResult"},
}

// legacyResults names the 2025-11-25 definition of each result (tasks/result returns the
// original request's result: a CallToolResult).
var legacyResults = map[string]string{
	"initialize":   "InitializeResult",
	"tools/list":   "ListToolsResult",
	"tools/call":   "CallToolResult",
	"tasks/get":    "GetTaskResult",
	"tasks/cancel": "CancelTaskResult",
	"tasks/list":   "ListTasksResult",
	"tasks/result": "CallToolResult",
}

// exchange tags the context of one request the checker sent.
type exchange struct {
	method, taskID, tool string
}

type exchangeKey struct{}

func (r *runner) inFlight(m map[string]int, key string, d int) {
	r.mu.Lock()
	if m[key] += d; m[key] <= 0 {
		delete(m, key)
	}
	r.mu.Unlock()
}

// only returns the one key of m, or "" when it has none or several.
func only(m map[string]int) string {
	if len(m) != 1 {
		return ""
	}
	for k, n := range m {
		if n == 1 {
			return k
		}
	}
	return ""
}

// serverRequest is a 2025-11-25 server-to-client request the checker answered.
type serverRequest struct {
	method string
	// taskID is the task it belongs to: from its related-task meta, or from the tasks/result
	// stream it came on.
	taskID string
	// related says it carried related-task meta.
	related bool
	// forTask says it belongs to a task (it came on a tasks/result stream, carried
	// related-task, or arrived while only a tasks/result was waiting); tool names the plain
	// tools/call it came on, when it did.
	forTask bool
	tool    string
	// candidates are the plain tools/call in flight when it came on a stream the checker
	// cannot name: it belongs to one of them.
	candidates []string
	answer     string
	problem    string
}

// onRequest answers a 2025-11-25 server-to-client request (elicitation/create, sent on a
// tasks/result stream for a task in input_required) with a minimal valid answer built from its
// schema, and records it for the rules.
func (r *runner) onRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	var rel struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(p.Meta[rpc.MetaRelatedTask], &rel)
	ans, err := answerRequest(method, params)
	sr := serverRequest{method: method, taskID: rel.TaskID, related: rel.TaskID != "", forTask: rel.TaskID != ""}
	if tag, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		switch tag.method {
		case "tasks/result":
			sr.forTask = true
			if sr.taskID == "" {
				sr.taskID = tag.taskID
			}
		case "tools/call":
			sr.tool = tag.tool
		}
	} else if !sr.forTask {
		// A stream the checker cannot name (stdio, or the GET stream), and no related-task
		// meta: it is a plain call's when one is waiting (a task's request MUST carry the
		// meta, C25-TASKS §Input Required Status; the checker sends tasks/result early, so
		// one is often waiting too), else a task's when a tasks/result is waiting.
		r.mu.Lock()
		if len(r.plainCalls) > 0 {
			for name := range r.plainCalls {
				sr.candidates = append(sr.candidates, name)
			}
			sort.Strings(sr.candidates)
		} else if len(r.payloads) > 0 {
			sr.forTask, sr.taskID = true, only(r.payloads)
		}
		r.mu.Unlock()
	}
	if err != nil {
		sr.problem = err.Error()
		r.mu.Lock()
		r.requests = append(r.requests, sr)
		r.mu.Unlock()
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "mcptask check cannot answer " + method + ": " + err.Error()}
	}
	res := ans
	if rel.TaskID != "" {
		// C25-TASKS §Associating Task-Related Messages: the response carries related-task too.
		m := obj(ans)
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m["_meta"], _ = json.Marshal(map[string]any{rpc.MetaRelatedTask: map[string]any{"taskId": rel.TaskID}})
		res, _ = json.Marshal(m)
	}
	sr.answer = string(compact(ans))
	r.mu.Lock()
	r.requests = append(r.requests, sr)
	r.mu.Unlock()
	return res, nil
}

// rpcErr returns the JSON-RPC error of an answer, or nil.
func rpcErr(m *rpc.Message) *rpc.Error {
	if m == nil {
		return nil
	}
	return m.Error
}

// describe says in a few words what an answer was, for a failure message.
func describe(m *rpc.Message, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case m.Error != nil:
		s := fmt.Sprintf("error %d %q", m.Error.Code, m.Error.Message)
		if m.Error.HTTPStatus != 0 {
			s += fmt.Sprintf(" with HTTP %d", m.Error.HTTPStatus)
		}
		return s
	}
	return "a result " + quote(m.Result)
}

// wantError judges an answer that must be the JSON-RPC error code (and, over HTTP, the status
// when status is not 0). It returns "" when it is.
func (r *runner) wantError(m *rpc.Message, err error, code int64, status int) string {
	if err != nil {
		return err.Error()
	}
	if m.Error == nil {
		return "got " + describe(m, nil) + fmt.Sprintf(", want error %d", code)
	}
	if m.Error.Code != code {
		return fmt.Sprintf("got %s, want %d", describe(m, nil), code)
	}
	if r.o.HTTP && status != 0 && m.Error.HTTPStatus != status {
		got := m.Error.HTTPStatus
		if got == 0 {
			got = 200
		}
		return fmt.Sprintf("got %d with HTTP %d, want HTTP %d", code, got, status)
	}
	return ""
}

func joinMax(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, "; ")
	}
	return strings.Join(list[:n], "; ") + fmt.Sprintf("; and %d more", len(list)-n)
}
