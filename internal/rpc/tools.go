package rpc

// This file holds tools/list, its per-client cache, and tools/call with the decoding of its
// result shapes in both eras.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// ListTools fetches every page of tools/list. In 2026-07-28 over HTTP, tools whose
// x-mcp-header annotations are invalid are dropped (C26-HTTP §Custom Headers from Tool
// Parameters: clients MUST exclude them); the dropped ones are returned as warnings. A list the
// server marked cacheable (ttlMs, cacheScope) is kept in the metadata cache for later runs.
func (c *Client) ListTools(ctx context.Context) ([]*Tool, []string, error) {
	var raws []json.RawMessage
	cursor := ""
	seen := map[string]bool{}
	var ttl *float64
	scope := ""
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
			TTLMs      *float64          `json:"ttlMs"`
			CacheScope string            `json:"cacheScope"`
		}
		if err := json.Unmarshal(res, &lr); err != nil {
			return nil, nil, fmt.Errorf("%w: tools/list result: %v", ErrMalformed, err)
		}
		raws = append(raws, lr.Tools...)
		// The list may be kept as long as its most short-lived page, and is private if any
		// page is.
		if page == 0 {
			ttl, scope = lr.TTLMs, lr.CacheScope
		} else {
			scope = strictestScope(scope, lr.CacheScope)
			if ttl != nil && (lr.TTLMs == nil || *lr.TTLMs < *ttl) {
				ttl = lr.TTLMs
			}
		}
		if lr.NextCursor == "" || seen[lr.NextCursor] {
			break
		}
		seen[lr.NextCursor] = true
		cursor = lr.NextCursor
	}
	tools, warnings := c.setTools(raws)
	if c.Era() == EraModern {
		if data, err := json.Marshal(toolsCacheEntry{Tools: raws}); err == nil {
			c.cacheStore("tools", VersionModern, data, ttl, scope)
		}
	}
	return tools, warnings, nil
}

// setTools decodes a tools/list and makes it the client's view of the server's tools.
func (c *Client) setTools(raws []json.RawMessage) ([]*Tool, []string) {
	var tools []*Tool
	var warnings []string
	excluded := map[string]string{}
	modern := c.Era() == EraModern
	for _, raw := range raws {
		var t Tool
		if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
			warnings = append(warnings, fmt.Sprintf("skipped a tool that is not a valid Tool object: %s", snippet(raw)))
			continue
		}
		t.Raw = raw
		if modern {
			if _, err := headerParams(t.InputSchema); err != nil {
				warnings = append(warnings, fmt.Sprintf("excluded tool %q: %v", t.Name, err))
				excluded[t.Name] = err.Error()
				continue
			}
		}
		tools = append(tools, &t)
	}
	c.mu.Lock()
	c.tools = map[string]*Tool{}
	c.toolsCached = false
	for _, t := range tools {
		c.tools[t.Name] = t
	}
	c.excluded = excluded
	c.mu.Unlock()
	return tools, warnings
}

// Tool returns the named tool: from the tools already listed in this process, else from a
// fresh cached tools/list, else by fetching tools/list once. It returns nil without error
// when the server has no such tool, and an error naming the reason when mcptask excluded the
// tool (invalid x-mcp-header annotations).
func (c *Client) Tool(ctx context.Context, name string) (*Tool, error) {
	c.mu.Lock()
	cached := c.tools
	c.mu.Unlock()
	if cached == nil && c.Era() == EraModern {
		if data, ok := c.cacheLoad("tools", VersionModern); ok {
			var e toolsCacheEntry
			if json.Unmarshal(data, &e) == nil {
				c.setTools(e.Tools)
				cached = map[string]*Tool{}
				c.mu.Lock()
				c.toolsCached = true
				c.mu.Unlock()
				c.note("tools/list: using the cached list (the server allowed caching it)")
			}
		}
	}
	if cached == nil {
		if _, _, err := c.ListTools(ctx); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if why, ok := c.excluded[name]; ok {
		return nil, fmt.Errorf("%w: mcptask will not call tool %q: its inputSchema has an invalid x-mcp-header annotation (%s), and C26-HTTP §Custom Headers from Tool Parameters says clients MUST exclude such tools", ErrExcludedTool, name, why)
	}
	return c.tools[name], nil
}

// ToolNames are the names of the tools known to this client (listed, or read from the
// cache), sorted; none before Tool or ListTools.
func (c *Client) ToolNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ToolsFromCache reports whether the tools known to this client were read from the metadata
// cache rather than listed by the server in this run.
func (c *Client) ToolsFromCache() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toolsCached
}

