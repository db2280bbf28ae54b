package state

// This file is the small on-disk cache of server answers that servers mark cacheable
// (2026-07-28 CacheableResult: server/discover and tools/list carry ttlMs and cacheScope).
// It lives next to the ledger, in a "cache" directory beside tasks.json, one file per entry;
// internal/rpc decides what may be kept and under which key. It is a cache, not a record: a
// lost, stale or unreadable entry only costs a round trip, so every failure here is silent.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// maxCacheEntry caps one entry; a larger answer is not kept.
const maxCacheEntry = 4 << 20

// Cache keeps byte strings under string keys until their expiry. Keys are hashed into file
// names, so no server URL or credential fingerprint appears in a directory listing; the
// files are 0600 in a 0700 directory. Nothing in it is a secret: the caller keys private
// entries by a credential fingerprint, never by a credential.
type Cache struct {
	dir string
	now func() time.Time
}

// CacheDir is the cache directory that goes with the ledger at ledgerPath.
func CacheDir(ledgerPath string) string { return filepath.Join(filepath.Dir(ledgerPath), "cache") }

// NewCache returns the cache kept in dir (created on the first Store).
func NewCache(dir string) *Cache { return &Cache{dir: dir, now: time.Now} }

type cacheEntry struct {
	Expires time.Time       `json:"expires"`
	Data    json.RawMessage `json:"data"`
}

func (c *Cache) file(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json")
}

// Load returns the data stored under key while it is fresh. An expired entry is removed.
func (c *Cache) Load(key string) ([]byte, bool) {
	name := c.file(key)
	data, err := os.ReadFile(name)
	if err != nil || len(data) > maxCacheEntry {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil {
		_ = os.Remove(name)
		return nil, false
	}
	if !c.now().Before(e.Expires) {
		_ = os.Remove(name)
		return nil, false
	}
	return e.Data, true
}

// Store keeps data under key for ttl (crash-safely: temp file and rename). A ttl <= 0, or
// data that is not JSON, removes the entry instead.
func (c *Cache) Store(key string, data []byte, ttl time.Duration) {
	name := c.file(key)
	if ttl <= 0 || len(data) > maxCacheEntry || !json.Valid(data) {
		_ = os.Remove(name)
		return
	}
	b, err := json.Marshal(cacheEntry{Expires: c.now().Add(ttl), Data: data})
	if err != nil {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return
	}
	if err := tmp.Close(); err != nil {
		return
	}
	_ = os.Rename(tmp.Name(), name)
}
