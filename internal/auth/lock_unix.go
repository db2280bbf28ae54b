//go:build unix

package auth

import (
	"os"

	"golang.org/x/sys/unix"
)

func flock(f *os.File) error {
	for {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != unix.EINTR {
			return err
		}
	}
}

func funlock(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
