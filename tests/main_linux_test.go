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
	switch name {
	case "hello":
		// A Go program: the runtime starts under Base V1.
		fmt.Println("hello from go")
		return 0
	case "nested-cage":
		// Inside a forking cage: another cage's spawn must fail closed.
		pol, err := profile.New(profile.BaseV1)
		if err != nil {
			fmt.Println("policy:", err)
			return 0
		}
		c, err := cage.New(pol, cage.WithHome("/nonexistent-home"))
		if err != nil {
			fmt.Println("new:", err)
			return 0
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
		return 0
	case "orphan":
		// Start a caged sleep, print its pid, and wait to be killed.
		pol, err := profile.New(profile.BaseV1)
		if err != nil {
			fmt.Println("policy:", err)
			return 1
		}
		c, err := cage.New(pol, cage.WithHome("/nonexistent-home"))
		if err != nil {
			fmt.Println("new:", err)
			return 1
		}
		cmd := c.Command(context.Background(), "/bin/sleep", "600")
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return 1
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Minute)
		return 0
	case "fds":
		// Print every open descriptor above stderr (fcntl F_GETFD only).
		var open []string
		for fd := 3; fd < 4096; fd++ {
			if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); e == 0 {
				open = append(open, fmt.Sprint(fd))
			}
		}
		fmt.Println(strings.Join(open, " "))
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper", name)
	return 2
}

// requireCage skips when this kernel cannot cage (no Landlock, or an ABI
// older than Base V1's default plan needs) and fails when the probe fails
// for another reason.
func requireCage(tb testing.TB) {
	tb.Helper()
	if err := cage.Probe().Err(); err != nil {
		tb.Fatalf("Probe: %v", err)
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

// testBinaryDir is the directory of this test binary, for policies that
// re-execute it.
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

// waitGone waits up to d for pid to disappear.
func waitGone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}

// tempHome makes a stand-in home directory so escape tests never touch
// the real one.
func tempHome(tb testing.TB) string {
	tb.Helper()
	h, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
