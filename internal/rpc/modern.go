package rpc

// This file holds what only MCP 2026-07-28 has: server/discover, the per-request _meta, and
// the tasks extension's inline results and tasks/update.

import (
	"context"
	"encoding/json"
	"fmt"
)

func (c *Client) discover(ctx context.Context) (json.RawMessage, error) {
	c.mu.Lock()
	c.era, c.version, c.step = EraModern, VersionModern, "server/discover"
	c.mu.Unlock()
	return c.call(ctx, "server/discover", map[string]any{}, "")
}

// acceptDiscover makes d the server's description: era 2026-07-28.
func (c *Client) acceptDiscover(d *discoverResult) {
	c.mu.Lock()
	c.era, c.version, c.caps, c.rawCaps, c.serverInfo = EraModern, VersionModern, d.caps, d.Capabilities, d.Meta.ServerInfo
	c.assumed = false
	c.mu.Unlock()
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
	if c.opts.Sampling {
		caps["sampling"] = map[string]any{}
	}
	return caps
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
