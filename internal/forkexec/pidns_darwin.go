package forkexec

import "syscall"

// darwin has no namespaces: prepareNS refuses them, so the child never
// reaches these.
type nsPlan struct {
	pid, proc bool
}

func prepareNS(_ *plan, attr *Attr) error {
	if attr.PIDNamespace || attr.MountProc {
		return invalid("PIDNamespace and MountProc are Linux only")
	}
	return nil
}

func releaseLocked(*plan) {}

func onSpawnerThread(f func()) { f() }

//go:nosplit
//go:norace
func pidnsFork(*plan, int) syscall.Errno { return syscall.ENOSYS }

//go:nosplit
//go:norace
func mountProc(*plan) syscall.Errno { return syscall.ENOSYS }
