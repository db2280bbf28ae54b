//go:build unix

package proxy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in a process group of its own, as internal/rpc does for a
// client's server: a ctrl+c meant for the proxy reaches the proxy alone, which then shuts the
// server down in order (close stdin, SIGTERM, SIGKILL) and lets it save its tasks.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
