//go:build !unix

package auth

import "os"

// Without flock, processes sharing a store may both refresh; each still re-reads the store.
func flock(f *os.File) error { return nil }

func funlock(f *os.File) {}
