//go:build linux && !amd64

package forkexec

import (
	"runtime"
	"syscall"
)

// vfork needs a frameless assembly stub (see vfork_linux_amd64.s); other
// architectures use a plain fork, whose only cost is the page-table copy.
const vforkSupported = false

//go:nosplit
//go:norace
func doFork(flags uintptr) (uintptr, syscall.Errno) {
	if runtime.GOARCH == "s390x" {
		// clone's first two arguments are swapped on s390x.
		r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, 0, flags, 0, 0, 0, 0)
		return r, e
	}
	r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, flags, 0, 0, 0, 0, 0)
	return r, e
}

// vforkTarget is never called here: the fork flags never carry
// CLONE_VFORK without vforkSupported.
//
//go:nosplit
//go:norace
func vforkTarget(uintptr, *pidnsFinish) (uintptr, syscall.Errno) { return 0, syscall.ENOSYS }
