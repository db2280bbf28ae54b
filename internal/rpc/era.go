package rpc

// This file decides which protocol generation a server speaks and what it offers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// Connect determines the era and performs its opening: server/discover for 2026-07-28,
// initialize + notifications/initialized for 2025-11-25.
//
// With Protocol "auto" it follows C26-VER §Backward Compatibility: probe with a modern
// server/discover; a DiscoverResult or a recognised modern error (-32020, -32021, -32022) means
// modern; anything else that is clearly not modern means legacy. Per PROTOCOL.md §5 rule 16
// the fallback is not keyed to any single error code. A dual-era server is then spoken to in
// the generation in which it offers tasks (chooseEra). A fresh DiscoverResult kept in the
// metadata cache (ClientOptions.Cache) stands in for the probe: C26-VER lets a client persist
// the answer across restarts of the same configuration and re-probe when it fails.
func (c *Client) Connect(ctx context.Context) (err error) {
	defer func() {
		// A context that ended (a deadline, the user's --timeout) cut the opening short: say
		// which request the server left unanswered, so the message names what was awaited.
		if err != nil && ctx.Err() != nil {
			var na *NoAnswerError
			if !errors.As(err, &na) {
				err = &NoAnswerError{Method: c.handshakeStep(), Err: err}
			}
		}
	}()
	switch c.opts.Protocol {
	case VersionLegacy:
		return c.initialize(ctx)
	case VersionModern, "auto":
	default:
		return fmt.Errorf("unknown protocol %q (want auto, %s or %s)", c.opts.Protocol, VersionModern, VersionLegacy)
	}
	if c.useCachedDiscover() {
		return nil
	}
	pctx := ctx
	if c.opts.ProbeTimeout > 0 && c.opts.Protocol == "auto" {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, c.opts.ProbeTimeout)
		defer cancel()
	}
	res, err := c.discover(pctx)
	if v := retryVersion(err); v != "" {
		// C26-VER: on UnsupportedProtocolVersion the client SHOULD retry with a version from
		// error.data.supported. 2026-07-28 is retried once (the first refusal may not be the
		// last word); a server that supports only 2025-11-25 is opened with initialize.
		c.note("era: server/discover was refused with -32022; the server supports %s; retrying with it", v)
		if v == VersionLegacy && c.opts.Protocol == "auto" {
			return c.initialize(ctx)
		}
		if v == VersionModern {
			res, err = c.discover(pctx)
		}
	}
	if err == nil {
		return c.chooseEra(ctx, res)
	}
	if c.opts.Protocol == VersionModern {
		return fmt.Errorf("protocol %s: %w", VersionModern, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !fallsBackToLegacy(err) {
		return fmt.Errorf("detect protocol: %w", err)
	}
	c.note("era: server/discover failed (%s): not a 2026-07-28 server; opening 2025-11-25 with initialize", termsafe.Line(err.Error()))
	if ierr := c.initialize(ctx); ierr != nil {
		return fmt.Errorf("detect protocol: server/discover failed (%v), then %w", err, ierr)
	}
	return nil
}

// NoAnswerError says which request of the opening (server/discover, initialize,
// notifications/initialized) was still unanswered when the context ended: what mcptask was
// waiting for when it gave up. Err is what the wait ended with.
type NoAnswerError struct {
	Method string
	Err    error
}

func (e *NoAnswerError) Error() string { return fmt.Sprintf("no answer to %s: %v", e.Method, e.Err) }
func (e *NoAnswerError) Unwrap() error { return e.Err }

// setStep records the opening request now in flight, for NoAnswerError.
func (c *Client) setStep(method string) { c.mu.Lock(); c.step = method; c.mu.Unlock() }

func (c *Client) handshakeStep() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.step == "" {
		return "the connection"
	}
	return c.step
}

