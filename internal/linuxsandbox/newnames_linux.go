package linuxsandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/profile/linux"
)

// NewNamesAvailable reports why this host cannot run the new-names
// supervisor, or nil: it needs linux/amd64 (its call list), Linux 5.19
// (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: without it a call interrupted
// by a signal after the supervisor created its file is restarted and
// fails with EEXIST, and Go preempts with SIGURG; seccomp_unotify(2)),
// and Yama's ptrace_scope below 3 (3 refuses every process_vm_readv; at 1
// and 2 the supervisor's CAP_SYS_PTRACE passes:
// Documentation/admin-guide/LSM/Yama.rst). Each spawn also confirms the
// supervisor answers before its target runs.
var NewNamesAvailable = sync.OnceValue(func() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("the new-names supervisor serves linux/amd64 only, not %s", runtime.GOARCH)
	}
	rel := KernelRelease()
	if !kernelAtLeast(rel, 5, 19) {
		return fmt.Errorf("the new-names supervisor needs Linux 5.19 (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV); this kernel is %s", rel)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		if v := strings.TrimSpace(string(b)); v != "0" && v != "1" && v != "2" {
			return fmt.Errorf("the new-names supervisor reads the run's memory, which Yama's ptrace_scope %s refuses", v)
		}
	}
	return nil
})

