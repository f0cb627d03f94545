//go:build darwin || linux

package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// Helpers the macOS and Linux cage tests share.

// helperEnv names the helper a re-executed test binary runs instead of the
// tests (the os/exec TestMain pattern).
const helperEnv = "PROCAGE_TESTS_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name))
	}
	os.Exit(m.Run())
}

func runHelper(name string) int {
	if name == "fds" {
		// Print every open descriptor above stderr (fcntl F_GETFD only, so
		// nothing here needs a rule).
		var open []string
		for fd := 3; fd < 4096; fd++ {
			if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); e == 0 {
				open = append(open, fmt.Sprint(fd))
			}
		}
		fmt.Println(strings.Join(open, " "))
		return 0
	}
	if name == "hello" {
		// A Go program: the runtime starts under Base V1.
		fmt.Println("hello from go")
		return 0
	}
	if name == "nested-cage" {
		nestedCage()
		return 0
	}
	if code, ok := osHelper(name); ok {
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown helper", name)
	return 2
}

// newCage makes a cage of tier T2 on Linux unless opts name a tier: the
// tests written for Landlock and seccomp alone expect their errors
// (EACCES, not T1's EROFS); t1_linux_test.go runs the T1 cases.
func newCage(tb testing.TB, pol profile.Policy, opts ...cage.Option) *cage.Cage {
	tb.Helper()
	c, err := cage.New(pol, append([]cage.Option{cage.WithLinuxTier(cage.TierT2)}, opts...)...)
	if err != nil {
		skipIfTooOld(tb, err)
		tb.Fatalf("cage.New: %v", err)
	}
	return c
}

func policy(tb testing.TB, opts ...profile.Option) profile.Policy {
	tb.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// runTimeout bounds one caged script: a guard against a hang, generous
// because .ci/kernel-matrix's guest emulates its CPU (a script of a dozen
// python3 starts there took over a minute on a busy host).
const runTimeout = 3 * time.Minute

// run runs name in c and returns stdout and stderr.
func run(tb testing.TB, c *cage.Cage, name string, args ...string) (string, string, error) {
	tb.Helper()
	return runIn(tb, c, "", name, args...)
}

// runIn is run with dir as the run's working directory ("": the test's).
func runIn(tb testing.TB, c *cage.Cage, dir, name string, args ...string) (string, string, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := c.Command(ctx, name, args...)
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// nestedCage builds a cage inside a cage and spawns from it, printing what
// happened: "already-sandboxed" (macOS refuses New), "unsupported EPERM"
// (Linux: the spawn fails closed in a forking cage), or what else did.
func nestedCage() {
	pol, err := profile.New(profile.BaseV1)
	if err != nil {
		fmt.Println("policy:", err)
		return
	}
	c, err := cage.New(pol, cage.WithHome("/nonexistent-home"))
	switch {
	case errors.Is(err, cage.ErrAlreadySandboxed):
		fmt.Println("already-sandboxed")
		return
	case err != nil:
		fmt.Println("new:", err)
		return
	}
	err = c.Command(context.Background(), "/bin/true").Run()
	var ae *cage.ApplyError
	switch {
	case err == nil:
		fmt.Println("ran")
	case errors.As(err, &ae):
		fmt.Println("apply-error", ae.Step, ae.Errno == syscall.EPERM)
	case errors.Is(err, errors.ErrUnsupported) && errors.Is(err, syscall.EPERM):
		fmt.Println("unsupported EPERM")
	default:
		fmt.Println("other:", err)
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

// waitGone waits up to d for pid to disappear (alive: this OS's check).
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
