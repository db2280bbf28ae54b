//go:build unix

package state

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dirWritable reports whether a file can be made in dir (the temporary file of an atomic
// rewrite): one access(2), which also says EROFS for a read-only file system.
func dirWritable(dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}
