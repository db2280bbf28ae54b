package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A project's .mcp.json or .vscode/mcp.json comes with the checkout: a pull request can
// plant one. mcptask uses a server such a file defines only after the user trusted that entry
// (`mcptask servers trust`), the way Claude Code asks before it uses a project's servers and
// VS Code keeps a workspace restricted until it is trusted. The trust list lives in the user's
// state directory, never in the project, and names each entry by its file and a digest of its
// content, so an edit of the entry needs trust again.

// TrustFile is the name of the trust list in the state directory.
const TrustFile = "trusted-servers.json"

// TrustedServer is one project config entry the user trusted.
type TrustedServer struct {
	// File is the absolute path of the config file.
	File string `json:"file"`
	// Name is the server's name in it.
	Name string `json:"name"`
	// SHA256 is the digest of the entry as it was trusted (cmd computes it).
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
}

// trustDoc is the trust list file.
type trustDoc struct {
	Version int             `json:"version"`
	Servers []TrustedServer `json:"servers"`
}

// TrustList is the user's list of trusted project servers.
type TrustList struct {
	path string
}

// OpenTrustList returns the trust list in the state directory dir. It does no I/O.
func OpenTrustList(dir string) *TrustList { return &TrustList{path: filepath.Join(dir, TrustFile)} }

// Path is the trust list file.
func (l *TrustList) Path() string { return l.path }

// Load returns the trusted entries; a missing file is an empty list.
func (l *TrustList) Load() ([]TrustedServer, error) {
	data, err := os.ReadFile(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the trusted servers: %w", err)
	}
	var doc trustDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the trusted servers list %s is not valid JSON (%v); remove it and trust the servers again", l.path, err)
	}
	return doc.Servers, nil
}

// Trusts reports whether list trusts the entry name of file with digest sum.
func Trusts(list []TrustedServer, file, name, sum string) bool {
	return slices.ContainsFunc(list, func(t TrustedServer) bool { return t.File == file && t.Name == name && t.SHA256 == sum })
}

// Update changes the list under the same kind of lock the ledger uses and writes it
// atomically.
func (l *TrustList) Update(fn func(list []TrustedServer) []TrustedServer) error {
	s := &Store{path: l.path}
	return s.locked(true, func() error {
		list, err := l.Load()
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(trustDoc{Version: 1, Servers: fn(list)}, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileAtomic(l.path, append(b, '\n')); err != nil {
			return fmt.Errorf("write the trusted servers: %w", err)
		}
		return nil
	})
}

// writeFileAtomic replaces path with data: temp file in the same directory (0600), fsync,
// rename, fsync of the directory. A crash at any point leaves either the old file or the new.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}
