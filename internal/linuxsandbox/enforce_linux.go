package linuxsandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
)

// ABIError reports a kernel whose Landlock ABI is older than a plan needs
// (Have 0: Landlock is not available: not built, or not in the lsm= list).
type ABIError struct {
	Kernel string // uname release
	Have   int
	Need   int
}

func (e *ABIError) Error() string {
	if e.Have == 0 {
		return "landlock unavailable on Linux " + e.Kernel + " (need ABI " + strconv.Itoa(e.Need) + ")"
	}
	return "landlock ABI " + strconv.Itoa(e.Have) + " on Linux " + e.Kernel + ", need " + strconv.Itoa(e.Need)
}

// KernelRelease returns uname's release string.
func KernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "(unknown)"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// landlockCreateRulesetVersion asks for the ABI instead of creating a
// ruleset (include/uapi/linux/landlock.h).
const landlockCreateRulesetVersion = 1

// KernelABI returns the kernel's Landlock ABI, 0 if Landlock is not
// available (ENOSYS: not built; EOPNOTSUPP: not enabled at boot).
var KernelABI = sync.OnceValue(func() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateRulesetVersion)
	if e != 0 {
		return 0
	}
	return int(v)
})

// CheckABI returns an *ABIError unless the kernel enforces pl.
func CheckABI(pl *Plan) error {
	if have := KernelABI(); have < pl.MinABI {
		return &ABIError{Kernel: KernelRelease(), Have: have, Need: pl.MinABI}
	}
	return nil
}

// rulesetAttr is struct landlock_ruleset_attr up to scoped (ABI 6); the
// kernel accepts a larger struct from an older ABI's point of view only if
// the extra bytes are zero, and so reads this one on every ABI.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr (packed: 12 bytes).
type pathBeneathAttr struct {
	allowed uint64
	fd      int32
	_       [4]byte
}

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	allowed uint64
	port    uint64
}

const (
	landlockRulePathBeneath = 1
	landlockRuleNetPort     = 2
)

// Ruleset is a Landlock ruleset fd built in the parent; the child passes
// it to landlock_restrict_self. It is closed when the Ruleset is garbage
// collected or by Close.
type Ruleset struct {
	fd  int
	box *fdBox
}

// fdBox closes a descriptor once, whether Close or the GC cleanup comes
// first: a second close could hit a number reused by another ruleset.
type fdBox struct {
	once sync.Once
	fd   int
}

func (b *fdBox) close() (err error) {
	b.once.Do(func() { err = unix.Close(b.fd) })
	return err
}

// Close closes the ruleset fd. A spawn already started keeps its domain.
func (r *Ruleset) Close() error { return r.box.close() }

// DupAbove returns a copy of r whose descriptor is at least n (fcntl
// F_DUPFD_CLOEXEC), closed like r.
func (r *Ruleset) DupAbove(n int) (*Ruleset, error) {
	fd, err := unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, n)
	if err != nil {
		return nil, fmt.Errorf("duplicating the landlock ruleset above %d: %w", n, err)
	}
	d := &Ruleset{fd: fd, box: &fdBox{fd: fd}}
	runtime.AddCleanup(d, func(b *fdBox) { b.close() }, d.box)
	return d, nil
}

// FD returns the ruleset's descriptor.
func (r *Ruleset) FD() int { return r.fd }

// rulesetsBuilt counts BuildRuleset's rulesets, for tests that check a
// cage builds one per cage, not per spawn.
var rulesetsBuilt atomic.Int64

// RulesetsBuilt returns how many rulesets this process has built.
func RulesetsBuilt() int64 { return rulesetsBuilt.Load() }

