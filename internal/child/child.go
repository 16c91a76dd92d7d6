// Package child starts the helper processes of the tests and of the local tools (DynamoDB Local,
// aws-lambda-rie, the local API) so that they end with the process that started them: each runs
// in a process group of its own, which Kill ends with everything it started, and on Linux it is
// killed by the kernel when its parent dies, so that a test binary that panics, times out or is
// killed leaves no helper running behind it.
package child

import (
	"os/exec"
	"syscall"
)

// Prepare makes cmd, before it starts, the leader of a process group of its own that ends when
// this process ends.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
}

// Kill sends sig to the process group of cmd, started after Prepare: the process and every
// process it started that stayed in its group.
func Kill(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
