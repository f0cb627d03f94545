package linuxsandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
	"weak"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/profile/linux"
)

// ABIError reports a kernel whose Landlock ABI is older than a plan needs
// (Have 0: Landlock is not available: not built, or not in the lsm= list).
type ABIError struct {
	Kernel string // uname release
	Have   int    // the kernel's ABI
	Need   int    // the plan's MinABI
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
func CheckABI(pl *linux.Plan) error {
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

// BuildRuleset creates a ruleset handling what pl handles and adds the
// path rules held (see [OpenRules]) and pl.NetRules. No path is looked up
// here: every rule is added from the descriptor its path was opened as, so
// rulesets built at different times from the same Handles bind the same
// inodes, whatever the names mean by then.
func BuildRuleset(pl *linux.Plan, held ...*Handles) (*Ruleset, error) {
	if err := CheckABI(pl); err != nil {
		return nil, err
	}
	attr := rulesetAttr{handledFS: uint64(pl.HandledFS), handledNet: uint64(pl.HandledNet), scoped: uint64(pl.Scopes)}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	rulesetsBuilt.Add(1)
	// Above the child's descriptor shuffle (and out of the low numbers
	// its copy of the table needs): a spawn then uses the cage's calls as
	// built, not a duplicate and calls of its own.
	hi := moveHigh(int(fd))
	rs := &Ruleset{fd: hi, box: &fdBox{fd: hi}}
	runtime.AddCleanup(rs, func(b *fdBox) { b.close() }, rs.box)
	for _, h := range held {
		if h == nil {
			continue
		}
		for _, r := range h.rules {
			pa := pathBeneathAttr{allowed: uint64(r.access & pl.HandledFS), fd: int32(r.fd)}
			if pa.allowed == 0 {
				continue
			}
			if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), landlockRulePathBeneath, uintptr(unsafe.Pointer(&pa)), 0, 0, 0); e != 0 {
				rs.Close()
				return nil, fmt.Errorf("landlock_add_rule %s (%s): %w", r.path, r.access, e)
			}
		}
	}
	// The descriptors must stay open until the rules are added: a Handles'
	// cleanup closes them once it is unreachable.
	runtime.KeepAlive(held)
	for _, n := range pl.NetRules {
		na := netPortAttr{allowed: uint64(n.Access), port: uint64(n.Port)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), landlockRuleNetPort, uintptr(unsafe.Pointer(&na)), 0, 0, 0); e != 0 {
			rs.Close()
			return nil, fmt.Errorf("landlock_add_rule tcp port %d: %w", n.Port, e)
		}
	}
	return rs, nil
}

// Handles are path rules opened once: an O_PATH, close-on-exec descriptor
// per existing path, which binds the rule to the inode opened (a Landlock
// rule attaches to an inode, not a name: landlock_add_rule(2)). A ruleset
// cannot be extended once a process is restricted by it, so a spawn with
// rules of its own gets a new ruleset, and the policy's rules are re-added
// to it from these descriptors, never from their names. The descriptors
// are closed by Close or once the Handles are garbage collected; those of
// base rules are shared by every Handles of the process that opened the
// same spelling (see openBase), and closed once none holds them.
type Handles struct {
	rules []heldRule
	box   *fdsBox
}

// heldRule is one opened rule: its path (for errors), the rights Landlock
// accepts on what was opened, and the descriptor (owned by the Handles'
// box, or by base, shared).
type heldRule struct {
	path   string
	access linux.FSAccess
	fd     int
	base   *baseFD
}

// fdsBox closes its descriptors once, whichever of Close and the GC
// cleanup comes first.
type fdsBox struct {
	once sync.Once
	fds  []int
}

func (b *fdsBox) close() {
	b.once.Do(func() {
		for _, fd := range b.fds {
			unix.Close(fd)
		}
	})
}

// Close closes the descriptors the Handles own and drops the shared ones.
// Rulesets already built keep their rules.
func (h *Handles) Close() error {
	if h != nil {
		h.box.close()
	}
	return nil
}

// Len returns how many rules are held (paths that existed when opened).
func (h *Handles) Len() int { return len(h.rules) }

