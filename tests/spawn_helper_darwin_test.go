package tests

// What the shared spawn tests (spawn_unix_test.go) need from macOS.

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

const (
	// trueBin is true(1) where this OS keeps it.
	trueBin = "/usr/bin/true"
	// deniedText is what a command prints for a Seatbelt denial (EPERM).
	deniedText = "Operation not permitted"
	// execDenied is the errno of an exec the profile refuses.
	execDenied = syscall.EPERM
	// setsidResult is what a forking run's setsid gives: allowed.
	setsidResult = "ok"
	// loaderLib is a library the loader goroutines of
	// TestManyChildrenCaged open and close.
	loaderLib = "/usr/lib/libz.1.dylib"
	// grantBuilds: a grant is a sandbox extension issued for the spawn;
	// the profile is not compiled again.
	grantBuilds = 0
	// nestedResult: New inside a cage is refused.
	nestedResult = "already-sandboxed"
)

// nestedPolicy is what TestNestedCage's outer policy adds to executing the
// test binary: nothing (a non-forking cage).
var nestedPolicy []profile.Option

// programEnv is the environment of TestProgramsUnderBaseV1's programs: nil
// inherits the filtered environment.
var programEnv []string

// osPrograms are the rows of TestProgramsUnderBaseV1 with macOS paths or
// only on macOS.
func osPrograms() []program {
	return []program{
		{"uname", []string{"/usr/bin/uname", "-s"}, nil, "", regexp.MustCompile(`^Darwin\n$`)},
		{"zsh", []string{"/bin/zsh", "-c", "print -r -- ${(U)a:-hi}"}, nil, "", regexp.MustCompile(`^HI\n$`)},
		{"sed", []string{"/usr/bin/sed", "s/b/x/"}, nil, "abc\n", regexp.MustCompile(`^axc\n$`)},
		{"tar", []string{"/bin/sh", "-c", "printf data | /usr/bin/tar -cf - --format ustar @- 2>/dev/null || /usr/bin/tar --version"}, nil, "", regexp.MustCompile(`(bsdtar|data)`)},
		{"gzip", []string{"/bin/sh", "-c", "printf hello | /usr/bin/gzip -c | /usr/bin/gzip -dc"}, nil, "", regexp.MustCompile(`^hello$`)},
		// A Foundation program: needs Sandbox call 67 and vnguard at start-up.
		{"plutil", []string{"/usr/bin/plutil", "-extract", "ProductName", "raw", "-o", "-", "/System/Library/CoreServices/SystemVersion.plist"}, nil, "", regexp.MustCompile(`^(macOS|Mac OS X)\n?$`)},
	}
}

// requireProgram does nothing: every program the tests run ships with
// macOS, so a missing one fails the test.
func requireProgram(testing.TB, string) {}

// osCageOptions: none; macOS spawn tests keep the real home, which Base V1
// denies.
func osCageOptions(testing.TB) []cage.Option { return nil }

// refusalHome is the home directory TestBaseV1Refusals lists: the real
// one.
func refusalHome(tb testing.TB) (string, []cage.Option) {
	tb.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		tb.Fatal(err)
	}
	return home, nil
}

// checkCaged returns a check that pid runs in a Seatbelt sandbox
// (sandbox_check), loading libsandbox first.
func checkCaged(tb testing.TB) func(*testing.T, int) {
	tb.Helper()
	l := lib(tb)
	return func(t *testing.T, pid int) {
		t.Helper()
		is, err := l.IsSandboxed(pid)
		if err != nil || !is {
			t.Errorf("child %d: sandboxed = %v, %v", pid, is, err)
		}
	}
}

// policyBuilds counts libsandbox's profile compiles in this process.
func policyBuilds(tb testing.TB) (count func() int64, unit string) {
	tb.Helper()
	return lib(tb).Compiles, "compiles"
}

// checkTempSpelling: a private TMPDIR is in the kernel's spelling
// (/private/var/folders/..., not /var/folders/...).
func checkTempSpelling(t *testing.T, dir string) {
	t.Helper()
	if !strings.HasPrefix(dir, "/private/") {
		t.Errorf("TMPDIR %q is not in kernel spelling", dir)
	}
}
