package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
)

// Store modes (--auth-store).
const (
	StoreAuto    = "auto"
	StoreKeyring = "keyring"
	StoreFile    = "file"
)

// keyringService is the service name of mcptask's keychain entries.
const keyringService = "mcptask"

// DefaultKeyringTimeout bounds every keychain call: a keychain that does not answer (a
// locked Secret Service over SSH, a D-Bus that accepts and never replies) must not hang a run.
const DefaultKeyringTimeout = 3 * time.Second

// Store keeps credentials: in the OS keychain when one answers, otherwise in 0600 files in
// a 0700 directory. An index file (no secrets: which server, issuer, profile and backend)
// lists them, because a keychain cannot be enumerated. Every read-modify-write of a
// credential happens under a per-credential file lock (Lock), so processes sharing a store
// never lose a rotated refresh token.
type Store struct {
	// Dir is the directory of the index, the lock files and the file backend.
	Dir string
	// Mode is auto, keyring or file.
	Mode string
	// Timeout bounds each keychain call (DefaultKeyringTimeout when 0).
	Timeout time.Duration
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Warn prints a one-line warning on stderr.
	Warn func(string)

	once      sync.Once
	keyringOK bool
	whyNot    string
}

// IndexEntry is the secret-free description of one stored credential.
type IndexEntry struct {
	Key       string    `json:"key"`
	ServerURL string    `json:"serverUrl"`
	Resource  string    `json:"resource"`
	Issuer    string    `json:"issuer"`
	Profile   string    `json:"profile,omitempty"`
	Backend   string    `json:"store"`
	UpdatedAt time.Time `json:"updatedAt"`
}

type index struct {
	Version     int          `json:"version"`
	Credentials []IndexEntry `json:"credentials"`
}

func (s *Store) getenv(k string) string {
	if s.Getenv != nil {
		return s.Getenv(k)
	}
	return os.Getenv(k)
}

func (s *Store) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultKeyringTimeout
}

// keyringAvailable decides once per process whether the keychain answers.
func (s *Store) keyringAvailable() (bool, string) {
	s.once.Do(func() {
		if s.Mode == StoreFile {
			s.whyNot = "--auth-store file"
			return
		}
		// On Linux the keychain is the Secret Service on the session D-Bus. Without a session
		// bus address go-keyring would try to autolaunch a bus daemon; a headless machine has
		// no keychain to offer, so do not try.
		if runtime.GOOS == "linux" && s.getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
			s.whyNot = "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is unset)"
			return
		}
		_, err := withTimeout(s.timeout(), func() (string, error) { return keyring.Get(keyringService, "probe") })
		switch {
		case err == nil || errors.Is(err, keyring.ErrNotFound):
			s.keyringOK = true
		default:
			s.whyNot = err.Error()
		}
	})
	return s.keyringOK, s.whyNot
}

// withTimeout runs fn and gives up after d. A call that hangs keeps its goroutine, which is
// the price of a keychain library without a context.
func withTimeout[T any](d time.Duration, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-timer.C:
		var zero T
		return zero, fmt.Errorf("the keychain did not answer within %s", d)
	}
}

func (s *Store) indexPath() string { return filepath.Join(s.Dir, "index.json") }
func (s *Store) filePath(key string) string {
	return filepath.Join(s.Dir, "credentials", key+".json")
}

// List returns the index.
func (s *Store) List() ([]IndexEntry, error) {
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	return idx.Credentials, nil
}

func (s *Store) readIndex() (*index, error) {
	data, err := os.ReadFile(s.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return &index{Version: 1}, nil
	}
	if err != nil {
		return nil, err
	}
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("credential index %s is corrupt: %v (remove it and log in again)", s.indexPath(), err)
	}
	return &idx, nil
}

