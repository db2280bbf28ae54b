//go:build windows

package auth

import (
	"os"

	"golang.org/x/sys/windows"
)

// The whole file, as far as a 64-bit length reaches: the lock file is empty, and Windows
// locks byte ranges, including ranges past the end of the file.
const allBytes = ^uint32(0)

// flock takes an exclusive lock on f, blocking until it is free. f comes from os.OpenFile,
// a synchronous handle, so LockFileEx without LOCKFILE_FAIL_IMMEDIATELY waits for the lock
// rather than returning ERROR_IO_PENDING. Windows releases the lock when the handle is closed
// or the process ends.
func flock(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, allBytes, allBytes, ol)
}

func funlock(f *os.File) {
	ol := new(windows.Overlapped)
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, ol)
}
