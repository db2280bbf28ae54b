package rpc

// This file decides which protocol generation a server speaks and what it offers.

import (
	"context"
	"errors"
	"fmt"
)

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
