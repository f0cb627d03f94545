//go:build linux && (amd64 || arm64)

package sysnum

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNative checks the build architecture's table against x/sys's
// compiled constants, past the generator's parsing of their source.
func TestNative(t *testing.T) {
	tab := map[string]*Table{"amd64": AMD64, "arm64": ARM64}[runtime.GOARCH]
	for name, want := range map[string]uint32{
		"read":              unix.SYS_READ,
		"openat":            unix.SYS_OPENAT,
		"umount2":           unix.SYS_UMOUNT2,
		"prlimit64":         unix.SYS_PRLIMIT64,
		"rt_sigaction":      unix.SYS_RT_SIGACTION,
		"io_uring_register": unix.SYS_IO_URING_REGISTER,
		"clone3":            unix.SYS_CLONE3,
		"landlock_add_rule": unix.SYS_LANDLOCK_ADD_RULE,
		"listns":            unix.SYS_LISTNS,
		"rseq_slice_yield":  unix.SYS_RSEQ_SLICE_YIELD,
	} {
		if got, ok := tab.Nums[name]; !ok || got != want {
			t.Errorf("%s: %s = %d, %v; x/sys/unix: %d", runtime.GOARCH, name, got, ok, want)
		}
	}
}
