//go:build !unix

package proxy

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}
