package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	// something will answer: OnRequest in this process, or a later one that reuses a
	// 2025-11-25 session (C26-MRTR §Server Requirements forbids servers from sending input
	// requests of a kind the client did not declare).
	Elicitation bool
	// Sampling declares the sampling capability, under the same rule: only when something
	// answers sampling/createMessage (a program given with --on-input exec).
	Sampling bool
	// OnRequest answers a server-to-client request (2025-11-25 elicitation/create and the like).
	// It returns the result object, or an *Error; NoResponse sends nothing back. When nil,
	// such requests are refused with -32601, which is right because nothing was declared.
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error)
	// OnNotify receives server notifications (progress, notifications/tasks/status, log).
	OnNotify func(method string, params json.RawMessage)
	// LenientCaps keeps a 2025-11-25 session whose initialize carries a malformed
	// capabilities object (wrong JSON types): the raw object stays available through
	// Capabilities and none of it is taken as declared. The checker sets it, because a
	// malformed capability is a finding to report, not a server it cannot reach.
	LenientCaps bool
	// Observe, when set, sees every request's method, params and outcome (the result, or the
	// error): the hook for linting a server's traffic while recording it.
	Observe func(era Era, method string, params map[string]any, result json.RawMessage, err error)
	// OnStreamNotice is told of a notification other than notifications/tasks that arrived on
	// a listen stream (one carrying a subscription id), for the linter.
	OnStreamNotice func(method string)
	// OnRestart is told when a dead stdio server was started again (its tasks survive only if
	// it persisted them).
	OnRestart func(cause error)
	// Cache, when set with CacheServer, keeps the answers a 2026-07-28 server marks cacheable
	// (server/discover, tools/list) between runs, honouring their ttlMs and cacheScope.
	Cache MetaCache
	// CacheServer identifies the server in Cache (its URL, or its stdio command and
	// directory); "" leaves the cache off.
	CacheServer string
	// Credential is an opaque fingerprint of the credentials in use, never a credential: a
	// result the server marked "private" is cached per Credential and never shared.
	Credential string
	// ProbeTimeout, when positive, bounds the server/discover probe. Set it for stdio, where a
	// legacy server may say nothing at all (C26-STDIO §Backward Compatibility: "no answer
	// within a timeout" means legacy). Over HTTP an honest server answers, so it stays 0 there;
	// a server that never answers is the caller's to bound, through Connect's context.
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
	// toolsCached is set while tools came from the metadata cache, not this run's tools/list.
	toolsCached bool
	// metaRaw caches the encoded modern _meta for metaVersion.
	metaRaw     []byte
	metaVersion string
	// subs routes listen-stream notifications by subscription id (the listen request's id).
	subs map[string]*Subscription
	// assumed is set by Assume: no handshake happened, so the capabilities are unknown and
	// the server is left to refuse what it does not support.
	assumed bool
	// fromCache is set when the era came from a cached server/discover answer: a failure
	// that says it no longer holds makes the client probe again.
	fromCache bool
	// excluded names the tools left out for invalid x-mcp-header annotations, with why.
	excluded map[string]string
	// step is the request of the opening in flight (server/discover, initialize, ...): what a
	// NoAnswerError names.
	step string
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
			retry, rerr := c.recoverSend(ctx, err, attempt, method)
			if retry {
				continue
			}
			return nil, rerr
		}
		if c.opts.Observe != nil {
			var oerr error
			if resp.Error != nil {
				oerr = resp.Error
			}
			c.opts.Observe(c.Era(), method, params.asMap(), resp.Result, oerr)
		}
		if resp.Error != nil {
			if c.reprobe(ctx, resp.Error, attempt, method) {
				continue
			}
			return nil, resp.Error
		}
		if resp.Result == nil {
			return nil, fmt.Errorf("%w: %s response has neither result nor error", ErrMalformed, method)
		}
		return resp.Result, nil
	}
}