// kernelAtLeast compares a release ("6.1.0-40-amd64") with major.minor;
// an unreadable one is too old.
func kernelAtLeast(rel string, major, minor int) bool {
	f := strings.FieldsFunc(rel, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// newNamesProgram is the new-names filter, the same for every spawn
// (the child only reads it).
var newNamesProgram = sync.OnceValues(func() (*Program, error) {
	raw, err := linux.NewNamesFilter(linux.ArchByGOARCH(runtime.GOARCH))
	if err != nil {
		return nil, err
	}
	return programOf(raw), nil
})

// NewNames is one spawn's new-names supervision: the supervisor, the
// Landlock layer it keeps (Outer: the target's rules and /proc read, for
// the target's working directory, descriptors and umask), the target's
// filter and the listener's way to the supervisor. Close it after the
// spawn.
type NewNames struct {
	Outer *Ruleset
	sup   *forkexec.Supervisor
	prog  *Program
	sock  [2]int // the target's end, the supervisor's
	fixed int    // a number reserved for the listener in the target
	slot  *uintptr
	msg   *unix.Msghdr
	keep  []any
}

// NewSpawnNames prepares a spawn's supervision. outer must be the spawn's
// own ruleset (the mount rules for /proc go into it in the child:
// [NewNames.MountRuleCalls]); every descriptor it makes is at kept or
// above.
func NewSpawnNames(outer *Ruleset, kept int) (*NewNames, error) {
	prog, err := newNamesProgram()
	if err != nil {
		return nil, err
	}
	n := &NewNames{Outer: outer, prog: prog, sock: [2]int{-1, -1}, fixed: -1, slot: new(uintptr)}
	fail := func(err error) (*NewNames, error) {
		n.Close()
		return nil, fmt.Errorf("linuxsandbox: the new-names supervisor: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	for i, fd := range fds {
		hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, kept)
		unix.Close(fd)
		if err != nil {
			return fail(err)
		}
		n.sock[i] = hi
	}
	// The listener's number in the target: a descriptor held open here so
	// the child's dup3 onto it replaces nothing the child uses.
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	n.fixed, err = unix.FcntlInt(uintptr(null), unix.F_DUPFD_CLOEXEC, kept)
	unix.Close(null)
	if err != nil {
		n.fixed = -1
		return fail(err)
	}
	if n.sup, err = forkexec.NewSupervisor(n.sock[1]); err != nil {
		return fail(err)
	}
	if err = n.sup.SetDenyList(denyList(), linux.NewNameFolds, linux.NewNameIgnorable); err != nil {
		return fail(err)
	}
	rights := unix.UnixRights(n.fixed)
	one := []byte{0}
	iov := &unix.Iovec{Base: &one[0]}
	iov.SetLen(1)
	n.msg = &unix.Msghdr{Iov: iov, Iovlen: 1, Control: &rights[0]}
	n.msg.SetControllen(len(rights))
	n.keep = []any{rights, one, iov}
	return n, nil
}

// SetExempt names the run's private temporary mount roots (its /tmp,
// /dev/shm, a kept TMPDIR), where the deny list does not apply.
func (n *NewNames) SetExempt(roots []string) error { return n.sup.SetExempt(roots) }

// MountRuleCalls adds the rules for the mounts the child makes (as
// [MountRuleCalls]) and read access to the run's /proc to the
// supervisor's layer.
func (n *NewNames) MountRuleCalls(rules []linux.PathRule, handled linux.FSAccess) *Calls {
	rules = append(slices.Clone(rules), linux.PathRule{Path: "/proc", Access: linux.FSReadFile | linux.FSReadDir})
	return MountRuleCalls(n.Outer, rules, handled)
}

// Close closes what the parent holds for the spawn.
func (n *NewNames) Close() error {
	var errs []error
	for _, fd := range []int{n.sock[0], n.sock[1], n.fixed} {
		if fd >= 0 {
			errs = append(errs, unix.Close(fd))
		}
	}
	n.sock, n.fixed = [2]int{-1, -1}, -1
	return errors.Join(errs...)
}

var gitProbe = []byte("/.git\x00")

// startCalls are the StepApply calls right after no_new_privs: the
// supervisor's layer and the supervisor, which keeps CAP_SYS_PTRACE of the
// capabilities the child holds then (Yama's ptrace_scope 1 and 2 let only
// an ancestor or a holder of it read a process's memory; Landlock still
// lets it reach only the run's processes, in its domain).
func (n *NewNames) startCalls(c *Calls) {
	c.add("landlock_restrict_self (the new-names supervisor's layer)", forkexec.RawCall(forkexec.StepApply, unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(n.Outer.fd), 0))
	c.add("start the new-names supervisor", forkexec.SuperviseCall(forkexec.StepApply, n.sup))
}

// handoffCalls follow the capability drop, before the cage's own seccomp
// filter: the target's layer (rs), the new-names filter and the
// listener's handoff.
func (n *NewNames) handoffCalls(c *Calls, rs *Ruleset) {
	raw := func(trap uintptr, args ...uintptr) forkexec.Call {
		return forkexec.RawCall(forkexec.StepApply, trap, args...)
	}
	c.add("landlock_restrict_self", raw(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0))
	c.add("seccomp (the new-names filter and its listener)", raw(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, uintptr(unsafe.Pointer(&n.prog.fprog))).StoreResult(n.slot))
	c.add("move the listener", raw(unix.SYS_DUP3, 0, uintptr(n.fixed), unix.O_CLOEXEC).ArgFrom(0, n.slot))
	c.add("close the listener's first number", raw(unix.SYS_CLOSE, 0).ArgFrom(0, n.slot))
	c.add("send the listener to the supervisor", raw(unix.SYS_SENDMSG, uintptr(n.sock[0]), uintptr(unsafe.Pointer(n.msg)), 0))
	c.add("close the listener", raw(unix.SYS_CLOSE, uintptr(n.fixed)))
	c.add("close the supervisor's socket", raw(unix.SYS_CLOSE, uintptr(n.sock[0])))
	c.keep = append(c.keep, n, n.keep, n.prog)
}

// confirmCall: the supervisor answers, and with its deny list: the kernel
// alone would say EROFS (T1's read-only /) or EACCES (Landlock).
func (n *NewNames) confirmCall(c *Calls) {
	c.add("the new-names supervisor refuses /.git", forkexec.RawCallExpect(forkexec.StepConfirm, 0, unix.EPERM,
		unix.SYS_MKDIRAT, atFDCWD, uintptr(unsafe.Pointer(&gitProbe[0])), 0))
}

// denyClass maps profile/linux's classes onto the supervisor's.
var denyClass = map[linux.NewNameClass]int{
	linux.NewNameAnywhere: forkexec.DenyAnywhere, linux.NewNameInGitDir: forkexec.DenyInGitDir,
	linux.NewNameInGitInfo: forkexec.DenyInGitInfo, linux.NewNameMarker: forkexec.DenyMarker,
}

// denyList is linux.NewNameRules for the supervisor.
func denyList() []forkexec.DenyName {
	out := make([]forkexec.DenyName, 0, len(linux.NewNameRules))
	for _, r := range linux.NewNameRules {
		out = append(out, forkexec.DenyName{Name: r.Name, Class: denyClass[r.Class]})
	}
	return out
}
