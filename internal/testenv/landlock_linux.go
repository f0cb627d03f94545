package testenv

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// LandlockABI returns the running kernel's Landlock ABI version, asked
// with landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
// (landlock_create_ruleset(2)), or 0 where Landlock is not built in or
// not enabled (the lsm= boot parameter).
func LandlockABI() int {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(r)
}

// RequireLandlockABI skips the test, naming both ABIs and why the test
// needs need, unless the kernel's Landlock ABI is at least need.
func RequireLandlockABI(tb testing.TB, need int, why string) {
	tb.Helper()
	if have := LandlockABI(); have < need {
		SkipLandlockABI(tb, have, need, why)
	}
}

// SkipLandlockABI skips the test: the kernel's Landlock ABI have is older
// than the need of what detail describes (for a cage's refusal, its
// error).
func SkipLandlockABI(tb testing.TB, have, need int, detail string) {
	tb.Helper()
	Skip(tb, ReasonLandlockABI, fmt.Sprintf("Landlock ABI %d here, the test needs %d: %s", have, need, detail))
}

// RequireNoLandlock skips the test unless the kernel has no Landlock.
func RequireNoLandlock(tb testing.TB) {
	tb.Helper()
	if have := LandlockABI(); have != 0 {
		Skip(tb, ReasonLandlockOn, fmt.Sprintf("Landlock ABI %d here; the test is about a kernel without Landlock (.ci/kernel-matrix boots one)", have))
	}
}
