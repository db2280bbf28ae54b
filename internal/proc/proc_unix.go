//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// Group makes cmd run in a process group of its own and makes cancelling it (its context's
// end: a timeout, mcptask interrupted) kill the whole group, so that a shell script's children
// go with it and none is left holding its output open. Call it before cmd.Start.
func Group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
