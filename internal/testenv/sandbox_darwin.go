package testenv

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/ebitengine/purego"
)

// sandboxed asks sandbox_check(getpid(), NULL, SANDBOX_FILTER_NONE) once:
// 1 is sandboxed, 0 is not [confirmed: Chromium sandbox/mac
// seatbelt.cc IsSandboxed]; anything else, -1 included, is an error, never
// read as "sandboxed".
var sandboxed = sync.OnceValues(func() (bool, error) {
	fn, err := purego.Dlsym(purego.RTLD_DEFAULT, "sandbox_check")
	if err != nil {
		return false, fmt.Errorf("dlsym sandbox_check: %w", err)
	}
	r, _, errno := purego.SyscallN(fn, uintptr(os.Getpid()), 0, 0)
	return verdict(int32(r), syscall.Errno(errno))
})

// Sandboxed reports whether the test process runs in a Seatbelt sandbox.
func Sandboxed() (bool, error) { return sandboxed() }

// RequireUnsandboxed skips the test (fails it when [Strict]) when the test
// process is already sandboxed, and fails it when the check itself fails.
func RequireUnsandboxed(tb testing.TB) {
	tb.Helper()
	is, err := Sandboxed()
	if err != nil {
		tb.Fatalf("is the test process sandboxed: %v", err)
		return
	}
	if is {
		Skip(tb, ReasonSandboxed, "the test process runs inside a Seatbelt sandbox; macOS refuses to apply another profile (sandbox-exec: sandbox_apply: Operation not permitted)")
	}
}
