//go:build unix

package rpc

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group, so that the ctrl+c a user types to
// detach from mcptask does not also reach the server: mcptask shuts it down in order instead
// (close stdin, SIGTERM, SIGKILL), and a server that persists tasks gets to save them.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
