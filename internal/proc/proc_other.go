//go:build !unix

package proc

import "os/exec"

// Group leaves the default where process groups are not a Unix idea: cancelling cmd kills the
// program itself.
func Group(cmd *exec.Cmd) {}
