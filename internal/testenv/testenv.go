// Package testenv is the one place where procage's darwin tests, and the
// Linux tests of tests/, cage/ and internal/linuxsandbox, decide to skip, so
// that every skip names one of a few reasons and CI can turn skips into
// failures.
//
//	func TestCage(t *testing.T) {
//		testenv.RequireUnsandboxed(t) // darwin; skips only inside another sandbox
//		testenv.RequireRoot(t, "the files at stake are root's")
//		...
//	}
//
// A skip message starts with [Marker] and the reason, e.g.
// "procage-skip(already-sandboxed): ...", so the CI skip guard
// (internal/ci/skipguard) reports why and its allow-list can name the
// reason. With PROCAGE_STRICT_SKIP set to anything but "" or "0" (the
// macOS lane sets it to 1), [Skip] fails the test instead: a runner that
// is itself sandboxed must fail loudly, not pass quietly. The Linux runs
// in .ci/run are not strict (as root some tests have no subject, as nobody
// others); they feed go test -json to the skip guard with
// internal/ci/skipguard/allow_linux.txt, and .ci/kernel-matrix (Linux 6.1,
// Landlock ABI 2) with allow_kernel_matrix.txt.
//
// It also holds the few test idioms more than one package's tests use:
// a loopback HTTP upstream ([ServeHTTP]) and, on Linux, finding and
// killing the sleeps a run leaves behind ([MarkedSleeps]).
//
// Call these helpers on the test's own goroutine: testing's Skip and Fatal
// end only the goroutine that calls them.
//
// # Limitations
//
// Only a skip that goes through this package is named and made strict; a
// direct t.Skip elsewhere is caught by the skip guard's allow-list instead
// (TestSkipsGoThroughTestenv keeps darwin files, tests/, cage/ and
// internal/linuxsandbox free of them).
package testenv

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
)

// StrictEnv names the setting that turns [Skip] into a failure.
const StrictEnv = "PROCAGE_STRICT_SKIP"

// CaseSensitiveVolumeEnv names the mount point of a case-sensitive volume
// for the tests that need one (the macOS lane attaches one with hdiutil).
const CaseSensitiveVolumeEnv = "PROCAGE_CASE_SENSITIVE_VOLUME"

// Marker opens every skip message this package writes.
const Marker = "procage-skip"

// Reason is why a test skips.
type Reason string

// The reasons a test may skip.
const (
	// ReasonSandboxed: the test process already runs in a Seatbelt
	// sandbox (under Codex, Claude Code and the like), where macOS refuses
	// to apply another profile.
	ReasonSandboxed Reason = "already-sandboxed"
	// ReasonNoCaseSensitiveVolume: CaseSensitiveVolumeEnv is not set.
	ReasonNoCaseSensitiveVolume Reason = "no-case-sensitive-volume"
	// ReasonTempDirOverridden: $TMPDIR is not macOS's per-user directory,
	// so a test about that directory has no subject.
	ReasonTempDirOverridden Reason = "tmpdir-overridden"
	// ReasonNoPTY: the system opens no pseudo-terminal (Linux tests).
	ReasonNoPTY Reason = "no-pty"

	// The Linux tests' reasons.

	// ReasonNeedsRoot: the test is about root's files or privileges and
	// runs unprivileged.
	ReasonNeedsRoot Reason = "needs-root"
	// ReasonRunsAsRoot: the test runs as root, whose privileges (or the
	// filter's rules for root) leave it without a subject.
	ReasonRunsAsRoot Reason = "runs-as-root"
	// ReasonNoProgram: a program the test runs is not installed.
	ReasonNoProgram Reason = "no-program"
	// ReasonLandlockABI: the kernel's Landlock ABI is older than the test
	// needs, so the cage refuses its policy by name (.ci/kernel-matrix
	// boots Debian 12's Linux 6.1, ABI 2).
	ReasonLandlockABI Reason = "landlock-abi"
	// ReasonLandlockOn: the test is about a kernel without Landlock, and
	// this one has it (.ci/kernel-matrix boots one with lsm= lacking
	// landlock).
	ReasonLandlockOn Reason = "landlock-on"
	// ReasonNoKernelFeature: the kernel lacks a system call or facility the
	// test uses (ENOSYS, System V or POSIX IPC configured out).
	ReasonNoKernelFeature Reason = "no-kernel-feature"
	// ReasonOtherArch: the test is written for another architecture's
	// system call numbers.
	ReasonOtherArch Reason = "other-arch"
	// ReasonCannotMount: mounting fails here even as root (a container
	// without CAP_SYS_ADMIN).
	ReasonCannotMount Reason = "cannot-mount"
	// ReasonNoUserNamespace: the kernel refuses the unprivileged caller a
	// user namespace (tier T1's tests; .ci/kernel-matrix's guest runs
	// chrooted, and the kernel refuses a chrooted process one).
	ReasonNoUserNamespace Reason = "no-user-namespace"
	// ReasonCannotCage: cage.Probe fails on this host, for a package's
	// tests that also run without a sandbox (cage/; tests/ fails instead).
	ReasonCannotCage Reason = "cannot-cage"
	// ReasonNoHostAddress: the machine has no interface address but
	// loopback and link-local ones (.ci/kernel-matrix's guest boots with
	// no network card), so a test about reaching the host's own address
	// has no subject.
	ReasonNoHostAddress Reason = "no-host-address"
	// ReasonNoSourceTree: a test that reads the repository's files (that
	// the docs hold its code) runs from a test binary that is neither in
	// its package's directory nor able to read the directory it was built
	// from ([SourceFile]).
	ReasonNoSourceTree Reason = "no-source-tree"
)

