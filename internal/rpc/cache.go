package rpc

// This file keeps the answers a 2026-07-28 server marks cacheable (CacheableResult: ttlMs and
// cacheScope, on DiscoverResult and the list results) between runs of mcptask, so that a
// one-shot `mcptask call` costs the tools/call round trip alone while they are fresh. The
// storage is the caller's (ClientOptions.Cache); this file decides what may be kept, under
// which key, and for how long.

import (
	"encoding/json"
	"errors"
	"time"
)

// MetaCache stores cacheable server answers. Load returns an entry only while it is fresh;
// Store with a ttl <= 0 forgets the entry. Implementations must keep nothing but the bytes
// given (no secret ever reaches them: keys carry a credential fingerprint, not a credential).
type MetaCache interface {
	Load(key string) ([]byte, bool)
	Store(key string, data []byte, ttl time.Duration)
}

// maxCacheTTL caps how long mcptask trusts a cached answer, whatever the server said.
const maxCacheTTL = 24 * time.Hour

// cacheKeys returns the keys an answer of kind ("discover", "tools") is kept under: the
// public one, shared by every credential, and the private one of the credential in use
// (a "private" result is never shared between credentials).
func (c *Client) cacheKeys(kind, version string) (public, private string) {
	base := kind + "\x00" + version + "\x00" + c.opts.CacheServer
	return base + "\x00public", base + "\x00private\x00" + c.opts.Credential
}

func (c *Client) cacheOn() bool { return c.opts.Cache != nil && c.opts.CacheServer != "" }

// cacheLoad returns a fresh cached answer of kind: the credential's own private entry first,
// then the public one.
func (c *Client) cacheLoad(kind, version string) ([]byte, bool) {
	if !c.cacheOn() {
		return nil, false
	}
	pub, priv := c.cacheKeys(kind, version)
	if data, ok := c.opts.Cache.Load(priv); ok {
		return data, true
	}
	return c.opts.Cache.Load(pub)
}

// cacheStore keeps data as the server's hints allow: for ttlMs (capped), under the public or
// the credential's private key per cacheScope. Anything else (no hints, ttlMs 0, an unknown
// scope) is not kept.
func (c *Client) cacheStore(kind, version string, data []byte, ttlMs *float64, scope string) {
	if !c.cacheOn() || ttlMs == nil || *ttlMs <= 0 {
		return
	}
	ttl := min(msDuration(*ttlMs), maxCacheTTL)
	pub, priv := c.cacheKeys(kind, version)
	switch scope {
	case "public":
		c.opts.Cache.Store(pub, data, ttl)
	case "private":
		c.opts.Cache.Store(priv, data, ttl)
	}
}

// cacheForget drops both entries of kind.
func (c *Client) cacheForget(kind, version string) {
	if !c.cacheOn() {
		return
	}
	pub, priv := c.cacheKeys(kind, version)
	c.opts.Cache.Store(pub, nil, 0)
	c.opts.Cache.Store(priv, nil, 0)
}

// useCachedDiscover opens the connection from a fresh cached DiscoverResult, without a
// round trip. Only 2026-07-28 choices are kept (a 2025-11-25 session needs initialize anyway).
func (c *Client) useCachedDiscover() bool {
	data, ok := c.cacheLoad("discover", VersionModern)
	if !ok {
		return false
	}
	d, err := parseDiscover(data)
	if err != nil || !contains(d.SupportedVersions, VersionModern) {
		c.cacheForget("discover", VersionModern)
		return false
	}
	c.acceptDiscover(d)
	c.mu.Lock()
	c.fromCache = true
	c.mu.Unlock()
	c.note("era: %s, from the cached server/discover answer (the server allowed caching it; re-probing if it no longer holds)", VersionModern)
	return true
}

// storeDiscover keeps a DiscoverResult that led to 2026-07-28.
func (c *Client) storeDiscover(raw json.RawMessage, d *discoverResult) {
	c.cacheStore("discover", VersionModern, raw, d.TTLMs, d.CacheScope)
}

// staleAssumption says whether err means that a cached server/discover answer no longer
// holds: the server refuses the version, or answers like a server that is not modern at all.
func staleAssumption(err error) bool {
	var rerr *Error
	if errors.As(err, &rerr) {
		return rerr.Code == CodeUnsupportedVersion
	}
	var herr *HTTPError
	if errors.As(err, &herr) {
		return herr.Status == 400 || herr.Status == 404 || herr.Status == 405
	}
	return false
}

// toolsCacheEntry is what is kept of a tools/list: every page's tools, raw.
type toolsCacheEntry struct {
	Tools []json.RawMessage `json:"tools"`
}

// strictestScope combines the cacheScope of several pages: private wins, and a page without
// a valid scope makes the whole list uncacheable.
func strictestScope(a, b string) string {
	switch {
	case a == "" || b == "":
		return ""
	case a == "private" || b == "private":
		return "private"
	case a == "public" && b == "public":
		return "public"
	}
	return ""
}

// CachedTools is the tools of a fresh cached tools/list of the server opts point at (Cache,
// CacheServer, Credential), as a 2026-07-28 client would take them (tools it must exclude are
// left out); nil when the cache holds none. It sends nothing: shell completion asks it.
func CachedTools(opts ClientOptions) []*Tool {
	c := &Client{opts: opts}
	data, ok := c.cacheLoad("tools", VersionModern)
	if !ok {
		return nil
	}
	var e toolsCacheEntry
	if json.Unmarshal(data, &e) != nil {
		return nil
	}
	var tools []*Tool
	for _, raw := range e.Tools {
		var t Tool
		if json.Unmarshal(raw, &t) != nil || t.Name == "" {
			continue
		}
		if _, err := headerParams(t.InputSchema); err != nil {
			continue
		}
		t.Raw = raw
		tools = append(tools, &t)
	}
	return tools
}
