//go:build !unix

package rpc

import "os/exec"

// setProcessGroup does nothing where process groups are not a Unix idea.
func setProcessGroup(cmd *exec.Cmd) {}
