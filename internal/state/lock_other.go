//go:build !unix

package state

import "os"

// noFollow is 0 where O_NOFOLLOW does not exist.
const noFollow = 0

// lockFile does nothing where flock does not exist; mcptask is built and tested on Linux and
// macOS. Writes are still atomic there, but parallel processes may lose an update.
func lockFile(f *os.File, exclusive bool) error { return nil }

func unlockFile(f *os.File) {}
