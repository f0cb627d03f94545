package forkexec

import "syscall"

// cloneNewPID is Linux's CLONE_NEWPID [confirmed: x/sys zerrors_linux.go],
// so that Start refuses it by the same test everywhere.
const cloneNewPID = 0x20000000

// darwin has no namespaces: prepareNS refuses them, so the child never
// reaches these.
type nsPlan struct {
	flags     uintptr
	pid, proc bool
}

func prepareNS(_ *plan, attr *Attr) error {
	if attr.Namespaces != 0 || attr.MountProc {
		return invalid("Namespaces and MountProc are Linux only")
	}
	return nil
}

func releaseLocked(*plan) {}

func onSpawnerThread(f func()) { f() }

//go:nosplit
//go:norace
func nsEnter(*plan) syscall.Errno { return syscall.ENOSYS }

//go:nosplit
//go:norace
func pidnsFork(*plan, int) syscall.Errno { return syscall.ENOSYS }

//go:nosplit
//go:norace
func mountProc(*plan) syscall.Errno { return syscall.ENOSYS }
