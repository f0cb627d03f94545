package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// osHelper runs the helpers only this OS's tests use; ok is false for a
// name it does not know.
func osHelper(name string) (code int, ok bool) {
	switch name {
	case "new-cage":
		// Inside a cage: building another must be refused.
		pol, err := profile.New(profile.BaseV1)
		if err == nil {
			_, err = cage.New(pol, cage.WithHome("/nonexistent-home"))
		}
		switch {
		case errors.Is(err, cage.ErrAlreadySandboxed):
			fmt.Println("already-sandboxed")
		default:
			fmt.Println("other:", err)
		}
		return 0, true
	}
	return 0, false
}

// lib loads libsandbox or fails the test: on macOS it must work.
func lib(tb testing.TB) *libsandbox.Lib {
	tb.Helper()
	l, err := libsandbox.Load()
	if err != nil {
		tb.Fatalf("libsandbox: %v", err)
	}
	return l
}

// requireUnsandboxed skips when the test process itself is sandboxed (a
// cage cannot be built there; a failure under PROCAGE_STRICT_SKIP) and
// fails when the check or the probe does not work.
func requireUnsandboxed(tb testing.TB) {
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

// testBinaryDir is the kernel-visible directory of this test binary, for
// policies that re-execute it.
func testBinaryDir(tb testing.TB) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Dir(exe)
}

// alive reports whether pid exists (signal 0).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// waitGone waits up to d for pid to disappear.
func waitGone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}

// tempHome makes a stand-in home directory (kernel spelling) so escape
// tests never touch the real one.
func tempHome(tb testing.TB) string {
	tb.Helper()
	h, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