// BuildRuleset creates a ruleset handling what pl handles and adds rules
// (pl.Rules, or pl.WithSpawn's result) and pl.NetRules. A path that does
// not exist is skipped: there is nothing to allow yet, and a file created
// there later stays denied. A rule on a file keeps only the rights
// Landlock accepts on files.
func BuildRuleset(pl *Plan, rules []PathRule) (*Ruleset, error) {
	if err := CheckABI(pl); err != nil {
		return nil, err
	}
	attr := rulesetAttr{handledFS: uint64(pl.HandledFS), handledNet: uint64(pl.HandledNet), scoped: uint64(pl.Scopes)}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	rulesetsBuilt.Add(1)
	rs := &Ruleset{fd: int(fd), box: &fdBox{fd: int(fd)}}
	runtime.AddCleanup(rs, func(b *fdBox) { b.close() }, rs.box)
	for _, r := range rules {
		if err := addPathRule(rs.fd, r); err != nil {
			rs.Close()
			return nil, err
		}
	}
	for _, n := range pl.NetRules {
		na := netPortAttr{allowed: uint64(n.Access), port: uint64(n.Port)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), landlockRuleNetPort, uintptr(unsafe.Pointer(&na)), 0, 0, 0); e != 0 {
			rs.Close()
			return nil, fmt.Errorf("landlock_add_rule tcp port %d: %w", n.Port, e)
		}
	}
	return rs, nil
}

func addPathRule(ruleset int, r PathRule) error {
	if r.Access == 0 {
		return nil
	}
	fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s for a landlock rule: %w", r.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", r.Path, err)
	}
	access := r.Access
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileRights
	}
	if access == 0 {
		return nil
	}
	pa := pathBeneathAttr{allowed: uint64(access), fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), landlockRulePathBeneath, uintptr(unsafe.Pointer(&pa)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock_add_rule %s (%s): %w", r.Path, access, e)
	}
	return nil
}

// Program is a seccomp program ready for the child.
type Program struct {
	prog  []unix.SockFilter
	fprog unix.SockFprog
}

// BuildProgram assembles pl's seccomp rules for the running architecture.
func BuildProgram(pl *Plan) (*Program, error) {
	arch := ArchByGOARCH(runtime.GOARCH)
	if arch == nil {
		return nil, fmt.Errorf("linuxsandbox: no seccomp syscall table for %s", runtime.GOARCH)
	}
	raw, err := Filter(arch, pl.Seccomp)
	if err != nil {
		return nil, err
	}
	f := &Program{prog: make([]unix.SockFilter, len(raw))}
	for i, r := range raw {
		f.prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	f.fprog = unix.SockFprog{Len: uint16(len(f.prog)), Filter: &f.prog[0]}
	return f, nil
}

// securebits (include/uapi/linux/securebits.h): root is not special for
// capabilities, setuid does not fix them up, keep-caps is off, ambient
// capabilities cannot be raised, and each of these is locked.
const (
	secbitNoroot              = 1 << 0
	secbitNorootLocked        = 1 << 1
	secbitNoSetuidFixup       = 1 << 2
	secbitNoSetuidFixupLocked = 1 << 3
	secbitKeepCapsLocked      = 1 << 5
	secbitNoCapAmbientRaise   = 1 << 6
	secbitNoCapAmbientLocked  = 1 << 7
	securebits                = secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientLocked
)

const (
	capSetpcap  = 8
	capSysAdmin = 21
)

// parentCaps returns the caller's effective capability sets (both words).
func parentCaps() ([2]uint32, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return [2]uint32{}, err
	}
	return [2]uint32{data[0].Effective | data[0].Permitted, data[1].Effective | data[1].Permitted}, nil
}

// lastCap is /proc/sys/kernel/cap_last_cap, or 40 (CAP_CHECKPOINT_RESTORE,
// the last since Linux 5.9) if it cannot be read.
var lastCap = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && n < 64 {
			return n
		}
	}
	return 40
})

// Calls are a spawn's prepared child calls and what they point to.
type Calls struct {
	Calls []forkexec.Call
	names map[forkexec.Step][]string
	keep  []any
}

// KeepAlive keeps everything the calls point to reachable; call it after
// forkexec.Start returns.
func (c *Calls) KeepAlive() { runtime.KeepAlive(c.keep) }