// OpenRules opens each rule's path once, without following a symbolic link
// anywhere in it ([OpenNoFollow]), for [BuildRuleset]. spell, if not nil,
// returns the spelling to open for a rule (its kernel spelling, after the
// caller's link check), else the rule's Path is opened. A path that does
// not exist (ENOENT, or ENOTDIR: a component is a file) is skipped: there
// is nothing to allow yet, and what appears there later is not looked up
// again. A rule on a file keeps only the rights Landlock accepts on files.
func OpenRules(rules []linux.PathRule, spell func(linux.PathRule) (string, error)) (*Handles, error) {
	h := &Handles{box: &fdsBox{}}
	runtime.AddCleanup(h, func(b *fdsBox) { b.close() }, h.box)
	for _, r := range rules {
		if r.Access == 0 {
			continue
		}
		p := r.Path
		if spell != nil {
			var err error
			if p, err = spell(r); err != nil {
				h.Close()
				return nil, err
			}
		}
		hr := heldRule{path: p, access: r.Access}
		var st *unix.Stat_t
		var err error
		if r.Layer == linux.LayerBase {
			if hr.base, err = openBase(p); err == nil {
				hr.fd, st = hr.base.fd, &hr.base.st
			}
		} else if hr.fd, st, err = openConfirmed(p); err == nil {
			h.box.fds = append(h.box.fds, hr.fd)
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("opening %s for a landlock rule: %w", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			hr.access &= linux.FSFileRights
		} else if r.Layer != linux.LayerBase && r.Access&^linux.FSFileRights == 0 {
			// A file's rights on a directory reach every file beneath it:
			// a literal rule or a file grant must not become a tree.
			h.Close()
			return nil, fmt.Errorf("%s: %w", p, linux.ErrLiteralDirectory)
		}
		h.rules = append(h.rules, hr)
	}
	return h, nil
}

// baseFD is a base rule's descriptor, shared by the Handles holding it and
// closed by its cleanup once none does.
type baseFD struct {
	fd int
	st unix.Stat_t
}

// baseFDs are the base rules' descriptors by spelling. Every cage's plan
// has the same few dozen base paths; sharing them keeps a process's
// descriptors from growing by that many per live cage.
var baseFDs = struct {
	sync.Mutex
	m map[string]weak.Pointer[baseFD]
}{m: map[string]weak.Pointer[baseFD]{}}

// openBase returns the shared descriptor of spelling p if it is still at
// p (confirmAt), else opens p as openConfirmed does.
func openBase(p string) (*baseFD, error) {
	baseFDs.Lock()
	defer baseFDs.Unlock()
	if b := baseFDs.m[p].Value(); b != nil && confirmAt(b.fd, &b.st, p) == nil {
		return b, nil
	}
	fd, st, err := openConfirmed(p)
	if err != nil {
		delete(baseFDs.m, p)
		return nil, err
	}
	b := &baseFD{fd: fd, st: *st}
	runtime.AddCleanup(b, func(fd int) { unix.Close(fd) }, fd)
	baseFDs.m[p] = weak.Make(b)
	return b, nil
}

// openConfirmed opens p without following links and confirms that what it
// opened is at p (see confirmAt).
func openConfirmed(p string) (int, *unix.Stat_t, error) {
	fd, err := OpenNoFollow(p)
	if errors.Is(err, unix.ELOOP) {
		return -1, nil, fmt.Errorf("%w: a symbolic link is in the way (%w)", linux.ErrPathChanged, err)
	}
	if err != nil {
		return -1, nil, err
	}
	st := new(unix.Stat_t)
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("fstat: %w", err)
	}
	if err := confirmAt(fd, st, p); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return moveHigh(fd), st, nil
}

// moveHigh moves a held descriptor to heldFloor or above. Until it
// executes its target a child has a copy of the parent's descriptor table,
// and its own confirm open takes the lowest free number: with a cage's few
// dozen held descriptors there, a child whose RLIMIT_NOFILE is lowered
// (cage.WithRlimits) found none free.
func moveHigh(fd int) int {
	floor := heldFloor()
	if fd >= floor {
		return fd
	}
	hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, floor)
	if err != nil {
		return fd // out of numbers up there: it stays where it is
	}
	unix.Close(fd)
	return hi
}