func (s *Store) updateIndex(fn func(*index)) error {
	unlock, err := lockPath(context.Background(), filepath.Join(s.Dir, "index.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	fn(idx)
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.indexPath(), data)
}

// Find returns the newest index entry for the MCP server at serverURL and profile; issuer,
// when not empty, must match too (a ledger record names the issuer its task was created
// with).
func (s *Store) Find(serverURL, profile, issuer string) (*IndexEntry, error) {
	entries, err := s.List()
	if err != nil {
		return nil, err
	}
	var best *IndexEntry
	for i := range entries {
		e := &entries[i]
		if (e.ServerURL != serverURL && e.Resource != serverURL) || e.Profile != profile || (issuer != "" && e.Issuer != issuer) {
			continue
		}
		if best == nil || e.UpdatedAt.After(best.UpdatedAt) {
			best = e
		}
	}
	return best, nil
}

// Get reads the credential stored under key, or nil when there is none.
func (s *Store) Get(key string) (*Credential, error) {
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(idx.Credentials, func(e IndexEntry) bool { return e.Key == key })
	if i < 0 {
		return nil, nil
	}
	var data []byte
	switch idx.Credentials[i].Backend {
	case StoreKeyring:
		if ok, why := s.keyringAvailable(); !ok {
			return nil, fmt.Errorf("the credential for %s is in the keychain, which is not available here (%s)", idx.Credentials[i].ServerURL, why)
		}
		v, err := withTimeout(s.timeout(), func() (string, error) { return keyring.Get(keyringService, key) })
		if errors.Is(err, keyring.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the keychain: %w", err)
		}
		data = []byte(v)
	default:
		data, err = os.ReadFile(s.filePath(key))
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	var c Credential
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("stored credential %s is corrupt: %v", key, err)
	}
	return &c, nil
}

// Put stores c (the keychain when it answers, else the file backend with a one-time
// warning) and updates the index.
func (s *Store) Put(c *Credential) error {
	key := c.Key()
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	backend := StoreFile
	if ok, why := s.keyringAvailable(); ok {
		_, err := withTimeout(s.timeout(), func() (struct{}, error) { return struct{}{}, keyring.Set(keyringService, key, string(data)) })
		if err == nil {
			backend = StoreKeyring
			_ = os.Remove(s.filePath(key))
		} else if s.Mode == StoreKeyring {
			return fmt.Errorf("store the credential in the keychain: %w", err)
		} else {
			s.warnOnce(fmt.Sprintf("the keychain refused the credential (%v); storing it in %s (mode 0600) instead", err, filepath.Join(s.Dir, "credentials")))
		}
	} else if s.Mode == StoreKeyring {
		return fmt.Errorf("--auth-store keyring: the keychain is not available (%s)", why)
	} else if s.Mode == StoreAuto {
		s.warnOnce(fmt.Sprintf("no keychain available (%s); OAuth credentials are stored in %s (mode 0600); use --auth-store file to silence this", why, filepath.Join(s.Dir, "credentials")))
	}
	if backend == StoreFile {
		if err := os.MkdirAll(filepath.Dir(s.filePath(key)), 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(s.filePath(key), data); err != nil {
			return err
		}
	}
	return s.updateIndex(func(idx *index) {
		e := IndexEntry{Key: key, ServerURL: c.ServerURL, Resource: c.Resource, Issuer: c.Issuer, Profile: c.Profile, Backend: backend, UpdatedAt: c.UpdatedAt}
		if i := slices.IndexFunc(idx.Credentials, func(x IndexEntry) bool { return x.Key == key }); i >= 0 {
			idx.Credentials[i] = e
		} else {
			idx.Credentials = append(idx.Credentials, e)
		}
	})
}

// Delete removes the credential under key from its backend and the index.
func (s *Store) Delete(key string) error {
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(idx.Credentials, func(e IndexEntry) bool { return e.Key == key })
	if i >= 0 && idx.Credentials[i].Backend == StoreKeyring {
		if ok, why := s.keyringAvailable(); !ok {
			return fmt.Errorf("the credential is in the keychain, which is not available here (%s)", why)
		}
		_, err := withTimeout(s.timeout(), func() (struct{}, error) { return struct{}{}, keyring.Delete(keyringService, key) })
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return fmt.Errorf("remove from the keychain: %w", err)
		}
	}
	if err := os.Remove(s.filePath(key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.updateIndex(func(idx *index) {
		idx.Credentials = slices.DeleteFunc(idx.Credentials, func(e IndexEntry) bool { return e.Key == key })
	})
}

// Lock takes the exclusive lock of the credential under key: held across re-read, refresh
// and write, so that two processes never both spend one refresh token.
func (s *Store) Lock(ctx context.Context, key string) (func(), error) {
	return lockPath(ctx, filepath.Join(s.Dir, "locks", key+".lock"))
}

// warnOnce prints msg the first time the file backend is used with this directory.
func (s *Store) warnOnce(msg string) {
	marker := filepath.Join(s.Dir, ".file-store-warned")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	if err := os.MkdirAll(s.Dir, 0o700); err == nil {
		_ = os.WriteFile(marker, nil, 0o600)
	}
	if s.Warn != nil {
		s.Warn(msg)
	}
}

// writeFileAtomic writes data to path (0600, directory 0700) through a temporary file and a
// rename, so a reader never sees half a credential.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// lockPath takes an exclusive advisory lock on the file at path (created 0600), waiting until
// it is free or ctx ends. The kernel releases it when the process dies.
func lockPath(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- flock(f) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return func() { funlock(f); f.Close() }, nil
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				funlock(f)
			}
			f.Close()
		}()
		return nil, ctx.Err()
	}
}