// ErrExcludedTool marks a call refused because the tool's definition is invalid.
var ErrExcludedTool = errors.New("tool excluded")

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
	var err error
	if era == EraLegacy {
		err = c.legacyCallParams(ctx, p, params)
	} else {
		extra, err = c.modernCallParams(ctx, p, params)
	}
	if err != nil {
		return nil, err
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	res, err := c.callHdr(ctx, "tools/call", params, p.Name, extra)
	// C26-HTTP §Client Behavior: on HeaderMismatch the client SHOULD call tools/list to see
	// the tool's inputSchema, then retry with the right headers.
	var rerr *Error
	if era == EraModern && errors.As(err, &rerr) && rerr.Code == CodeHeaderMismatch {
		c.note("tools/call %s: -32020 HeaderMismatch; listing the tools again and retrying once", p.Name)
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

// legacyCallParams adds to a 2025-11-25 tools/call's params the task request, where the
// server and the tool allow one.
func (c *Client) legacyCallParams(ctx context.Context, p CallParams, params map[string]any) error {
	c.holdStandaloneStream(ctx)
	// C25-TASKS §Tool-Level Negotiation: only when the server declares
	// tasks.requests.tools.call, and never for a tool whose taskSupport is absent or
	// "forbidden"; "required" tools MUST get it.
	if !c.TasksSupported() {
		return nil
	}
	tool, err := c.Tool(ctx, p.Name)
	if err != nil {
		return err
	}
	if tool != nil && (tool.TaskSupport() == "optional" || tool.TaskSupport() == "required") {
		task := map[string]any{}
		if p.TTL > 0 {
			task["ttl"] = p.TTL.Milliseconds()
		}
		params["task"] = task
	}
	return nil
}

// modernCallParams adds to a 2026-07-28 tools/call's params the MRTR round's answers and
// state, and returns the Mcp-Param-* headers the tool's schema asks for.
func (c *Client) modernCallParams(ctx context.Context, p CallParams, params map[string]any) (http.Header, error) {
	if len(p.InputResponses) > 0 {
		params["inputResponses"] = p.InputResponses
	}
	// C26-MRTR §Client Requirements: echo requestState exactly, or omit it.
	if p.RequestState != "" {
		params["requestState"] = p.RequestState
	}
	// C26-HTTP §Custom Headers from Tool Parameters: the client MUST mirror annotated
	// arguments into Mcp-Param-* headers, on the first call too; so the tool's inputSchema
	// is needed before the call (from this run, the cache, or tools/list).
	if !c.wantsHeaders() {
		return nil, nil
	}
	tool, err := c.Tool(ctx, p.Name)
	if err != nil || tool == nil {
		return nil, err
	}
	return paramHeaders(tool, p.Arguments), nil
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
			return nil, createErr(err)
		}
		return &CallResult{Kind: KindTask, Task: t, Raw: res}, nil
	case "legacy-task":
		// C25-TASKS §Creating Tasks: the task is nested under "task".
		t, err := DecodeTask(probe.Task)
		if err != nil {
			return nil, createErr(err)
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

// createErr explains a CreateTaskResult that could not be used. When only the id is at fault
// the task exists on the server, so the error says what becomes of it.
func createErr(err error) error {
	if errors.Is(err, ErrBadTaskID) {
		return fmt.Errorf("CreateTaskResult: %w; the server did create the task, but mcptask cannot address it, so it was not recorded in the ledger and is not followed: it runs on the server until it ends or its ttl runs out (ask the server's maintainers for ids of visible ASCII)", err)
	}
	return fmt.Errorf("CreateTaskResult: %w", err)
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