// Name returns the name of the call a *forkexec.StepError reports, or "".
func (c *Calls) Name(step forkexec.Step, pos int) string {
	ns := c.names[step]
	if pos < 1 || pos > len(ns) {
		return ""
	}
	return ns[pos-1]
}

func (c *Calls) add(name string, call forkexec.Call) {
	c.Calls = append(c.Calls, call)
	c.names[call.Step()] = append(c.names[call.Step()], name)
}

var rootDir = []byte("/\x00")

// NewCalls prepares the child's calls for one spawn, in the order the
// child makes them:
//
// At StepApply: prctl(PR_SET_NO_NEW_PRIVS); if the caller holds
// CAP_SETPCAP, every bounding capability dropped and the securebits set
// and locked; the ambient set cleared and capset to all-zero (so root in a
// cage is not root); landlock_restrict_self; seccomp(SECCOMP_SET_MODE_FILTER).
//
// At StepConfirm: PR_GET_NO_NEW_PRIVS must be 1, PR_GET_SECCOMP 2; with
// signal scoping kill(caller, 0) must fail with EPERM; unless the plan
// lets "/" be listed, opening it must fail with EACCES (Landlock in force);
// with CAP_SETPCAP dropped, CAP_SYS_ADMIN must be out of the bounding set.
func NewCalls(pl *Plan, rs *Ruleset, f *Program, rules []PathRule) (*Calls, error) {
	caps, err := parentCaps()
	if err != nil {
		return nil, fmt.Errorf("capget: %w", err)
	}
	c := &Calls{names: map[forkexec.Step][]string{}, keep: []any{rs, f}}
	apply := func(name string, trap uintptr, args ...uintptr) {
		c.add(name, forkexec.RawCall(forkexec.StepApply, trap, args...))
	}
	apply("no_new_privs", unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	setpcap := caps[0]&(1<<capSetpcap) != 0
	if setpcap {
		for cp := 0; cp <= lastCap(); cp++ {
			apply("drop bounding capability "+strconv.Itoa(cp), unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(cp), 0, 0, 0)
		}
		apply("securebits", unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, securebits, 0, 0, 0)
	}
	apply("clear ambient capabilities", unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := &[2]unix.CapUserData{}
	c.keep = append(c.keep, hdr, data)
	apply("capset", unix.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(&data[0])))
	apply("landlock_restrict_self", unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0)
	apply("seccomp", unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&f.fprog)))

	confirm := func(name string, ret uintptr, errno syscall.Errno, trap uintptr, args ...uintptr) {
		c.add(name, forkexec.RawCallExpect(forkexec.StepConfirm, ret, errno, trap, args...))
	}
	confirm("no_new_privs is set", 1, 0, unix.SYS_PRCTL, unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	confirm("seccomp filter mode", unix.SECCOMP_MODE_FILTER, 0, unix.SYS_PRCTL, unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if pl.Scopes&ScopeSignal != 0 {
		confirm("signal to the caller refused", 0, unix.EPERM, unix.SYS_KILL, uintptr(os.Getpid()), 0)
	}
	if !listable(rules, "/") {
		confirm("landlock denies listing /", 0, unix.EACCES, unix.SYS_OPENAT, uintptr(atFDCWD),
			uintptr(unsafe.Pointer(&rootDir[0])), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	}
	if setpcap {
		confirm("CAP_SYS_ADMIN out of the bounding set", 0, 0, unix.SYS_PRCTL, unix.PR_CAPBSET_READ, capSysAdmin, 0, 0, 0)
	}
	return c, nil
}

// atFDCWD is AT_FDCWD (-100) as a word.
const atFDCWD = ^uintptr(99)

// listable reports whether a rule allows reading directory p.
func listable(rules []PathRule, p string) bool {
	for _, r := range rules {
		if r.Access&FSReadDir != 0 && within(p, r.Path) {
			return true
		}
	}
	return false
}
