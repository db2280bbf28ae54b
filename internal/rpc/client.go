package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Implementation is the clientInfo / serverInfo object.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// ClientOptions configures a Client.
type ClientOptions struct {
	// Protocol is "auto" (the default), VersionModern or VersionLegacy.
	Protocol string
	// Info is sent as clientInfo.
	Info Implementation
	// Elicitation declares the elicitation capability (form and url). Declare it only when
	// something will answer: C26-MRTR §Server Requirements forbids servers from sending input
	// requests of a kind the client did not declare.
	Elicitation bool
	// OnRequest answers a server-to-client request (2025-11-25 elicitation/create and the like).
	// It returns the result object, or an *Error. When nil, such requests are refused with
	// -32601, which is right because nothing was declared.
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error)
	// OnNotify receives server notifications (progress, notifications/tasks/status, log).
	OnNotify func(method string, params json.RawMessage)
	// Observe, when set, sees every request's method, params and outcome (the result, or the
	// error): the hook for linting a server's traffic while recording it.
	Observe func(era Era, method string, params map[string]any, result json.RawMessage, err error)
	// OnStreamNotice is told of a notification other than notifications/tasks that arrived on
	// a listen stream (one carrying a subscription id), for the linter.
	OnStreamNotice func(method string)
	// OnRestart is told when a dead stdio server was started again (its tasks survive only if
	// it persisted them).
	OnRestart func(cause error)
	// ProbeTimeout, when positive, bounds the server/discover probe. Set it for stdio, where a
	// legacy server may say nothing at all (C26-STDIO §Backward Compatibility: "no answer
	// within a timeout" means legacy). Over HTTP every server answers, so it stays 0 there.
	ProbeTimeout time.Duration
}

// Client speaks MCP to one server over a Transport, in whichever era the server was reached
// with. It is safe for concurrent use once Connect has returned.
type Client struct {
	t    Transport
	opts ClientOptions

	nextID atomic.Int64

	mu         sync.Mutex
	era        Era
	version    string
	serverInfo Implementation
	caps       serverCaps
	rawCaps    json.RawMessage
	tools      map[string]*Tool
	// metaRaw caches the encoded modern _meta for metaVersion.
	metaRaw     []byte
	metaVersion string
	// subs routes listen-stream notifications by subscription id (the listen request's id).
	subs map[string]*Subscription
	// assumed is set by Assume: no handshake happened, so the capabilities are unknown and
	// the server is left to refuse what it does not support.
	assumed bool
}