// heldFloor is 1024 where the soft RLIMIT_NOFILE leaves room above it (Go
// raises the soft limit to the hard one at start-up: os package), else 0.
var heldFloor = sync.OnceValue(func() int {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur < 4096 {
		return 0
	}
	return 1024
})

// OpenNoFollow opens the absolute, clean path p as an O_PATH|O_CLOEXEC
// descriptor without following a symbolic link in any component: a link
// anywhere is ELOOP. It uses openat2 with RESOLVE_NO_SYMLINKS (Linux 5.6,
// openat2(2)) and, where that is refused (ENOSYS: an older kernel, or a
// seccomp filter such as a cage's own, which answers openat2 so; EPERM: a
// filter answering unknown calls so), one openat per component from "/"
// with O_NOFOLLOW, each a directory but the last.
func OpenNoFollow(p string) (int, error) { return openNoFollow(p, true) }

// openNoFollow is OpenNoFollow; without openat2 it walks (for tests).
func openNoFollow(p string, openat2 bool) (int, error) {
	if !path.IsAbs(p) || path.Clean(p) != p {
		return -1, fmt.Errorf("%q is not a clean absolute path: %w", p, unix.EINVAL)
	}
	fd, err := -1, error(unix.ENOSYS)
	if openat2 {
		fd, err = unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		fd, err = openWalk(p)
	}
	if err != nil {
		return -1, err
	}
	// openat2 refuses a final link without O_NOFOLLOW, and the walk's
	// final O_NOFOLLOW|O_PATH opens the link itself: refuse it either way.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		if err == nil {
			err = unix.ELOOP
		}
		return -1, err
	}
	return fd, nil
}

