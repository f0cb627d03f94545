//go:build !linux || !amd64 || procage_nosupervisor

package forkexec

import "syscall"

// Supervisor is the new-names supervisor, which only linux/amd64 has.
type Supervisor struct{}

//go:nosplit
//go:norace
func superviseStart(*Supervisor) (bool, syscall.Errno) { return false, syscall.ENOSYS }

//go:nosplit
//go:norace
func superviseMain(*Supervisor) {}
