package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// osHelper runs the helpers only this OS's tests use; ok is false for a
// name it does not know.
func osHelper(name string) (code int, ok bool) {
	switch name {
	case "access":
		return accessHelper(), true
	case probeHelper:
		return seccompProbeHelper(), true
	case fallbackReportHelper:
		return fallbackHelper(), true
	case "orphan":
		// Start a caged sleep, print its pid, and wait to be killed.
		pol, err := profile.New(profile.BaseV1)
		if err != nil {
			fmt.Println("policy:", err)
			return 1, true
		}
		// T2: at T1 the run's pid 1 dies with its caller (cage tests).
		c, err := cage.New(pol, cage.WithHome("/nonexistent-home"), cage.WithLinuxTier(cage.TierT2))
		if err != nil {
			fmt.Println("new:", err)
			return 1, true
		}
		cmd := c.Command(context.Background(), "/bin/sleep", "600")
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return 1, true
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Minute)
		return 0, true
	}
	return 0, false
}

// requireCage fails the test unless this host can cage (cage.Probe): no
// Landlock or a failing probe is a failure, not a skip (.ci/kernel-matrix's
// boot without Landlock runs TestLinuxNoLandlockKernel only). A kernel
// whose Landlock ABI is older than a test's policy needs passes the probe;
// newCage skips for it, naming the ABIs.
func requireCage(tb testing.TB) {
	tb.Helper()
	if err := cage.Probe().Err(); err != nil {
		tb.Fatalf("Probe: %v", err)
	}
}

// skipIfTooOld skips, naming the ABIs, when err is the cage's refusal of a
// kernel whose Landlock ABI is older than the policy needs (by default 6,
// for process-access's scopes). A kernel without Landlock (ABI 0) is no
// reason to skip.
func skipIfTooOld(tb testing.TB, err error) {
	tb.Helper()
	if ae, ok := errors.AsType[*linuxsandbox.ABIError](err); ok && ae.Have > 0 {
		testenv.SkipLandlockABI(tb, ae.Have, ae.Need, err.Error())
	}
}

// mustRefuse checks that a command failed with a permission error:
// Landlock denials read "Permission denied" (EACCES), seccomp's
// "Operation not permitted" (EPERM).
func mustRefuse(tb testing.TB, what, stdout, stderr string, err error) {
	tb.Helper()
	if err == nil {
		tb.Errorf("%s: succeeded inside the cage (stdout %q)", what, stdout)
		return
	}
	s := strings.ToLower(stderr + stdout)
	if !strings.Contains(s, "permission denied") && !strings.Contains(s, "operation not permitted") {
		tb.Errorf("%s: failed with %v but not with a permission error: %q", what, err, stderr)
	}
}

// alive reports whether pid exists (signal 0) and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
