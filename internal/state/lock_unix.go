//go:build unix

package state

import (
	"os"

	"golang.org/x/sys/unix"
)

// noFollow makes an open fail on a symbolic link: the lock file and the in-place append never
// write through a link someone planted where the ledger lives.
const noFollow = unix.O_NOFOLLOW

// lockFile takes an flock on f: advisory, released by the kernel when the process dies, so a
// kill -9 never leaves the ledger locked.
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
