package rpc

// This file holds tools/list, its per-client cache, and tools/call with the decoding of its
// result shapes in both eras.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

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