// openWalk is OpenNoFollow's component walk.
func openWalk(p string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || p == "/" {
		return fd, err
	}
	comps := strings.Split(p[1:], "/")
	for i, c := range comps {
		flags := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		last := i == len(comps)-1
		if !last {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, c, flags, 0)
		if errors.Is(err, unix.ENOTDIR) {
			// A file (the path does not exist) or a link (refused).
			var st unix.Stat_t
			if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// confirmAt checks that fd, opened from p without following links, is at
// p now. The caller's link check ran on how p was resolved; this ties what
// was opened to that spelling, whatever renames raced the walk. The kernel
// names the path it reaches a descriptor by in /proc/self/fd (proc(5):
// d_path); where procfs cannot say (not mounted), or says it in other
// letter case (a case-folding directory), a second walk of p without links
// must reach the same inode (st).
func confirmAt(fd int, st *unix.Stat_t, p string) error {
	got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err == nil && got == p {
		return nil
	}
	if err == nil && !strings.EqualFold(got, p) {
		return fmt.Errorf("%w: opened, it is at %s", linux.ErrPathChanged, got)
	}
	fd2, err := OpenNoFollow(p)
	if err != nil {
		return fmt.Errorf("%w: opening it again: %w", linux.ErrPathChanged, err)
	}
	defer unix.Close(fd2)
	var st2 unix.Stat_t
	if err := unix.Fstat(fd2, &st2); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	if st2.Dev != st.Dev || st2.Ino != st.Ino {
		return fmt.Errorf("%w: opened again, it is another file", linux.ErrPathChanged)
	}
	return nil
}

// Program is a seccomp program ready for the child.
type Program struct {
	prog  []unix.SockFilter
	fprog unix.SockFprog
}

// BuildProgram assembles pl's seccomp rules for the running architecture.
func BuildProgram(pl *linux.Plan) (*Program, error) {
	arch := linux.ArchByGOARCH(runtime.GOARCH)
	if arch == nil {
		return nil, fmt.Errorf("linuxsandbox: no seccomp syscall table for %s", runtime.GOARCH)
	}
	raw, err := linux.Filter(arch, pl.Seccomp)
	if err != nil {
		return nil, err
	}
	return programOf(raw), nil
}

// programOf makes an assembled BPF program ready for seccomp(2).
func programOf(raw []bpf.RawInstruction) *Program {
	f := &Program{prog: make([]unix.SockFilter, len(raw))}
	for i, r := range raw {
		f.prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	f.fprog = unix.SockFprog{Len: uint16(len(f.prog)), Filter: &f.prog[0]}
	return f
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
	Calls []forkexec.Call // for forkexec.Attr.Calls
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
func NewCalls(pl *linux.Plan, rs *Ruleset, f *Program, rules []linux.PathRule) (*Calls, error) {
	return NewCallsSignaling(pl, rs, f, rules, os.Getpid())
}

// NewCallsSignaling is [NewCalls] for a child whose signal-scoping
// confirmation signals pid rather than the caller: 1 for a target in its
// own pid namespace, where the caller has no pid and pid 1 is outside the
// Landlock domain.
func NewCallsSignaling(pl *linux.Plan, rs *Ruleset, f *Program, rules []linux.PathRule, pid int) (*Calls, error) {
	return NewCallsSupervised(pl, rs, f, rules, pid, nil)
}

// NewCallsSupervised is [NewCallsSignaling] for a spawn the new-names
// supervisor serves (nn; nil: none): after no_new_privs the child
// restricts itself with nn.Outer and starts the supervisor (which keeps
// that layer); after the capability drop it restricts itself with rs,
// installs the new-names filter and hands its listener over, then
// installs f; at StepConfirm a mkdir of /.git must fail with the
// supervisor's EPERM.
func NewCallsSupervised(pl *linux.Plan, rs *Ruleset, f *Program, rules []linux.PathRule, pid int, nn *NewNames) (*Calls, error) {
	caps, err := parentCaps()
	if err != nil {
		return nil, fmt.Errorf("capget: %w", err)
	}
	c := &Calls{names: map[forkexec.Step][]string{}, keep: []any{rs, f}}
	apply := func(name string, trap uintptr, args ...uintptr) {
		c.add(name, forkexec.RawCall(forkexec.StepApply, trap, args...))
	}
	apply("no_new_privs", unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	if nn != nil {
		nn.startCalls(c)
	}
	// A T1 child in a user namespace holds every capability there,
	// CAP_SETPCAP included: it drops the bounding set too.
	setpcap := caps[0]&(1<<capSetpcap) != 0 || pl.Tier == linux.TierT1
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
	if nn != nil {
		nn.handoffCalls(c, rs)
	} else {
		apply("landlock_restrict_self", unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0)
	}
	apply("seccomp", unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&f.fprog)))

	confirm := func(name string, ret uintptr, errno syscall.Errno, trap uintptr, args ...uintptr) {
		c.add(name, forkexec.RawCallExpect(forkexec.StepConfirm, ret, errno, trap, args...))
	}
	confirm("no_new_privs is set", 1, 0, unix.SYS_PRCTL, unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	confirm("seccomp filter mode", unix.SECCOMP_MODE_FILTER, 0, unix.SYS_PRCTL, unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if pl.Scopes&linux.ScopeSignal != 0 {
		confirm("signal to the caller refused", 0, unix.EPERM, unix.SYS_KILL, uintptr(pid), 0)
	}
	if !listable(rules, "/") {
		confirm("landlock denies listing /", 0, unix.EACCES, unix.SYS_OPENAT, uintptr(atFDCWD),
			uintptr(unsafe.Pointer(&rootDir[0])), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	}
	if setpcap {
		confirm("CAP_SYS_ADMIN out of the bounding set", 0, 0, unix.SYS_PRCTL, unix.PR_CAPBSET_READ, capSysAdmin, 0, 0, 0)
	}
	if nn != nil {
		nn.confirmCall(c)
	}
	return c, nil
}

// atFDCWD is AT_FDCWD (-100) as a word.
const atFDCWD = ^uintptr(99)

// listable reports whether a rule allows reading directory p.
func listable(rules []linux.PathRule, p string) bool {
	for _, r := range rules {
		if r.Access&linux.FSReadDir != 0 && within(p, r.Path) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
