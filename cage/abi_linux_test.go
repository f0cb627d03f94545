package cage_test

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
)

// skipIfTooOld skips, naming the ABIs, when err is the cage's refusal of a
// kernel whose Landlock ABI is older than the policy needs (Base V1: 6,
// for process-access's scopes). A kernel without Landlock (ABI 0) is no
// reason to skip: TestLinuxNoLandlockKernel is about it.
func skipIfTooOld(tb testing.TB, err error) {
	tb.Helper()
	if ae, ok := errors.AsType[*linuxsandbox.ABIError](err); ok && ae.Have > 0 {
		testenv.SkipLandlockABI(tb, ae.Have, ae.Need, err.Error())
	}
}

// requireUserNamespace skips a T1 test where the kernel refuses the
// unprivileged caller a user namespace (see testenv.RequireUserNamespace).
func requireUserNamespace(tb testing.TB) {
	tb.Helper()
	testenv.RequireUserNamespace(tb)
}