// recoverSend decides what a transport failure err of attempt (from 0) of method calls for:
// retry says to send the request again, after whatever the failure needed (a restarted
// server, a new session); otherwise the error to return.
func (c *Client) recoverSend(ctx context.Context, err error, attempt int, method string) (retry bool, _ error) {
	era := c.Era()
	// C26-CHLOG major item 9: a broken stream loses the request; re-issue it with a
	// new id. Only reads are re-issued automatically: a tools/call might run twice.
	if errors.Is(err, ErrStreamBroken) && era == EraModern && attempt < 2 && method != "tools/call" {
		return true, nil
	}
	// C26-STDIO: a server that died is started again; the request is re-sent once
	// (never tools/call, which might then run twice), after the handshake its era needs.
	if r, ok := c.t.(Restarter); ok && errors.Is(err, ErrServerExited) && attempt == 0 && method != "tools/call" && method != "initialize" {
		if rerr := r.Restart(ctx); rerr != nil {
			return false, fmt.Errorf("%s: %w; restarting it failed: %v", method, err, rerr)
		}
		if c.opts.OnRestart != nil {
			c.opts.OnRestart(err)
		}
		if era == EraLegacy {
			if ierr := c.initialize(ctx); ierr != nil {
				return false, fmt.Errorf("%s: server restarted, and initialize failed: %w", method, ierr)
			}
		}
		return true, nil
	}
	if c.reprobe(ctx, err, attempt, method) {
		return true, nil
	}
	// C25-TRANS §Session Management: on 404 with a session the client MUST start a
	// new session by sending initialize without the id.
	if errors.Is(err, ErrSessionExpired) && era == EraLegacy && attempt == 0 && method != "initialize" {
		if s, ok := c.t.(SessionHolder); ok {
			s.SetSessionID("")
		}
		if ierr := c.initialize(ctx); ierr != nil {
			return false, fmt.Errorf("%s: session expired, and re-initializing failed: %w", method, ierr)
		}
		return true, nil
	}
	return false, err
}

// reprobe handles a failure of a request sent on the strength of a cached server/discover
// answer: when the failure says the answer no longer holds, the cache entry is dropped and the
// era detected again (C26-VER: re-probe if the cached assumption later fails). It reports
// whether the request should be sent again.
func (c *Client) reprobe(ctx context.Context, err error, attempt int, method string) bool {
	c.mu.Lock()
	fromCache := c.fromCache
	c.mu.Unlock()
	if !fromCache || attempt > 0 || !staleAssumption(err) {
		return false
	}
	c.mu.Lock()
	c.fromCache = false
	c.tools = nil
	c.mu.Unlock()
	c.note("era: %s failed (%s) on the strength of a cached server/discover answer; probing again", method, err)
	c.cacheForget("discover", VersionModern)
	c.cacheForget("tools", VersionModern)
	return c.Connect(ctx) == nil
}

// wantsHeaders says whether requests travel over HTTP, where routing headers exist.
func (c *Client) wantsHeaders() bool {
	_, ok := c.t.(*HTTPTransport)
	return ok
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

// NoResponse, returned by an OnRequest, leaves the server's request unanswered: nothing is sent
// back. mcptask gives up on a question this way when the answer it has is wrong, so that the
// task stays as it was (the server sees its request abandoned, as when a client goes away,
// rather than a refusal or a cancelled question it would act upon).
var NoResponse = &Error{Code: CodeInternalError, Message: "left unanswered"}

// handle receives server-initiated messages from the transport. It returns nil for a
// notification, and for a request left unanswered (NoResponse).
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
	if rerr == NoResponse {
		return nil
	}
	if rerr != nil {
		return &Message{Error: rerr}
	}
	if msg.Method == "elicitation/create" {
		// SEP-1034: fields the answer leaves out take the form's defaults, whoever answered.
		res = ElicitDefaults(elicitSchema(msg.Params), res)
	}
	return &Message{Result: res}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