// retryVersion returns the version to retry with after a -32022 answer to server/discover:
// 2026-07-28 when the server lists it, else 2025-11-25 when it lists that, else "".
func retryVersion(err error) string {
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Code != CodeUnsupportedVersion {
		return ""
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(rerr.Data, &d)
	for _, v := range []string{VersionModern, VersionLegacy} {
		if contains(d.Supported, v) {
			return v
		}
	}
	return ""
}

// discoverResult is the part of a DiscoverResult mcptask acts on.
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	TTLMs             *float64        `json:"ttlMs"`
	CacheScope        string          `json:"cacheScope"`
	Meta              struct {
		ServerInfo Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
	caps serverCaps
}

func parseDiscover(res json.RawMessage) (*discoverResult, error) {
	var d discoverResult
	if err := json.Unmarshal(res, &d); err != nil {
		return nil, fmt.Errorf("%w: server/discover result: %v", ErrMalformed, err)
	}
	// C26-DISC: supportedVersions and capabilities are required; without them the answer is
	// not a DiscoverResult (a legacy server answering every request with {} is not modern).
	if d.SupportedVersions == nil || len(d.Capabilities) == 0 {
		return nil, fmt.Errorf("%w: server/discover result lacks supportedVersions or capabilities: %s", ErrMalformed, snippet(res))
	}
	if err := json.Unmarshal(d.Capabilities, &d.caps); err != nil {
		return nil, fmt.Errorf("%w: server capabilities: %v", ErrMalformed, err)
	}
	return &d, nil
}

// chooseEra picks the generation for a server that answered server/discover.
//
// A dual-era server (C26-VER §Compatibility Matrix) is spoken to in the generation in which
// it offers tasks: 2026-07-28 when it advertises the io.modelcontextprotocol/tasks extension;
// 2025-11-25 when the extension is missing, it supports 2025-11-25 and its capabilities carry
// the 2025-11-25 tasks capability for tools/call (a "half-modern" server such as mcp-go
// v1.2.1, whose task-required tools then work only through initialize). Otherwise
// 2026-07-28.
func (c *Client) chooseEra(ctx context.Context, res json.RawMessage) error {
	d, err := parseDiscover(res)
	if err != nil {
		if c.opts.Protocol == VersionModern {
			return fmt.Errorf("protocol %s: %w", VersionModern, err)
		}
		c.note("era: %s; opening 2025-11-25 with initialize", termsafe.Line(err.Error()))
		if ierr := c.initialize(ctx); ierr != nil {
			return fmt.Errorf("detect protocol: %v, then %w", err, ierr)
		}
		return nil
	}
	// The list is the server's text and ends up in errors and notes: made safe and bounded.
	versions := termsafe.Line(termsafe.Cut(strings.Join(d.SupportedVersions, ", ")))
	if !contains(d.SupportedVersions, VersionModern) {
		if c.opts.Protocol == "auto" && contains(d.SupportedVersions, VersionLegacy) {
			c.note("era: server/discover lists %s only; opening 2025-11-25 with initialize", versions)
			return c.initialize(ctx)
		}
		return fmt.Errorf("server supports %s, not %s; retry with --protocol %s if it also answers initialize",
			versions, VersionModern, VersionLegacy)
	}
	_, ext := d.caps.Extensions[TasksExtension]
	switch {
	case ext:
		c.note("era: %s (server/discover lists %s and advertises the %s extension)", VersionModern, versions, TasksExtension)
	case c.opts.Protocol == "auto" && contains(d.SupportedVersions, VersionLegacy) && d.caps.legacyToolTasks():
		c.note("era: %s: server/discover lists %s but advertises no %s extension; it declares the 2025-11-25 tasks capability for tools/call instead, so tasks work only through initialize",
			VersionLegacy, versions, TasksExtension)
		if ierr := c.initialize(ctx); ierr == nil {
			return nil
		} else {
			c.note("era: initialize failed (%s); staying with %s", termsafe.Line(ierr.Error()), VersionModern)
		}
	default:
		c.note("era: %s (server/discover lists %s; no task support advertised in either generation)", VersionModern, versions)
	}
	c.acceptDiscover(d)
	c.storeDiscover(res, d)
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

// legacyToolTasks reports whether caps carry the 2025-11-25 capabilities.tasks.requests.tools.call.
func (sc serverCaps) legacyToolTasks() bool {
	t := sc.Tasks
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

// note writes one explanatory line to the --trace log, when there is one.
func (c *Client) note(format string, args ...any) {
	if n, ok := c.t.(interface{ Notef(string, ...any) }); ok {
		n.Notef(format, args...)
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
	return c.caps.legacyToolTasks()
}
