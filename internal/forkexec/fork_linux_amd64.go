package forkexec

import "syscall"

const vforkSupported = true

// doFork is clone(flags, 0, 0, 0, 0) in vfork_linux_amd64.s.
func doFork(flags uintptr) (pid uintptr, err syscall.Errno)

// vforkTarget is the pid namespace target's clone in vfork_linux_amd64.s:
// it returns (0, 0) in the target only (see there).
func vforkTarget(flags uintptr, fin *pidnsFinish) (pid uintptr, err syscall.Errno)
