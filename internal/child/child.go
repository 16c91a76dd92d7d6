// Package child starts the helper processes of the tests and of the local tools (DynamoDB Local,
// aws-lambda-rie, the local API) so that they end with the process that started them: each runs
// in a process group of its own, which Kill ends with everything it started, and on Linux it is
// killed by the kernel when its parent dies, so that a test binary that panics, times out or is
// killed leaves no helper running behind it.
package child

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
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

// Stop sends SIGSTOP to the process group of cmd and waits, at most wait, until the kernel has
// stopped every thread of cmd's process: kill returns once the signal is queued, and a thread
// busy on a loaded machine may still answer a request before it stops. Where /proc cannot tell
// (not Linux), it returns once the signal is sent.
func Stop(cmd *exec.Cmd, wait time.Duration) error {
	if err := Kill(cmd, syscall.SIGSTOP); err != nil || cmd.Process == nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		done, known := stopped(cmd.Process.Pid)
		if done || !known {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d not stopped %s after SIGSTOP", cmd.Process.Pid, wait)
		}
		time.Sleep(time.Millisecond)
	}
}
