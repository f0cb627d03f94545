package tests

import (
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/internal/testenv"
)

// osHelper runs the helpers only this OS's tests use: none on macOS.
func osHelper(string) (code int, ok bool) { return 0, false }

// skipIfTooOld is Linux's skip for a kernel whose Landlock ABI is too old;
// Seatbelt has no such refusal.
func skipIfTooOld(testing.TB, error) {}

// lib loads libsandbox or fails the test: on macOS it must work.
func lib(tb testing.TB) *libsandbox.Lib {
	tb.Helper()
	l, err := libsandbox.Load()
	if err != nil {
		tb.Fatalf("libsandbox: %v", err)
	}
	return l
}

// requireCage skips when the test process itself is sandboxed (a cage
// cannot be built there; a failure under PROCAGE_STRICT_SKIP) and fails
// when the check or the probe does not work.
func requireCage(tb testing.TB) {
	tb.Helper()
	testenv.RequireUnsandboxed(tb)
	if err := cage.Probe().Err(); err != nil {
		tb.Fatalf("Probe: %v", err)
	}
}

// mustRefuse checks that a command failed and said "Operation not
// permitted" (EPERM, as Seatbelt denials read).
func mustRefuse(tb testing.TB, what, stdout, stderr string, err error) {
	tb.Helper()
	if err == nil {
		tb.Errorf("%s: succeeded inside the cage (stdout %q)", what, stdout)
		return
	}
	if !strings.Contains(strings.ToLower(stderr+stdout), "operation not permitted") {
		tb.Errorf("%s: failed with %v but not with \"Operation not permitted\": %q", what, err, stderr)
	}
}

// alive reports whether pid exists (signal 0).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