// Strict reports whether skips are failures in this run.
func Strict() bool {
	v := os.Getenv(StrictEnv)
	return v != "" && v != "0"
}

// Message is the text [Skip] reports for reason and detail.
func Message(reason Reason, detail string) string {
	return fmt.Sprintf("%s(%s): %s", Marker, reason, detail)
}

// Skip skips the test for reason, or fails it when [Strict].
func Skip(tb testing.TB, reason Reason, detail string) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("%s [%s is set: skips are failures]", Message(reason, detail), StrictEnv)
		return
	}
	tb.Skip(Message(reason, detail))
}

// RequireRoot skips the test unless it runs as root; why says what needs
// root.
func RequireRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		Skip(tb, ReasonNeedsRoot, why)
	}
}

// RequireNotRoot skips the test when it runs as root; why says what root
// would hide.
func RequireNotRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() == 0 {
		Skip(tb, ReasonRunsAsRoot, why)
	}
}

// RequireProgram skips the test when path, a program it runs, is missing.
func RequireProgram(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		Skip(tb, ReasonNoProgram, err.Error())
	}
}

// SourceFile returns the contents of name, a path relative to the
// calling test's package directory (README.md is "../README.md"). That
// directory is the one holding the calling source file: the one it was
// compiled from, or else the working directory (go test runs a package's
// tests there), whichever holds a file of the caller's name, so a binary
// run from elsewhere (another user, another directory) reads the right
// files or skips, never another package's. Neither found skips the test.
func SourceFile(tb testing.TB, name string) []byte {
	tb.Helper()
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		tb.Fatal("testenv: SourceFile: no caller")
		return nil
	}
	var dirs []string
	if filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, filepath.Base(file))); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	Skip(tb, ReasonNoSourceTree, fmt.Sprintf("%s: none of %q holds %s", name, dirs, filepath.Base(file)))
	return nil
}

// CaseSensitiveVolume returns a fresh directory on the case-sensitive volume
// named by CaseSensitiveVolumeEnv, removed at cleanup. It skips when the
// variable is unset and fails when the volume is missing or folds case.
func CaseSensitiveVolume(tb testing.TB) string {
	tb.Helper()
	mnt := os.Getenv(CaseSensitiveVolumeEnv)
	if mnt == "" {
		Skip(tb, ReasonNoCaseSensitiveVolume, CaseSensitiveVolumeEnv+" is not set")
		return ""
	}
	dir, err := os.MkdirTemp(mnt, "procage-test-")
	if err != nil {
		tb.Fatalf("%s=%s: %v", CaseSensitiveVolumeEnv, mnt, err)
		return ""
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		tb.Fatal(err)
		return ""
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err != nil {
		tb.Fatal(err)
		return ""
	}
	if _, err := os.Lstat(filepath.Join(dir, "PROBE")); err == nil {
		tb.Fatalf("%s=%s folds case: PROBE names probe", CaseSensitiveVolumeEnv, mnt)
		return ""
	}
	if err := os.Remove(filepath.Join(dir, "probe")); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// ServeHTTP serves h on a listener at addr ("127.0.0.2:0", "[::1]:0")
// until the test ends and returns the listener's port: a loopback
// upstream for a caged client to reach, or to be kept from.
func ServeHTTP(tb testing.TB, addr string, h http.Handler) int {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatalf("an upstream on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	return ln.Addr().(*net.TCPAddr).Port
}

// HostAddrs returns this machine's interface addresses other than loopback
// and link-local ones (which a proxy dials without a zone, so never
// reaches), each with its interface's prefix length; it skips when there
// is none.
func HostAddrs(tb testing.TB) []netip.Prefix {
	tb.Helper()
	ias, err := net.InterfaceAddrs()
	if err != nil {
		tb.Fatalf("the interfaces' addresses: %v", err)
	}
	var out []netip.Prefix
	for _, ia := range ias {
		ipn, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		a = a.Unmap()
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
			continue
		}
		bits, _ := ipn.Mask.Size()
		out = append(out, netip.PrefixFrom(a, bits))
	}
	if len(out) == 0 {
		Skip(tb, ReasonNoHostAddress, fmt.Sprintf("no interface address but loopback and link-local (%v)", ias))
	}
	return out
}

// HostService serves body over HTTP on every address of this machine
// (":0": [::] dual-stack where it has IPv6, else 0.0.0.0), as a service
// the host binds for itself would, and returns its port and a count of the
// connections it accepted: a canary asserts the count stays 0.
func HostService(tb testing.TB, body string) (port int, accepted *atomic.Int32) {
	tb.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		tb.Fatal(err)
	}
	accepted = new(atomic.Int32)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				accepted.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, accepted
}
