//go:build !linux

package child

import "syscall"

// dieWithParent does nothing where the kernel cannot kill a child with its parent: there the
// process group and the callers' own cleanup end it.
func dieWithParent(*syscall.SysProcAttr) {}
