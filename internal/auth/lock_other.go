//go:build !unix && !windows

package auth

import "os"

// The systems left (plan9, js/wasm, wasip1) offer no advisory lock that this package uses;
// processes sharing a store there may both refresh, and each still re-reads the store.
// Unix and Windows, the release targets, lock: lock_unix.go, lock_windows.go.
func flock(f *os.File) error { return nil }

func funlock(f *os.File) {}
