package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/profile/linux"
)

// HostShapeEnv names the seccomp shape ([HostShapes]) a re-executed test
// binary puts itself under before it does anything else
// ([EnterHostShape]): the tests of the T1 fallbacks run the probe, spawns
// and the command line in a process whose system calls are refused as on
// another host, for real.
const HostShapeEnv = "PROCAGE_TEST_HOST_SHAPE"

// maskProcEnv carries [MaskedProc]'s request to the first stage: the
// caller's uid:gid and 1 to mask (0: the same namespaces, unmasked).
const maskProcEnv = "PROCAGE_TEST_MASK_PROC"

// mountCalls are the mount system calls, old and new API.
var mountCalls = []string{"mount", "umount2", "pivot_root", "open_tree", "move_mount", "mount_setattr", "fsopen", "fsconfig", "fsmount", "fspick"}

// HostShapes are the seccomp filters [EnterHostShape] installs, by name.
//
//   - "docker": Docker's default seccomp profile for a container without
//     CAP_SYS_ADMIN (moby/moby profiles/seccomp/default.json): unshare,
//     setns and the mount calls are not allowed (the profile's default
//     answer, EPERM), clone only without a CLONE_NEW* flag (the profile's
//     mask 0x7E020000), clone3 ENOSYS (its flags are in memory BPF cannot
//     read, so libcs fall back to clone).
//   - "userns-mount-eacces": unshare works and the mounts after it fail
//     with EACCES. It reproduces the shape Ubuntu 24.04's AppArmor
//     restriction of unprivileged user namespaces gives
//     (kernel.apparmor_restrict_unprivileged_userns=1: openai/codex#15057,
//     anthropic-experimental/sandbox-runtime#74), not AppArmor itself: its
//     uid_map refusal is a write(2) to a descriptor, which a seccomp filter
//     cannot tell from any other write.
//   - "userns-lo-eperm": unshare and the id maps work, bringing the new
//     network namespace's lo up (ioctl SIOCSIFFLAGS) fails with EPERM: the
//     loopback refusal the same reports name.
var HostShapes = map[string][]linux.SeccompRule{
	"docker": append([]linux.SeccompRule{
		{Syscall: "unshare", Errno: linux.EPERM},
		{Syscall: "setns", Errno: linux.EPERM},
		{Syscall: "clone", Conds: []linux.Cond{{Arg: 0, Op: linux.OpMaskAny, Mask: 0x7E020000}}, Errno: linux.EPERM},
		{Syscall: "clone3", Errno: linux.ENOSYS},
	}, rulesFor(mountCalls, linux.EPERM)...),
	"userns-mount-eacces": rulesFor(mountCalls, linux.EACCES),
	"userns-lo-eperm": {
		{Syscall: "ioctl", Conds: []linux.Cond{{Arg: 1, Op: linux.OpIn, Vals: []uint32{unix.SIOCSIFFLAGS}}}, Errno: linux.EPERM},
	},
}

func rulesFor(calls []string, errno linux.Errno) []linux.SeccompRule {
	rs := make([]linux.SeccompRule, len(calls))
	for i, c := range calls {
		rs[i] = linux.SeccompRule{Syscall: c, Errno: errno}
	}
	return rs
}

// EnterHostShape puts the calling process in the host shape its
// environment asks for; call it first thing in a re-executed test binary,
// never in the test process itself: it cannot be undone.
//
//   - HostShapeEnv: that shape's seccomp filter ([HostShapes]) on every
//     thread (SECCOMP_FILTER_FLAG_TSYNC, after no_new_privs, as an
//     unprivileged caller needs: seccomp(2)); then it returns.
//   - the first stage of [MaskedProc]: it masks /proc, runs the same
//     program again (arguments and environment but the request) as the
//     second stage, and exits with its status.
func EnterHostShape() error {
	if v, ok := os.LookupEnv(maskProcEnv); ok {
		os.Exit(maskProcStage(v))
	}
	name := os.Getenv(HostShapeEnv)
	if name == "" {
		return nil
	}
	rules, ok := HostShapes[name]
	if !ok {
		return fmt.Errorf("testenv: %s=%q names no host shape", HostShapeEnv, name)
	}
	arch := linux.ArchByGOARCH(runtime.GOARCH)
	if arch == nil {
		return fmt.Errorf("testenv: no seccomp table for %s", runtime.GOARCH)
	}
	raw, err := linux.Filter(arch, rules)
	if err != nil {
		return err
	}
	prog := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs on this thread, then TSYNC gives every thread both.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("testenv: no_new_privs: %w", err)
	}
	// With TSYNC a positive result is the thread that could not take it.
	if r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 || r != 0 {
		return fmt.Errorf("testenv: seccomp %s: thread %d: %w", name, r, e)
	}
	runtime.KeepAlive(prog)
	return nil
}

// dockerMasked are the /proc files Docker covers with /dev/null in a
// container (moby/moby oci/defaults.go, MaskedPaths); /proc/sys it makes
// read-only (ReadonlyPaths).
var dockerMasked = []string{"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug"}

// MaskedProc makes cmd (a re-execution of the test binary that calls
// [EnterHostShape] first) run where /proc is masked as in a container,
// for real: a first stage, root in a user and mount namespace of its own,
// binds /dev/null over Docker's masked /proc files and makes /proc/sys
// read-only, then runs cmd's program as the caller's uid and gid in a
// further user and mount namespace, where those mounts are locked (a
// less privileged mount namespace's copies: mount_namespaces(7)). There
// the kernel refuses a new procfs, the existing one not being fully
// visible (mount_too_revealing in fs/namespace.c). With mask false the
// namespaces are the same and nothing is masked. A kernel that refuses
// the test a user namespace (a chrooted caller: create_user_ns in
// kernel/user_namespace.c) fails cmd's start with EPERM: [SkipNoUserNS].
func MaskedProc(cmd *exec.Cmd, mask bool) {
	m := 0
	if mask {
		m = 1
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d:%d:%d", maskProcEnv, os.Geteuid(), os.Getegid(), m))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
}

// SkipNoUserNS skips the test when err is a [MaskedProc] command's start
// refused a user namespace (EPERM before the command ran).
func SkipNoUserNS(tb testing.TB, cmd *exec.Cmd, err error) {
	tb.Helper()
	if cmd.Process == nil && errors.Is(err, syscall.EPERM) {
		Skip(tb, ReasonNoUserNamespace, "a user namespace for the masked /proc: "+err.Error())
	}
}

// maskProcStage is MaskedProc's first stage; it returns the exit status.
func maskProcStage(req string) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "testenv: masked /proc: %s: %v\n", what, err)
		return 125
	}
	var uid, gid, mask int
	if _, err := fmt.Sscanf(req, "%d:%d:%d", &uid, &gid, &mask); err != nil {
		return fail(maskProcEnv, err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fail("making / private", err)
	}
	if mask != 0 {
		masked := 0
		for _, p := range dockerMasked {
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if err := syscall.Mount("/dev/null", p, "", syscall.MS_BIND, ""); err != nil {
				return fail("/dev/null over "+p, err)
			}
			masked++
		}
		if masked == 0 {
			return fail("masking", fmt.Errorf("none of %v exists", dockerMasked))
		}
		if err := syscall.Mount("/proc/sys", "/proc/sys", "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fail("binding /proc/sys", err)
		}
		if err := syscall.Mount("", "/proc/sys", "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return fail("/proc/sys read-only", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("the test binary", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, maskProcEnv+"=") })
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: 0, Size: 1}},
	}
	err = cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return fail("the second stage", err)
	}
	return 0
}
