package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	dir := CacheDir(filepath.Join(t.TempDir(), "tasks.json"))
	now := time.Unix(1e9, 0)
	c := NewCache(dir)
	c.now = func() time.Time { return now }

	key := "tools\x002026-07-28\x00https://example.com/mcp\x00private\x00fingerprint-abc"
	if _, ok := c.Load(key); ok {
		t.Fatal("an empty cache answered")
	}
	c.Store(key, []byte(`{"tools":[]}`), time.Minute)
	if data, ok := c.Load(key); !ok || string(data) != `{"tools":[]}` {
		t.Fatalf("Load = %s, %v", data, ok)
	}
	// Neither the server nor the credential fingerprint shows in file names; the files are
	// private to the user.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("cache dir holds %d files", len(entries))
	}
	name := entries[0].Name()
	if strings.Contains(name, "example") || strings.Contains(name, "fingerprint") {
		t.Errorf("file name %q reveals the key", name)
	}
	if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o600 {
		t.Errorf("entry mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}

	// Expired entries are gone; a ttl of 0 forgets; garbage is not an answer.
	now = now.Add(time.Minute)
	if _, ok := c.Load(key); ok {
		t.Error("an expired entry was returned")
	}
	c.Store(key, []byte(`{"a":1}`), time.Hour)
	c.Store(key, nil, 0)
	if _, ok := c.Load(key); ok {
		t.Error("Store with ttl 0 did not forget the entry")
	}
	c.Store(key, []byte(`{"a":1}`), time.Hour)
	os.WriteFile(c.file(key), []byte("not json"), 0o600)
	if _, ok := c.Load(key); ok {
		t.Error("a corrupt entry was returned")
	}
	c.Store(key, []byte("not json"), time.Hour)
	if _, ok := c.Load(key); ok {
		t.Error("data that is not JSON was stored")
	}
}
