//go:build !unix

package state

import (
	"os"
	"path/filepath"
)

// dirWritable reports whether a file can be made in dir (the temporary file of an atomic
// rewrite), by making one and removing it.
func dirWritable(dir string) error {
	tmp, err := os.CreateTemp(dir, filepath.Base(dir)+".probe-*")
	if err != nil {
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