// serverCaps holds what mcptask reads from either era's capabilities.
type serverCaps struct {
	// Legacy (2025-11-25) capabilities.tasks.
	Tasks *struct {
		List     *struct{} `json:"list"`
		Cancel   *struct{} `json:"cancel"`
		Requests *struct {
			Tools *struct {
				Call *struct{} `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	} `json:"tasks"`
	// Modern (2026-07-28) capabilities.extensions.
	Extensions map[string]json.RawMessage `json:"extensions"`
}

// NewClient returns a Client on t. Call Connect (or Assume) before anything else.
func NewClient(t Transport, opts ClientOptions) *Client {
	if opts.Protocol == "" {
		opts.Protocol = "auto"
	}
	if opts.Info.Name == "" {
		opts.Info = Implementation{Name: "mcptask", Version: "dev"}
	}
	c := &Client{t: t, opts: opts}
	t.SetHandler(c.handle)
	return c
}

// Transport returns the transport the client runs on.
func (c *Client) Transport() Transport { return c.t }

// Era returns the negotiated era.
func (c *Client) Era() Era { c.mu.Lock(); defer c.mu.Unlock(); return c.era }

// ProtocolVersion returns the negotiated protocol version.
func (c *Client) ProtocolVersion() string { c.mu.Lock(); defer c.mu.Unlock(); return c.version }

// ServerInfo returns the serverInfo the server reported, if any.
func (c *Client) ServerInfo() Implementation { c.mu.Lock(); defer c.mu.Unlock(); return c.serverInfo }

// Capabilities returns the server's capabilities object as received.
func (c *Client) Capabilities() json.RawMessage { c.mu.Lock(); defer c.mu.Unlock(); return c.rawCaps }

// SessionID returns the 2025-11-25 MCP-Session-Id in use, or "".
func (c *Client) SessionID() string {
	if s, ok := c.t.(SessionHolder); ok {
		return s.SessionID()
	}
	return ""
}

// Close closes the transport (ending a 2025-11-25 session with DELETE where one is held).
func (c *Client) Close() error { return c.t.Close() }

// Connect determines the era and performs its opening: server/discover for 2026-07-28,
// initialize + notifications/initialized for 2025-11-25.
//
// With Protocol "auto" it follows C26-VER §Backward Compatibility: probe with a modern
// server/discover; a DiscoverResult or a recognised modern error (-32020, -32021, -32022) means
// modern; anything else that is clearly not modern means legacy. Per PROTOCOL.md §5 rule 16
// the fallback is not keyed to any single error code.
func (c *Client) Connect(ctx context.Context) error {
	switch c.opts.Protocol {
	case VersionLegacy:
		return c.initialize(ctx)
	case VersionModern:
		res, err := c.discover(ctx)
		if err != nil {
			return fmt.Errorf("protocol %s: %w", VersionModern, err)
		}
		return c.acceptDiscover(res)
	case "auto":
	default:
		return fmt.Errorf("unknown protocol %q (want auto, %s or %s)", c.opts.Protocol, VersionModern, VersionLegacy)
	}

	pctx := ctx
	if c.opts.ProbeTimeout > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, c.opts.ProbeTimeout)
		defer cancel()
	}
	res, err := c.discover(pctx)
	if err == nil {
		return c.acceptDiscover(res)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !fallsBackToLegacy(err) {
		return fmt.Errorf("detect protocol: %w", err)
	}
	if ierr := c.initialize(ctx); ierr != nil {
		return fmt.Errorf("detect protocol: server/discover failed (%v), then %w", err, ierr)
	}
	return nil
}

// fallsBackToLegacy says whether a failed server/discover probe means "not a modern server".
// A recognised modern error means the server is modern and the request must be fixed instead
// (C26-HTTP §Backward Compatibility); transport failures and authentication errors are real
// failures, not era signals.
func fallsBackToLegacy(err error) bool {
	var rerr *Error
	if errors.As(err, &rerr) {
		switch rerr.Code {
		case CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
			return false
		}
		return true
	}
	var herr *HTTPError
	if errors.As(err, &herr) {
		return herr.Status == 400 || herr.Status == 404 || herr.Status == 405
	}
	// A stdio legacy server may stay silent: our probe deadline expired.
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return errors.Is(err, ErrMalformed)
}

func (c *Client) discover(ctx context.Context) (json.RawMessage, error) {
	c.mu.Lock()
	c.era, c.version = EraModern, VersionModern
	c.mu.Unlock()
	res, err := c.call(ctx, "server/discover", map[string]any{}, "")
	if err != nil {
		var rerr *Error
		if errors.As(err, &rerr) && rerr.Code == CodeUnsupportedVersion {
			var d struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rerr.Data, &d)
			return nil, fmt.Errorf("server does not support protocol %s (it supports %s): %w",
				VersionModern, strings.Join(d.Supported, ", "), err)
		}
		return nil, err
	}
	return res, nil
}

func (c *Client) acceptDiscover(res json.RawMessage) error {
	var d struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Meta              struct {
			ServerInfo Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &d); err != nil {
		return fmt.Errorf("%w: server/discover result: %v", ErrMalformed, err)
	}
	if !contains(d.SupportedVersions, VersionModern) {
		return fmt.Errorf("server supports %s, not %s; retry with --protocol %s if it also answers initialize",
			strings.Join(d.SupportedVersions, ", "), VersionModern, VersionLegacy)
	}
	var caps serverCaps
	if len(d.Capabilities) > 0 {
		if err := json.Unmarshal(d.Capabilities, &caps); err != nil {
			return fmt.Errorf("%w: server capabilities: %v", ErrMalformed, err)
		}
	}
	c.mu.Lock()
	c.era, c.version, c.caps, c.rawCaps, c.serverInfo = EraModern, VersionModern, caps, d.Capabilities, d.Meta.ServerInfo
	c.mu.Unlock()
	return nil
}

func (c *Client) initialize(ctx context.Context) error {
	c.mu.Lock()
	c.era, c.version, c.assumed = EraLegacy, "", false
	c.mu.Unlock()
	caps := map[string]any{}
	// 2025-11-25 delivers elicitation as a server-to-client request: declare it only when
	// OnRequest can answer one.
	if c.opts.Elicitation && c.opts.OnRequest != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	res, err := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": VersionLegacy,
		"capabilities":    caps,
		"clientInfo":      c.opts.Info,
	}, "")
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var ir struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      Implementation  `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &ir); err != nil {
		return fmt.Errorf("%w: initialize result: %v", ErrMalformed, err)
	}
	// C25-LIFE §Version Negotiation: if the server answers another version the client SHOULD
	// disconnect when it cannot use it.
	if ir.ProtocolVersion != VersionLegacy {
		return fmt.Errorf("server answered initialize with protocol %q; mcptask speaks %s and %s",
			ir.ProtocolVersion, VersionLegacy, VersionModern)
	}
	var caps2 serverCaps
	if len(ir.Capabilities) > 0 {
		if err := json.Unmarshal(ir.Capabilities, &caps2); err != nil {
			return fmt.Errorf("%w: server capabilities: %v", ErrMalformed, err)
		}
	}
	c.mu.Lock()
	c.version, c.caps, c.rawCaps, c.serverInfo = ir.ProtocolVersion, caps2, ir.Capabilities, ir.ServerInfo
	c.mu.Unlock()
	// C25-LIFE §Initialization: the client MUST send notifications/initialized.
	if err := c.notify(ctx, "notifications/initialized", map[string]any{}); err != nil {
		return fmt.Errorf("send notifications/initialized: %w", err)
	}
	return nil
}

// Assume sets the era without a handshake: for a resumed 2026-07-28 task (stateless, so
// nothing is lost) or a 2025-11-25 task whose session id is being reused. For 2025-11-25
// without a session id, call Connect instead.
func (c *Client) Assume(era Era, sessionID string) {
	c.mu.Lock()
	c.era = era
	c.version = string(era)
	c.assumed = true
	c.mu.Unlock()
	if s, ok := c.t.(SessionHolder); ok && sessionID != "" {
		s.SetSessionID(sessionID)
	}
}

// KeepSession(true) leaves a 2025-11-25 HTTP session open when the client closes (no
// DELETE), because a task that is not finished is bound to it and will be polled again
// through it; KeepSession(false) lets Close end the session again.
func (c *Client) KeepSession(keep bool) {
	if k, ok := c.t.(interface{ KeepSession(bool) }); ok {
		k.KeepSession(keep)
	}
}

// TasksSupported reports whether the server declared task support for tools/call: the
// extension in 2026-07-28, capabilities.tasks.requests.tools.call in 2025-11-25.
func (c *Client) TasksSupported() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.era == EraModern {
		_, ok := c.caps.Extensions[TasksExtension]
		return ok
	}
	t := c.caps.Tasks
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

func (c *Client) legacyCan(what string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.assumed {
		return true
	}
	t := c.caps.Tasks
	if t == nil {
		return false
	}
	switch what {
	case "list":
		return t.List != nil
	case "cancel":
		return t.Cancel != nil
	}
	return false
}

// call sends one request and returns its result, or an error (an *Error for a JSON-RPC error).
// name is the value of Mcp-Name for modern HTTP routing ("" when the method has none).
func (c *Client) call(ctx context.Context, method string, params map[string]any, name string) (json.RawMessage, error) {
	return c.send(ctx, method, reqParams{m: params}, name, nil)
}

func (c *Client) callHdr(ctx context.Context, method string, params map[string]any, name string, extra http.Header) (json.RawMessage, error) {
	return c.send(ctx, method, reqParams{m: params}, name, extra)
}

// taskCall sends a request whose params are just {"taskId": id} (tasks/get, tasks/result,
// tasks/cancel), routed by the task id. These run on every poll, so no map is built for them.
func (c *Client) taskCall(ctx context.Context, method, id string) (json.RawMessage, error) {
	return c.send(ctx, method, reqParams{task: true, taskID: id}, id, nil)
}

// reqParams is a request's params: the map m, or when task is set, the {"taskId": taskID}
// of the task methods.
type reqParams struct {
	m      map[string]any
	task   bool
	taskID string
}

// asMap returns the params as a map, for Observe and the general encoder.
func (p reqParams) asMap() map[string]any {
	if p.task {
		return map[string]any{"taskId": p.taskID}
	}
	return p.m
}

func (c *Client) send(ctx context.Context, method string, params reqParams, name string, extra http.Header) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		msg, hdr, err := c.build(method, params, name, true)
		if err != nil {
			return nil, err
		}
		for k, v := range extra {
			hdr[k] = v
		}
		resp, err := c.t.RoundTrip(ctx, msg, hdr)
		if err != nil {
			era := c.Era()
			// C26-CHLOG major item 9: a broken stream loses the request; re-issue it with a
			// new id. Only reads are re-issued automatically: a tools/call might run twice.
			if errors.Is(err, ErrStreamBroken) && era == EraModern && attempt < 2 && method != "tools/call" {
				continue
			}
			// C26-STDIO: a server that died is started again; the request is re-sent once
			// (never tools/call, which might then run twice), after the handshake its era needs.
			if r, ok := c.t.(Restarter); ok && errors.Is(err, ErrServerExited) && attempt == 0 && method != "tools/call" && method != "initialize" {
				if rerr := r.Restart(ctx); rerr != nil {
					return nil, fmt.Errorf("%s: %w; restarting it failed: %v", method, err, rerr)
				}
				if c.opts.OnRestart != nil {
					c.opts.OnRestart(err)
				}
				if era == EraLegacy {
					if ierr := c.initialize(ctx); ierr != nil {
						return nil, fmt.Errorf("%s: server restarted, and initialize failed: %w", method, ierr)
					}
				}
				continue
			}
			// C25-TRANS §Session Management: on 404 with a session the client MUST start a
			// new session by sending initialize without the id.
			if errors.Is(err, ErrSessionExpired) && era == EraLegacy && attempt == 0 && method != "initialize" {
				if s, ok := c.t.(SessionHolder); ok {
					s.SetSessionID("")
				}
				if ierr := c.initialize(ctx); ierr != nil {
					return nil, fmt.Errorf("%s: session expired, and re-initializing failed: %w", method, ierr)
				}
				continue
			}
			return nil, err
		}
		if c.opts.Observe != nil {
			var oerr error
			if resp.Error != nil {
				oerr = resp.Error
			}
			c.opts.Observe(c.Era(), method, params.asMap(), resp.Result, oerr)
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		if resp.Result == nil {
			return nil, fmt.Errorf("%w: %s response has neither result nor error", ErrMalformed, method)
		}
		return resp.Result, nil
	}
}

func (c *Client) notify(ctx context.Context, method string, params map[string]any) error {
	msg, hdr, err := c.build(method, reqParams{m: params}, "", false)
	if err != nil {
		return err
	}
	return c.t.Send(ctx, msg, hdr)
}

// build makes the message and headers for method in the current era.
func (c *Client) build(method string, params reqParams, name string, request bool) (*Message, http.Header, error) {
	c.mu.Lock()
	era, version := c.era, c.version
	c.mu.Unlock()
	// Canonical header keys are assigned directly, and the value slices that never change are
	// shared (net/http only reads them): this runs on every poll.
	hdr := make(http.Header, 3)
	var raw []byte
	var err error
	if era == EraModern {
		// C26-BASIC §_meta: every request MUST carry protocolVersion and clientCapabilities,
		// and SHOULD carry clientInfo.
		raw, err = c.modernParams(params, version)
		// C26-HTTP §Protocol Version Header, §Standard Request Headers.
		hdr["Mcp-Protocol-Version"] = headerValue(version)
		hdr["Mcp-Method"] = headerValue(method)
		if name != "" {
			hdr["Mcp-Name"] = []string{EncodeHeaderValue(name)}
		}
	} else {
		if version != "" {
			// C25-TRANS §Protocol Version Header: after initialize, on every request.
			hdr["Mcp-Protocol-Version"] = headerValue(version)
		}
		switch {
		case params.task:
			raw = taskParams(params.taskID, nil)
		case params.m == nil:
			raw = []byte("{}")
		default:
			raw, err = json.Marshal(params.m)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s params: %w", method, err)
	}
	if request {
		return newRequest(c.nextID.Add(1), method, raw), hdr, nil
	}
	return &Message{JSONRPC: "2.0", Method: method, Params: raw}, hdr, nil
}

// fixedHeaderValues holds one shared value slice per version and method name mcptask sends.
var fixedHeaderValues = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range []string{VersionModern, VersionLegacy, "server/discover", "initialize", "tools/list",
		"tools/call", "tasks/get", "tasks/result", "tasks/cancel", "tasks/update", "tasks/list", "subscriptions/listen"} {
		m[v] = []string{v}
	}
	return m
}()

// headerValue returns the header value slice for v, shared when v is a fixed word.
func headerValue(v string) []string {
	if s, ok := fixedHeaderValues[v]; ok {
		return s
	}
	return []string{v}
}

// taskParams encodes the {"taskId": id} params of the task methods, with meta (encoded
// _meta) when it is not nil, in one allocation.
func taskParams(id string, meta []byte) []byte {
	out := make([]byte, 0, len(id)+len(meta)+24)
	out = appendJSONString(append(out, `{"taskId":`...), id)
	if meta != nil {
		out = append(append(out, `,"_meta":`...), meta...)
	}
	return append(out, '}')
}

// modernParams encodes params with the per-request _meta merged in. The _meta of mcptask's
// own (version, capabilities, clientInfo) never changes for a client, so it is encoded once.
func (c *Client) modernParams(p reqParams, version string) ([]byte, error) {
	params := p.m
	userMeta, _ := params["_meta"].(map[string]any)
	if userMeta != nil {
		// Rare (a progress token, say): merge the maps the slow way.
		meta := make(map[string]any, len(userMeta)+3)
		for k, v := range userMeta {
			meta[k] = v
		}
		meta[MetaProtocolVersion] = version
		meta[MetaClientCapabilities] = c.modernCaps()
		meta[MetaClientInfo] = c.opts.Info
		p := make(map[string]any, len(params))
		for k, v := range params {
			p[k] = v
		}
		p["_meta"] = meta
		return json.Marshal(p)
	}
	c.mu.Lock()
	if c.metaRaw == nil || c.metaVersion != version {
		m, err := json.Marshal(map[string]any{
			MetaProtocolVersion:    version,
			MetaClientCapabilities: c.modernCaps(),
			MetaClientInfo:         c.opts.Info,
		})
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.metaRaw, c.metaVersion = m, version
	}
	meta := c.metaRaw
	c.mu.Unlock()
	if p.task {
		return taskParams(p.taskID, meta), nil
	}
	if len(params) == 0 {
		return append(append([]byte(`{"_meta":`), meta...), '}'), nil
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	// body is a non-empty object "{...}": splice _meta in before its closing brace.
	out := make([]byte, 0, len(body)+len(meta)+10)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"_meta":`...)
	out = append(out, meta...)
	return append(out, '}'), nil
}

// modernCaps is the per-request clientCapabilities. EXT §Capability Negotiation: the tasks
// extension is declared on tools/call and every tasks/* request; its settings object MUST be
// empty.
func (c *Client) modernCaps() map[string]any {
	caps := map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}
	if c.opts.Elicitation {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	return caps
}

// handle receives server-initiated messages from the transport.
func (c *Client) handle(ctx context.Context, msg *Message) *Message {
	if msg.IsNotification() {
		if c.dispatchSubscription(msg) {
			return nil
		}
		if c.opts.OnNotify != nil {
			c.opts.OnNotify(msg.Method, msg.Params)
		}
		return nil
	}
	if msg.Method == "ping" {
		return &Message{Result: json.RawMessage(`{}`)}
	}
	// C26-HTTP §Receiving Messages: a modern server MUST NOT send requests; refuse them.
	if c.Era() == EraModern || c.opts.OnRequest == nil {
		return &Message{Error: &Error{Code: CodeMethodNotFound, Message: "mcptask does not handle " + msg.Method}}
	}
	res, rerr := c.opts.OnRequest(ctx, msg.Method, msg.Params)
	if rerr != nil {
		return &Message{Error: rerr}
	}
	return &Message{Result: res}
}

// ListTools fetches every page of tools/list. In 2026-07-28 over HTTP, tools whose
// x-mcp-header annotations are invalid are dropped (C26-HTTP §Custom Headers from Tool
// Parameters: clients MUST exclude them); the dropped ones are returned as warnings.
func (c *Client) ListTools(ctx context.Context) ([]*Tool, []string, error) {
	var tools []*Tool
	var warnings []string
	cursor := ""
	seen := map[string]bool{}
	for page := 0; page < 1000; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := c.call(ctx, "tools/list", params, "")
		if err != nil {
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		if err := checkResultType(res, c.Era(), false); err != nil {
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		var lr struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &lr); err != nil {
			return nil, nil, fmt.Errorf("%w: tools/list result: %v", ErrMalformed, err)
		}
		for _, raw := range lr.Tools {
			var t Tool
			if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
				warnings = append(warnings, fmt.Sprintf("skipped a tool that is not a valid Tool object: %s", snippet(raw)))
				continue
			}
			t.Raw = raw
			if c.Era() == EraModern {
				if _, err := headerParams(t.InputSchema); err != nil {
					warnings = append(warnings, fmt.Sprintf("excluded tool %q: %v", t.Name, err))
					continue
				}
			}
			tools = append(tools, &t)
		}
		if lr.NextCursor == "" || seen[lr.NextCursor] {
			break
		}
		seen[lr.NextCursor] = true
		cursor = lr.NextCursor
	}
	c.mu.Lock()
	c.tools = map[string]*Tool{}
	for _, t := range tools {
		c.tools[t.Name] = t
	}
	c.mu.Unlock()
	return tools, warnings, nil
}

// Tool returns the named tool, fetching tools/list once if needed. It returns nil without
// error when the server has no such tool.
func (c *Client) Tool(ctx context.Context, name string) (*Tool, error) {
	c.mu.Lock()
	cached := c.tools
	c.mu.Unlock()
	if cached == nil {
		if _, _, err := c.ListTools(ctx); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools[name], nil
}

// CallParams are the inputs of tools/call.
type CallParams struct {
	Name      string
	Arguments map[string]any
	// TTL is the 2025-11-25 requested task lifetime (params.task.ttl); 0 leaves it to the server.
	TTL time.Duration
	// InputResponses and RequestState retry a 2026-07-28 MRTR round (C26-MRTR).
	InputResponses map[string]json.RawMessage
	RequestState   string
	// ProgressToken, when set, goes into _meta.progressToken.
	ProgressToken string
}

// CallTool sends tools/call, asking for a task where the era and the tool allow it, and
// decodes whichever shape comes back.
func (c *Client) CallTool(ctx context.Context, p CallParams) (*CallResult, error) {
	params := map[string]any{"name": p.Name}
	if p.Arguments != nil {
		params["arguments"] = p.Arguments
	} else {
		params["arguments"] = map[string]any{}
	}
	meta := map[string]any{}
	if p.ProgressToken != "" {
		meta["progressToken"] = p.ProgressToken
	}
	era := c.Era()
	var extra http.Header
	if era == EraLegacy {
		// C25-TASKS §Tool-Level Negotiation: only when the server declares
		// tasks.requests.tools.call, and never for a tool whose taskSupport is absent or
		// "forbidden"; "required" tools MUST get it.
		if c.TasksSupported() {
			tool, err := c.Tool(ctx, p.Name)
			if err != nil {
				return nil, err
			}
			if tool != nil && (tool.TaskSupport() == "optional" || tool.TaskSupport() == "required") {
				task := map[string]any{}
				if p.TTL > 0 {
					task["ttl"] = p.TTL.Milliseconds()
				}
				params["task"] = task
			}
		}
	} else {
		if len(p.InputResponses) > 0 {
			params["inputResponses"] = p.InputResponses
		}
		// C26-MRTR §Client Requirements: echo requestState exactly, or omit it.
		if p.RequestState != "" {
			params["requestState"] = p.RequestState
		}
		c.mu.Lock()
		tool := c.tools[p.Name]
		c.mu.Unlock()
		if tool != nil {
			extra = paramHeaders(tool, p.Arguments)
		}
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	res, err := c.callHdr(ctx, "tools/call", params, p.Name, extra)
	// C26-HTTP §Client Behavior: on HeaderMismatch the client SHOULD call tools/list to see
	// the tool's inputSchema, then retry with the right headers.
	var rerr *Error
	if era == EraModern && errors.As(err, &rerr) && rerr.Code == CodeHeaderMismatch {
		if _, _, lerr := c.ListTools(ctx); lerr == nil {
			c.mu.Lock()
			tool := c.tools[p.Name]
			c.mu.Unlock()
			if tool != nil {
				if meta, ok := params["_meta"].(map[string]any); ok {
					delete(meta, MetaProtocolVersion)
				}
				res, err = c.callHdr(ctx, "tools/call", params, p.Name, paramHeaders(tool, p.Arguments))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return DecodeCallResult(res, era)
}

// DecodeCallResult decodes a tools/call result of the given era.
func DecodeCallResult(res json.RawMessage, era Era) (*CallResult, error) {
	var probe struct {
		ResultType    *string                    `json:"resultType"`
		Task          json.RawMessage            `json:"task"`
		TaskID        json.RawMessage            `json:"taskId"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if err := json.Unmarshal(res, &probe); err != nil {
		return nil, fmt.Errorf("%w: tools/call result: %v", ErrMalformed, err)
	}
	kind := "complete"
	if probe.ResultType != nil {
		kind = *probe.ResultType
	} else if era == EraLegacy && len(probe.Task) > 0 && !isJSONNull(probe.Task) {
		kind = "legacy-task"
	}
	switch kind {
	case "complete":
		tr, err := DecodeToolResult(res)
		if err != nil {
			return nil, err
		}
		return &CallResult{Kind: KindComplete, Tool: tr, Raw: res}, nil
	case "task":
		// EXT §Task Creation: CreateTaskResult is flat, Result & Task.
		t, err := DecodeTask(res)
		if err != nil {
			return nil, fmt.Errorf("CreateTaskResult: %w", err)
		}
		return &CallResult{Kind: KindTask, Task: t, Raw: res}, nil
	case "legacy-task":
		// C25-TASKS §Creating Tasks: the task is nested under "task".
		t, err := DecodeTask(probe.Task)
		if err != nil {
			return nil, fmt.Errorf("CreateTaskResult: %w", err)
		}
		t.Raw = res
		return &CallResult{Kind: KindTask, Task: t, Raw: res}, nil
	case "input_required":
		if era != EraModern {
			return nil, fmt.Errorf("%w: resultType input_required from a %s server", ErrMalformed, era)
		}
		return &CallResult{Kind: KindInputRequired, InputRequests: probe.InputRequests, RequestState: probe.RequestState, Raw: res}, nil
	}
	// C26-BASIC §ResultType: a value the client does not recognise MUST be treated as invalid.
	return nil, fmt.Errorf("%w: unknown resultType %q in tools/call result", ErrMalformed, kind)
}

// DecodeToolResult decodes a CallToolResult.
func DecodeToolResult(res json.RawMessage) (*ToolResult, error) {
	var tr ToolResult
	if err := json.Unmarshal(res, &tr); err != nil {
		return nil, fmt.Errorf("%w: CallToolResult: %v", ErrMalformed, err)
	}
	if tr.Content == nil && tr.StructuredContent == nil {
		return nil, fmt.Errorf("%w: CallToolResult has no content: %s", ErrMalformed, snippet(res))
	}
	tr.Raw = res
	return &tr, nil
}

// wireTask accepts both eras' field names.
type wireTask struct {
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTL            json.RawMessage            `json:"ttl"`
	TTLMs          json.RawMessage            `json:"ttlMs"`
	PollInterval   float64                    `json:"pollInterval"`
	PollIntervalMs float64                    `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *Error                     `json:"error"`
	ResultType     string                     `json:"resultType"`
}

// DecodeTask decodes a flat Task object of either era (ttl or ttlMs, pollInterval or
// pollIntervalMs). taskId and a valid status are required; a missing timestamp is tolerated
// (the conformance checker reports it) but a malformed one is not.
func DecodeTask(raw json.RawMessage) (*Task, error) {
	t, _, err := decodeTask(raw, json.Valid(raw))
	return t, err
}

// decodeTask is DecodeTask that also returns the resultType it met, so that tasks/get parses
// its answer once. valid says raw is known to be valid JSON (the fast decoder needs that);
// the result of a decoded Message is, so tasks/get does not scan it a second time.
func decodeTask(raw json.RawMessage, valid bool) (*Task, *string, error) {
	var w wireTask
	if !valid || !decodeTaskFast(raw, &w) {
		slow := new(wireTask) // not &w, which would then live on the heap on the fast path too
		if err := json.Unmarshal(raw, slow); err != nil {
			return nil, nil, fmt.Errorf("%w: task: %v", ErrMalformed, err)
		}
		w = *slow
	}
	t, err := w.task(raw)
	if w.ResultType == "" {
		return t, nil, err
	}
	return t, &w.ResultType, err
}

func (w *wireTask) task(raw json.RawMessage) (*Task, error) {
	if w.TaskID == "" {
		return nil, fmt.Errorf("%w: task has no taskId: %s", ErrMalformed, snippet(raw))
	}
	if !TaskStatus(w.Status).Valid() {
		st := w.Status
		if st == "" {
			st = "<missing>"
		}
		return nil, fmt.Errorf("%w: task %s has invalid status %q", ErrMalformed, w.TaskID, st)
	}
	// The Task and the duration its TTL points at share one allocation.
	box := &struct {
		Task
		ttl time.Duration
	}{Task: Task{
		TaskID:        w.TaskID,
		Status:        TaskStatus(w.Status),
		StatusMessage: w.StatusMessage,
		InputRequests: w.InputRequests,
		Result:        w.Result,
		Error:         w.Error,
		Raw:           raw,
	}}
	t := &box.Task
	var err error
	if t.CreatedAt, err = parseTime(w.CreatedAt); err != nil {
		return nil, fmt.Errorf("%w: task %s createdAt: %v", ErrMalformed, t.TaskID, err)
	}
	if t.LastUpdatedAt, err = parseTime(w.LastUpdatedAt); err != nil {
		return nil, fmt.Errorf("%w: task %s lastUpdatedAt: %v", ErrMalformed, t.TaskID, err)
	}
	ttl := w.TTLMs
	if ttl == nil {
		ttl = w.TTL
	}
	if ttl != nil && !isJSONNull(ttl) {
		ms, err := jsonNumber(ttl)
		if err != nil {
			return nil, fmt.Errorf("%w: task %s ttl is not a number: %s", ErrMalformed, t.TaskID, snippet(ttl))
		}
		box.ttl = msDuration(ms)
		t.TTL = &box.ttl
	}
	pi := w.PollIntervalMs
	if pi == 0 {
		pi = w.PollInterval
	}
	// The schema allows any safe integer; values <= 0 are treated as absent (PROTOCOL.md §2.5).
	if pi > 0 {
		t.PollInterval = msDuration(pi)
	}
	return t, nil
}

// msDuration converts a wire millisecond count, clamping it to [0, max Duration] so that a
// hostile 1e300 cannot overflow into a negative or zero duration.
func msDuration(ms float64) time.Duration {
	const maxMs = float64(math.MaxInt64 / int64(time.Millisecond))
	switch {
	case !(ms > 0): // also NaN
		return 0
	case ms >= maxMs:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// checkResultType enforces C26-BASIC §ResultType on a modern result of a method that is not
// tools/call: absent is "complete", "task" is invalid off tools/call (EXT §Capability
// Negotiation), anything unknown is invalid.
func checkResultType(res json.RawMessage, era Era, allowTask bool) error {
	if era != EraModern {
		return nil
	}
	var p struct {
		ResultType *string `json:"resultType"`
	}
	if err := json.Unmarshal(res, &p); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if p.ResultType == nil || *p.ResultType == "complete" {
		return nil
	}
	if *p.ResultType == "task" && allowTask {
		return nil
	}
	return fmt.Errorf("%w: resultType %q is not valid here", ErrMalformed, *p.ResultType)
}

// GetTask sends one tasks/get.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	res, err := c.taskCall(ctx, "tasks/get", id)
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	t, rt, err := decodeTask(res, true) // a result of a decoded message is valid JSON
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	// EXT §Task Polling: a tasks/get result is complete (absent resultType); "task" is only
	// for task creation, and anything else is invalid.
	if c.Era() == EraModern && rt != nil && *rt != "complete" {
		return nil, fmt.Errorf("get task %s: %w: resultType %q is not valid here", id, ErrMalformed, *rt)
	}
	if t.TaskID != id {
		return nil, fmt.Errorf("get task %s: %w: server answered for task %q", id, ErrMalformed, t.TaskID)
	}
	return t, nil
}

// ErrNotTerminal means a result was asked for a task that has not finished.
var ErrNotTerminal = errors.New("task has not finished")

// TaskResult returns the final result of a tools/call task: 2025-11-25 tasks/result (which
// blocks until the task is terminal, so bound ctx), 2026-07-28 the inline result of tasks/get.
// A task that failed with a JSON-RPC error returns that *Error. A 2026-07-28 task that is not
// terminal returns ErrNotTerminal, and one that was cancelled returns the task with no result.
func (c *Client) TaskResult(ctx context.Context, id string) (*ToolResult, *Task, error) {
	if c.Era() == EraLegacy {
		res, err := c.taskCall(ctx, "tasks/result", id)
		if err != nil {
			return nil, nil, fmt.Errorf("task result %s: %w", id, err)
		}
		tr, err := DecodeToolResult(res)
		if err != nil {
			return nil, nil, fmt.Errorf("task result %s: %w", id, err)
		}
		return tr, nil, nil
	}
	t, err := c.GetTask(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return ModernResult(t)
}

// ModernResult extracts the inline outcome of a 2026-07-28 DetailedTask (EXT §Task Polling):
// result when completed, error when failed.
func ModernResult(t *Task) (*ToolResult, *Task, error) {
	switch t.Status {
	case StatusCompleted:
		if t.Result == nil {
			return nil, t, fmt.Errorf("task %s: %w: completed task has no result", t.TaskID, ErrMalformed)
		}
		tr, err := DecodeToolResult(t.Result)
		if err != nil {
			return nil, t, fmt.Errorf("task %s: %w", t.TaskID, err)
		}
		return tr, t, nil
	case StatusFailed:
		if t.Error == nil {
			return nil, t, fmt.Errorf("task %s: %w: failed task has no error", t.TaskID, ErrMalformed)
		}
		return nil, t, t.Error
	case StatusCancelled:
		return nil, t, nil
	}
	return nil, t, fmt.Errorf("task %s is %s: %w", t.TaskID, t.Status, ErrNotTerminal)
}

// CancelTask sends tasks/cancel. In 2025-11-25 the answer is the task, already cancelled; in
// 2026-07-28 it is an empty acknowledgement (cancellation is cooperative) and the returned
// task is nil.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, json.RawMessage, error) {
	if c.Era() == EraLegacy && !c.legacyCan("cancel") {
		// C25-TASKS §Capabilities: tasks/cancel requires the server's tasks.cancel.
		return nil, nil, fmt.Errorf("cancel task %s: the server does not declare tasks.cancel", id)
	}
	res, err := c.taskCall(ctx, "tasks/cancel", id)
	if err != nil {
		return nil, nil, fmt.Errorf("cancel task %s: %w", id, err)
	}
	if c.Era() == EraModern {
		if err := checkResultType(res, EraModern, false); err != nil {
			return nil, res, fmt.Errorf("cancel task %s: %w", id, err)
		}
		return nil, res, nil
	}
	t, err := DecodeTask(res)
	if err != nil {
		return nil, res, fmt.Errorf("cancel task %s: %w", id, err)
	}
	return t, res, nil
}

// UpdateTask sends 2026-07-28 tasks/update with answers to outstanding input requests.
func (c *Client) UpdateTask(ctx context.Context, id string, responses map[string]json.RawMessage) error {
	if c.Era() != EraModern {
		return fmt.Errorf("update task %s: tasks/update exists only in %s", id, VersionModern)
	}
	res, err := c.call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": responses}, id)
	if err != nil {
		return fmt.Errorf("update task %s: %w", id, err)
	}
	return checkResultType(res, EraModern, false)
}

// ListTasks fetches one page of 2025-11-25 tasks/list.
func (c *Client) ListTasks(ctx context.Context, cursor string) ([]*Task, string, error) {
	if c.Era() != EraLegacy {
		return nil, "", fmt.Errorf("list tasks: %s has no tasks/list", VersionModern)
	}
	if !c.legacyCan("list") {
		return nil, "", fmt.Errorf("list tasks: the server does not declare tasks.list")
	}
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	res, err := c.call(ctx, "tasks/list", params, "")
	if err != nil {
		return nil, "", fmt.Errorf("list tasks: %w", err)
	}
	var lr struct {
		Tasks      []json.RawMessage `json:"tasks"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &lr); err != nil {
		return nil, "", fmt.Errorf("%w: tasks/list result: %v", ErrMalformed, err)
	}
	out := make([]*Task, 0, len(lr.Tasks))
	for _, raw := range lr.Tasks {
		t, err := DecodeTask(raw)
		if err != nil {
			return nil, "", fmt.Errorf("list tasks: %w", err)
		}
		out = append(out, t)
	}
	return out, lr.NextCursor, nil
}

// IsUnknownTask reports whether err is the server saying it does not know the task: -32602
// on a tasks/* request (C25-TASKS §Error Handling; EXT §Error Handling). Both eras use it for
// expired and purged tasks, so PROTOCOL.md §5 rule 30 maps it to "expired or unknown".
func IsUnknownTask(err error) bool {
	var rerr *Error
	return errors.As(err, &rerr) && rerr.Code == CodeInvalidParams
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
