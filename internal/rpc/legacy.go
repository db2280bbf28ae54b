package rpc

// This file holds what only MCP 2025-11-25 has: the initialize handshake, the session, and
// the capability-gated task methods (tasks/list).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// legacyVersions are the initialize-era versions mcptask accepts, newest first.
var legacyVersions = []string{VersionLegacy, "2025-06-18", "2025-03-26"}

func (c *Client) initialize(ctx context.Context) error {
	c.mu.Lock()
	c.era, c.version, c.assumed, c.step = EraLegacy, "", false, "initialize"
	c.mu.Unlock()
	caps := map[string]any{}
	// 2025-11-25 delivers elicitation as a server-to-client request: declare it only when
	// something answers one (OnRequest now, or a later process that reuses this session and
	// was given the means to answer: call --detach, then update, watch or resume).
	if c.opts.Elicitation {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	if c.opts.Sampling {
		caps["sampling"] = map[string]any{}
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
	// disconnect when it cannot use it. The two revisions before 2025-11-25 use the same
	// Streamable HTTP transport and tools; they only lack tasks, so mcptask can use them.
	if !contains(legacyVersions, ir.ProtocolVersion) {
		return fmt.Errorf("server answered initialize with protocol %q; mcptask speaks %s (and %s), %s",
			ir.ProtocolVersion, VersionModern, strings.Join(legacyVersions, ", "), "so it disconnects")
	}
	if ir.ProtocolVersion != VersionLegacy {
		c.note("era: the server negotiated %s at initialize; it has no tasks, tools run as plain calls", ir.ProtocolVersion)
	}
	var caps2 serverCaps
	if len(ir.Capabilities) > 0 {
		if err := json.Unmarshal(ir.Capabilities, &caps2); err != nil && !c.opts.LenientCaps {
			return fmt.Errorf("%w: server capabilities: %v", ErrMalformed, err)
		} else if err != nil {
			caps2 = serverCaps{}
		}
	}
	c.mu.Lock()
	c.version, c.caps, c.rawCaps, c.serverInfo = ir.ProtocolVersion, caps2, ir.Capabilities, ir.ServerInfo
	c.mu.Unlock()
	// C25-LIFE §Initialization: the client MUST send notifications/initialized.
	c.setStep("notifications/initialized")
	if err := c.notify(ctx, "notifications/initialized", map[string]any{}); err != nil {
		return fmt.Errorf("send notifications/initialized: %w", err)
	}
	return nil
}

// KeepSession(true) leaves a 2025-11-25 HTTP session open when the client closes (no
// DELETE), because a task that is not finished is bound to it and will be polled again
// through it; KeepSession(false) lets Close end the session again.
func (c *Client) KeepSession(keep bool) {
	if k, ok := c.t.(interface{ KeepSession(bool) }); ok {
		k.KeepSession(keep)
	}
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

// holdStandaloneStream opens the 2025-11-25 standalone GET stream over HTTP (getstream.go)
// before mcptask starts waiting for a tool call (tools/call) or for a task's input or result
// (tasks/result), so that requests the server sends there (an elicitation for the task) are
// received; it stays open until Close. It is not opened for tasks/get alone: `resume` polls
// the tasks of many sessions through one connection pool, which held streams would fill. A
// failure only costs the messages the server would have sent there.
func (c *Client) holdStandaloneStream(ctx context.Context) {
	if c.Era() != EraLegacy {
		return
	}
	if s, ok := c.t.(StandaloneStreamer); ok {
		_ = s.OpenStandaloneStream(ctx)
	}
}
