package child

import "syscall"

// dieWithParent asks the kernel to kill the child when the thread that started it ends. The Go
// runtime ends a thread only when a goroutine locked to it returns locked, which the callers of
// Prepare do not do, so in practice the child ends with the process.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
