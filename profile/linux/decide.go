package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
)

// Decide answers what a plan does with one access, and which rule decides,
// the way the kernel checks it (procage explain --backend linux). Landlock
// (Documentation/userspace-api/landlock.rst, "Filesystem flags" and
// "Layers of file path access rights"): a ruleset grants a right on a path
// when a rule on the path or on any directory above it grants it, so the
// rights of every rule along the path are unioned; a handled right no rule
// grants is refused with EACCES; a right the ruleset does not handle is
// not restricted. A plan is one ruleset (one layer of the domain). The
// file rights (execute, write_file, read_file, truncate, ioctl_dev) and
// read_dir are checked on the file or directory itself; the rights to
// create, remove and reparent entries (make_*, remove_*, refer) on the
// directory that holds the entry. seccomp: the rules in match order, the
// first whose conditions hold answers its errno (as Filter lays them out).

// Op is what a caged process tries, in the vocabulary of ParseAccess.
type Op string

const (
	OpRead     Op = "read"     // open a file for reading: read_file on it
	OpList     Op = "list"     // open a directory to list it: read_dir on it
	OpWrite    Op = "write"    // open an existing file for writing: write_file on it
	OpTruncate Op = "truncate" // truncate a file (truncate(2), O_TRUNC): truncate on it
	OpExec     Op = "exec"     // execve a file: execute and read_file on it (the kernel opens it for reading)
	OpCreate   Op = "create"   // open(O_CREAT|O_EXCL|O_WRONLY) a new file: make_reg on its directory, write_file on it
	OpMkdir    Op = "mkdir"    // create a directory: make_dir on its directory
	OpRemove   Op = "remove"   // unlink a file: remove_file on its directory
	OpRmdir    Op = "rmdir"    // remove an empty directory: remove_dir on its directory
	OpSymlink  Op = "symlink"  // create a symbolic link: make_sym on its directory
	OpMkfifo   Op = "mkfifo"   // create a named pipe: make_fifo on its directory
	OpRight    Op = "right"    // one Landlock right (Access.Right), checked where the kernel checks it
	OpConnect  Op = "connect"  // socket(2) and connect(2): TCP to Port, or a Unix socket at Path
	OpBind     Op = "bind"     // socket(2) and bind(2): TCP on Port
	OpSyscall  Op = "syscall"  // the system call Syscall with Args, as seccomp sees it
)

// fsOps are the filesystem ops: the rights checked on the path itself and
// on its directory.
var fsOps = map[Op]struct{ file, dir FSAccess }{
	OpRead:     {file: FSReadFile},
	OpList:     {file: FSReadDir},
	OpWrite:    {file: FSWriteFile},
	OpTruncate: {file: FSTruncate},
	OpExec:     {file: FSExecute | FSReadFile},
	OpCreate:   {dir: FSMakeReg, file: FSWriteFile},
	OpMkdir:    {dir: FSMakeDir},
	OpRemove:   {dir: FSRemoveFile},
	OpRmdir:    {dir: FSRemoveDir},
	OpSymlink:  {dir: FSMakeSym},
	OpMkfifo:   {dir: FSMakeFifo},
}

// dirContentRights are checked on the directory holding the entry, not on
// the entry itself.
const dirContentRights = FSRemoveDir | FSRemoveFile | FSMakeChar | FSMakeDir | FSMakeReg |
	FSMakeSock | FSMakeFifo | FSMakeBlock | FSMakeSym | FSRefer

// Access is one thing a caged process tries. ParseAccess reads it from
// explain's words.
type Access struct {
	// Op is what the process does.
	Op Op
	// Path is the kernel spelling of the file (filesystem ops) or of the
	// Unix socket (OpConnect).
	Path string
	// Right is OpRight's one right.
	Right FSAccess
	// Host is OpConnect's or OpBind's host as given ("" none): Landlock
	// filters TCP by port only, so it does not decide.
	Host string
	// Port is the TCP port of OpConnect and OpBind.
	Port uint16
	// IPv6 makes the TCP socket AF_INET6 (an IPv6 Host).
	IPv6 bool
	// Syscall is OpSyscall's system call, by its unistd.h name.
	Syscall string
	// Args are OpSyscall's arguments; a pointer (a path) is 0, since
	// seccomp sees only the number.
	Args [6]uint64
	// Arch is the architecture the system call is made on; nil is the
	// host's (amd64 off amd64 and arm64).
	Arch *Arch
}

// String renders the access in ParseAccess's words.
func (a Access) String() string {
	switch a.Op {
	case OpRight:
		return a.Right.String() + " " + a.Path
	case OpConnect, OpBind:
		if a.Path != "" {
			return string(a.Op) + " " + a.Path
		}
		if a.Host != "" {
			return string(a.Op) + " " + hostPort(a)
		}
		return string(a.Op) + " " + strconv.Itoa(int(a.Port))
	case OpSyscall:
		return a.Syscall + "(" + a.argList() + ")"
	}
	return string(a.Op) + " " + a.Path
}

func (a Access) argList() string {
	n := len(a.Args)
	for n > 0 && a.Args[n-1] == 0 {
		n--
	}
	s := make([]string, n)
	for i := range n {
		s[i] = "0x" + strconv.FormatUint(a.Args[i], 16)
	}
	return strings.Join(s, ", ")
}

// seatbeltOps are the Seatbelt operations with a Linux counterpart, so a
// macOS question can be asked of a Linux plan unchanged.
var seatbeltOps = map[string]Op{
	"file-read-data":    OpRead,
	"file-read*":        OpRead,
	"file-write-data":   OpWrite,
	"file-write*":       OpWrite,
	"file-write-create": OpCreate,
	"file-write-unlink": OpRemove,
	"process-exec":      OpExec,
	"process-exec*":     OpExec,
	"network-outbound":  OpConnect,
	"network-bind":      OpBind,
}

// ErrAccess is wrapped by ParseAccess's errors.
var ErrAccess = errors.New("not an access procage explain --backend linux knows")

// ParseAccess reads an access from explain's two words, OP and ARG:
//
//   - read, list, write, truncate, exec, create, mkdir, remove, rmdir,
//     symlink, mkfifo PATH: that filesystem operation (see [Op]);
//   - a Landlock right's name (read_file, make_reg, ...) PATH: that right,
//     checked on PATH, or on its directory for make_*, remove_* and refer;
//   - connect PORT, connect HOST:PORT, bind PORT, bind HOST:PORT: a TCP
//     socket (AF_INET6 for an IPv6 HOST, [::1]:PORT); connect PATH: a Unix
//     socket;
//   - a system call's name, and ARG its arguments as seccomp sees them:
//     comma-separated numbers (0x1f, 0644, -100), constants (AF_INET,
//     SOCK_DGRAM, CLONE_NEWUSER, ...; | joins flags), a path for a pointer
//     (seccomp reads 0 there); missing arguments are 0;
//   - the Seatbelt operations with a counterpart (file-read-data is read,
//     file-write-data write, file-write-create create, file-write-unlink
//     remove, process-exec exec, network-outbound connect, network-bind
//     bind).
//
// PATH must be absolute; Decide expects its kernel spelling.
func ParseAccess(op, arg string) (Access, error) {
	o := Op(op)
	if so, ok := seatbeltOps[op]; ok {
		o = so
	}
	if _, ok := fsOps[o]; ok {
		p, err := absPath(op, arg)
		return Access{Op: o, Path: p}, err
	}
	if r, ok := rightByName(op); ok {
		p, err := absPath(op, arg)
		return Access{Op: OpRight, Right: r, Path: p}, err
	}
	switch o {
	case OpConnect, OpBind:
		if strings.HasPrefix(arg, "/") {
			if o == OpBind {
				return Access{}, fmt.Errorf("%s %q: a Unix socket file is make_sock PATH: %w", op, arg, ErrAccess)
			}
			return Access{Op: OpConnect, Path: path.Clean(arg)}, nil
		}
		return parseHostPort(o, op, arg)
	}
	if knownSyscall(op) {
		a := Access{Op: OpSyscall, Syscall: op}
		if arg == "" {
			return a, nil
		}
		vals := strings.Split(arg, ",")
		if len(vals) > len(a.Args) {
			return Access{}, fmt.Errorf("%s %q: at most %d arguments: %w", op, arg, len(a.Args), ErrAccess)
		}
		for i, v := range vals {
			n, err := argValue(v)
			if err != nil {
				return Access{}, fmt.Errorf("%s %q: argument %d: %v: %w", op, arg, i, err, ErrAccess)
			}
			a.Args[i] = n
		}
		return a, nil
	}
	return Access{}, fmt.Errorf("%q: want read, list, write, truncate, exec, create, mkdir, remove, rmdir, symlink, mkfifo, a Landlock right (read_file, make_reg, ...), connect, bind or a system call's name: %w", op, ErrAccess)
}

func absPath(op, arg string) (string, error) {
	if !strings.HasPrefix(arg, "/") {
		return "", fmt.Errorf("%s %q: want an absolute path: %w", op, arg, ErrAccess)
	}
	return path.Clean(arg), nil
}

func rightByName(s string) (FSAccess, bool) {
	i := slices.Index(fsNames, s)
	if i < 0 {
		return 0, false
	}
	return FSAccess(1) << i, true
}

func parseHostPort(o Op, op, arg string) (Access, error) {
	a := Access{Op: o}
	host, port := "", arg
	if i := strings.LastIndexByte(arg, ':'); i >= 0 {
		host, port = arg[:i], arg[i+1:]
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
			a.IPv6 = true
		} else if strings.Contains(host, ":") {
			return Access{}, fmt.Errorf("%s %q: write an IPv6 host in brackets, [::1]:PORT: %w", op, arg, ErrAccess)
		}
		if host == "" {
			return Access{}, fmt.Errorf("%s %q: empty host: %w", op, arg, ErrAccess)
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return Access{}, fmt.Errorf("%s %q: want PORT or HOST:PORT, a port 1-65535 (or a Unix socket's absolute path for connect): %w", op, arg, ErrAccess)
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() && !ip.Is4In6() {
		a.IPv6 = true
	}
	a.Host, a.Port = host, uint16(n)
	return a, nil
}

// hostPort renders a TCP access's HOST:PORT, an IPv6 host in brackets.
func hostPort(a Access) string {
	h := a.Host
	if a.IPv6 {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(int(a.Port))
}

func knownSyscall(name string) bool {
	_, amd := ArchAMD64.Syscall(name)
	_, arm := ArchARM64.Syscall(name)
	return amd || arm
}

// argConsts are the constants ParseAccess knows in system call arguments
// (include/uapi/linux/*.h, include/linux/socket.h).
var argConsts = map[string]uint64{
	"AF_UNIX": afUnix, "AF_LOCAL": afUnix, "AF_INET": afInet, "AF_INET6": afInet6, "AF_NETLINK": afNetlink,
	"AF_PACKET": 17, "AF_VSOCK": 40,
	"SOCK_STREAM": sockStream, "SOCK_DGRAM": 2, "SOCK_RAW": 3, "SOCK_SEQPACKET": sockSeqpacket,
	"SOCK_NONBLOCK": 0o4000, "SOCK_CLOEXEC": 0o2000000,
	"IPPROTO_IP": 0, "IPPROTO_TCP": ipprotoTCP, "IPPROTO_UDP": 17, "IPPROTO_SCTP": 132, "IPPROTO_MPTCP": 262,
	"NETLINK_ROUTE": netlinkRoute, "NETLINK_SOCK_DIAG": 4,
	"CLONE_VM": 0x100, "CLONE_FS": 0x200, "CLONE_FILES": 0x400, "CLONE_SIGHAND": 0x800,
	"CLONE_PARENT": cloneParent, "CLONE_THREAD": cloneThread, "CLONE_NEWNS": cloneNewNS,
	"CLONE_NEWCGROUP": cloneNewCgrp, "CLONE_NEWUTS": cloneNewUTS, "CLONE_NEWIPC": cloneNewIPC,
	"CLONE_NEWUSER": cloneNewUser, "CLONE_NEWPID": cloneNewPID, "CLONE_NEWNET": cloneNewNet,
	"CLONE_NEWTIME": cloneNewTime, "SIGCHLD": 17,
	"AT_FDCWD": 0xffffff9c, "S_ISUID": sISUID, "S_ISGID": sISGID,
	"TIOCSTI": tiocsti, "TIOCSWINSZ": tiocswinsz, "TIOCLINUX": tioclinux, "F_SETLEASE": fSetLease,
	"PRIO_PROCESS": 0, "PRIO_PGRP": 1, "PRIO_USER": 2, "MSG_FASTOPEN": msgFastOpen,
	"TCP_FASTOPEN_CONNECT": tcpFastOpenConnect,
}

// argValue reads one argument: numbers and constants joined by |, or a
// path (a pointer: 0).
func argValue(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/") {
		return 0, nil
	}
	var v uint64
	for _, f := range strings.Split(s, "|") {
		f = strings.TrimSpace(f)
		if c, ok := argConsts[f]; ok {
			v |= c
			continue
		}
		if n, err := strconv.ParseInt(f, 0, 64); err == nil {
			v |= uint64(n)
			continue
		}
		if n, err := strconv.ParseUint(f, 0, 64); err == nil {
			v |= n
			continue
		}
		return 0, fmt.Errorf("%q is neither a number nor a known constant", f)
	}
	return v, nil
}

// EACCES is Landlock's answer to an access no rule allows.
const EACCES Errno = 13

// ENETUNREACH is what a connect to a host outside a T1 run's own network
// namespace gets: no interface but its lo (errno.h).
const ENETUNREACH Errno = 101

// ENOENT is what a T1 run sees beneath a protected store's empty mount.
const ENOENT Errno = 2

// EROFS is what a T1 run's write or metadata change on a read-only mount
// fails with.
const EROFS Errno = 30

// Decision is what a plan does with an Access, and which rule decides.
type Decision struct {
	// Access is the access decided.
	Access Access
	// Allowed reports whether the plan lets it through.
	Allowed bool
	// Errno is the error a denied access fails with: EACCES from
	// Landlock, the matching rule's errno from seccomp.
	Errno Errno
	// Checks are the Landlock filesystem checks, in the kernel's order
	// (the directory's before the file's for a new file); the first that
	// fails denies.
	Checks []Check
	// Seccomp is the seccomp rule that refuses the access's system call
	// (socket(2) for connect and bind), or nil.
	Seccomp *SeccompRule
	// AboveTable is set when the system call's number is above the
	// reviewed table, which answers ENOSYS.
	AboveTable bool
	// Net is the TCP port rule that allows connect or bind; nil when no
	// rule does or TCP is not handled (NetHandled).
	Net *NetRule
	// NetHandled reports whether the ruleset handles the TCP right the
	// access needs.
	NetHandled bool
	// Gaps are the accepted gaps the decision rests on: what the policy
	// asks that Linux does not enforce for this access.
	Gaps []profile.GapPart
	// Note says what else bears on the access.
	Note string
	// NewName is the new-names supervisor's deny-list entry that refuses
	// a creation Landlock allows (Plan.NewNames), or nil.
	NewName *NewNameRule
	// Mount is the T1 mount that decides a filesystem access Landlock
	// allows: a protected store's empty read-only mount (hide), which
	// leaves nothing beneath it to reach.
	Mount *Mount

	network profile.NetworkMode // the plan's, for the text
	abi     int
}

// Check is one Landlock check of a filesystem access.
type Check struct {
	// Need are the rights checked.
	Need FSAccess
	// At is where: the path, or the directory holding it.
	At string
	// Grants are the rules that grant the needed rights: per right the
	// deepest rule on At or above it that grants it.
	Grants []Grant
	// Missing are the needed rights no rule grants.
	Missing FSAccess
	// Unhandled are needed rights the ruleset does not handle (an older
	// ABI): not restricted.
	Unhandled FSAccess
	// Covering are the rules on At or a directory above it, deepest first.
	Covering []PathRule
	// Denied are the hard-deny denials that took a missing right from a
	// rule on At or above it.
	Denied []Denial
}

// Grant is a rule that grants rights a check needs.
type Grant struct {
	Right FSAccess // the needed rights it grants
	Rule  PathRule
}

// Decide says what the plan does with a: which Landlock rule grants it,
// which hard-deny entry took the right that would have, which seccomp
// rule refuses its system call, and which accepted gaps it rests on. The
// plan's rules are taken as they are: a spawn's grants and private
// temporary directory ([Plan.WithSpawn]) are not in them, and a rule whose
// path does not exist when the ruleset is built is skipped by the kernel.
func (pl *Plan) Decide(a Access) (Decision, error) {
	d := Decision{Access: a, network: pl.Network, abi: pl.ABI}
	switch {
	case a.Op == OpSyscall:
		return pl.decideSyscall(d)
	case a.Op == OpConnect || a.Op == OpBind:
		return pl.decideSocket(d)
	}
	var file, dir FSAccess
	if a.Op == OpRight {
		if a.Right&dirContentRights != 0 {
			dir = a.Right
		} else {
			file = a.Right
		}
	} else if r, ok := fsOps[a.Op]; ok {
		file, dir = r.file, r.dir
	} else {
		return Decision{}, fmt.Errorf("linux: Decide: unknown op %q: %w", a.Op, ErrAccess)
	}
	if !strings.HasPrefix(a.Path, "/") {
		return Decision{}, fmt.Errorf("linux: Decide: %s %q: want an absolute path: %w", a.Op, a.Path, ErrAccess)
	}
	if dir != 0 {
		d.Checks = append(d.Checks, pl.check(dir, path.Dir(a.Path)))
	}
	if file != 0 {
		d.Checks = append(d.Checks, pl.check(file, a.Path))
	}
	d.Allowed = true
	for _, c := range d.Checks {
		if c.Missing != 0 {
			d.Allowed, d.Errno = false, EACCES
			break
		}
	}
	if !d.Allowed && pl.Tier == TierT1 && (file|dir)&fsWrite != 0 && !pl.onWritableMount(a.Path) {
		// The read-only mount answers before Landlock's hook runs.
		d.Errno = EROFS
		d.Note = "at tier T1 the path is on a read-only mount, whose EROFS comes before Landlock's EACCES"
	}
	if d.Allowed {
		for i, m := range pl.Mounts {
			if m.Kind != MountHide || !within(a.Path, m.Path) {
				continue
			}
			d.Mount = &pl.Mounts[i]
			makes := a.Op == OpCreate || a.Op == OpMkdir || a.Op == OpSymlink || a.Op == OpMkfifo || a.Op == OpRight && a.Right&dirContentRights != 0
			switch {
			case a.Path == m.Path && (a.Op == OpRead || a.Op == OpList):
				d.Note = "at tier T1 an empty read-only mount covers it (if it exists when the run starts): it reads as empty"
			case a.Path == m.Path || makes || a.Op == OpWrite || a.Op == OpTruncate:
				d.Allowed, d.Errno = false, EROFS
			default:
				d.Allowed, d.Errno = false, ENOENT
			}
			return d, nil
		}
	}
	if d.Allowed && pl.NewNames && pl.onWritableMount(a.Path) && (a.Op == OpCreate || a.Op == OpMkdir || a.Op == OpSymlink || a.Op == OpMkfifo) {
		if r, ok := newNameRule(path.Base(a.Path)); ok {
			// What the supervisor sees that a plan does not (a parent's
			// HEAD) is said, not decided; a .git parent is a git
			// directory.
			inGit := path.Base(path.Dir(a.Path)) == gitName
			switch {
			case r.Class == NewNameAnywhere || r.Class == NewNameInGitDir && inGit:
				d.Allowed, d.Errno, d.NewName = false, EPERM, &r
			case r.Class == NewNameInGitDir:
				d.Note = "the new-names supervisor refuses " + r.Name + " where its directory is a git directory (holds HEAD, objects or refs)"
			case r.Class == NewNameInGitInfo:
				d.Note = "the new-names supervisor refuses " + r.Name + " where its directory's parent is a git directory"
			default:
				d.Note = "the new-names supervisor refuses " + r.Name + " where it would give its directory HEAD, objects and refs (a repository)"
			}
			return d, nil
		}
	}
	if d.Allowed {
		d.Gaps = pl.fsGaps(a, file|dir)
		if a.Op == OpExec {
			d.Gaps = append(d.Gaps, pl.accepted(profile.GapExecTargetOnly)...)
		}
	}
	return d, nil
}

// check is the Landlock check of rights need at p.
func (pl *Plan) check(need FSAccess, p string) Check {
	c := Check{Need: need, At: p, Unhandled: need &^ pl.HandledFS}
	for _, r := range pl.Rules {
		if within(p, r.Path) {
			c.Covering = append(c.Covering, r)
		}
	}
	// Deepest first; at one depth a policy or grant rule before a base one
	// (it is the one the user wrote), then plan order.
	slices.SortStableFunc(c.Covering, func(x, y PathRule) int {
		if dx, dy := depth(x.Path), depth(y.Path); dx != dy {
			return dy - dx
		}
		return strings.Compare(layerOrder(y.Layer), layerOrder(x.Layer))
	})
	left := need & pl.HandledFS
	for _, r := range c.Covering {
		if g := r.Access & left; g != 0 {
			c.Grants = append(c.Grants, Grant{Right: g, Rule: r})
			left &^= g
		}
	}
	c.Missing = left
	for _, dn := range pl.Denied {
		if dn.Access&c.Missing != 0 && within(p, dn.Path) {
			c.Denied = append(c.Denied, dn)
		}
	}
	return c
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// fsGaps are the accepted gaps an allowed filesystem access rests on: a
// hard-deny entry protects the path against a needed right, and a tree
// rule above it that Landlock cannot carve the entry out of grants it.
func (pl *Plan) fsGaps(a Access, need FSAccess) []profile.GapPart {
	if pl.hd == nil {
		return nil
	}
	var out []profile.GapPart
	for _, e := range pl.hd.entries {
		if fsProtected(e.Protect)&need == 0 || !e.Covers(a.Path) {
			continue
		}
		for _, g := range pl.Accepted {
			if g.Class == e.Class && g.Path != "" && within(a.Path, g.Path) && !slices.ContainsFunc(out, func(o profile.GapPart) bool { return o.Gap == g.Gap && o.Path == g.Path }) {
				out = append(out, g)
			}
		}
	}
	return out
}

// accepted returns the plan's accepted parts of gap g.
func (pl *Plan) accepted(g profile.Gap) []profile.GapPart {
	var out []profile.GapPart
	for _, p := range pl.Accepted {
		if p.Gap == g {
			out = append(out, p)
		}
	}
	return out
}

// hostArch is the architecture a system call is decided for by default.
func hostArch() *Arch {
	if a := ArchByGOARCH(runtime.GOARCH); a != nil {
		return a
	}
	return ArchAMD64
}

// matchSeccomp returns the first rule of the plan that answers the system
// call name with args on arch, as the filter does.
func (pl *Plan) matchSeccomp(arch *Arch, name string, args [6]uint64) *SeccompRule {
	for i, r := range pl.Seccomp {
		if r.Syscall != name {
			continue
		}
		if _, ok := arch.Syscall(name); !ok {
			continue
		}
		if slices.IndexFunc(r.Conds, func(c Cond) bool { return !c.holds(uint32(args[c.Arg])) }) < 0 {
			return &pl.Seccomp[i]
		}
	}
	return nil
}

// holds evaluates the condition on an argument's low 32 bits, as the
// filter's BPF does.
func (c Cond) holds(v uint32) bool {
	switch c.Op {
	case OpIn:
		return slices.Contains(c.Vals, v)
	case OpNotIn:
		return !slices.Contains(c.Vals, v)
	case OpMaskAny:
		return v&c.Mask != 0
	case OpMaskNone:
		return v&c.Mask == 0
	case OpMaskedNe:
		return len(c.Vals) == 1 && v&c.Mask != c.Vals[0]
	}
	return false
}

func (pl *Plan) decideSyscall(d Decision) (Decision, error) {
	a := d.Access
	arch := a.Arch
	if arch == nil {
		arch = hostArch()
		d.Access.Arch = arch
	}
	nr, ok := arch.Syscall(a.Syscall)
	if !ok {
		return Decision{}, fmt.Errorf("linux: %s has no system call %q: %w", arch.Name, a.Syscall, ErrAccess)
	}
	if nr > arch.ceiling {
		d.AboveTable, d.Errno = true, ENOSYS
		return d, nil
	}
	if r := pl.matchSeccomp(arch, a.Syscall, a.Args); r != nil {
		d.Seccomp, d.Errno = r, r.Errno
		return d, nil
	}
	d.Allowed = true
	switch a.Syscall {
	case "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal":
		if pl.Scopes&ScopeSignal != 0 {
			d.Note = "Landlock's signal scope refuses (EPERM) a signal to a process outside the run"
		}
	case "connect", "sendto", "sendmsg":
		if pl.Scopes&ScopeAbstractUnixSocket != 0 {
			d.Note = "Landlock's abstract Unix socket scope refuses (EPERM) reaching an abstract socket outside the run"
		}
	}
	return d, nil
}

// socket(2)'s arguments for an access: family, type, protocol.
func socketArgs(a Access) [6]uint64 {
	switch {
	case a.Path != "":
		return [6]uint64{afUnix, sockStream}
	case a.IPv6:
		return [6]uint64{afInet6, sockStream}
	}
	return [6]uint64{afInet, sockStream}
}

func (pl *Plan) decideSocket(d Decision) (Decision, error) {
	a := d.Access
	arch := a.Arch
	if arch == nil {
		arch = hostArch()
		d.Access.Arch = arch
	}
	if r := pl.matchSeccomp(arch, "socket", socketArgs(a)); r != nil {
		d.Seccomp, d.Errno = r, r.Errno
		return d, nil
	}
	if a.Op == OpBind {
		if r := pl.matchSeccomp(arch, "bind", [6]uint64{}); r != nil {
			d.Seccomp, d.Errno = r, r.Errno
			return d, nil
		}
	}
	if a.Path != "" {
		// Landlock governs connect() to a path-named socket from ABI 9
		// (LANDLOCK_ACCESS_FS_RESOLVE_UNIX), which no plan handles yet.
		d.Allowed = true
		d.Gaps = pl.accepted(profile.GapUnixSocketPath)
		d.Note = fmt.Sprintf("Landlock does not restrict connect() to a path-named Unix socket before ABI 9 (planned %d)", pl.ABI)
		return d, nil
	}
	if n := pl.NetNS; n != nil {
		// The run's own network namespace: its lo (if up) is all there is.
		if !n.Loopback || (a.Host != "" && !isLoopback(a.Host)) {
			d.Errno = ENETUNREACH
			d.Note = "the run's own network namespace: " + n.String()
			return d, nil
		}
		if a.Op == OpConnect && slices.Contains(n.HostPorts, a.Port) {
			d.Note = fmt.Sprintf("the run's own 127.0.0.1:%d, forwarded by the caller to the host's", a.Port)
		} else {
			d.Note = "the run's own loopback, not the host's"
		}
	}
	right := NetConnectTCP
	if a.Op == OpBind {
		right = NetBindTCP
	}
	d.NetHandled = pl.HandledNet&right != 0
	d.Allowed = !d.NetHandled
	for i, r := range pl.NetRules {
		if d.NetHandled && r.Port == a.Port && r.Access&right != 0 {
			d.Net, d.Allowed = &pl.NetRules[i], true
		}
	}
	if !d.Allowed {
		d.Errno = EACCES
		return d, nil
	}
	switch {
	case pl.NetNS != nil:
	case pl.Network == profile.NetworkLoopback:
		d.Gaps = pl.accepted(profile.GapLoopback)
	case pl.Network == profile.NetworkProxy:
		d.Gaps = pl.accepted(profile.GapProxyDirect)
	case pl.Network == profile.NetworkOn:
		if a.Op == OpBind || isLoopback(a.Host) {
			d.Gaps = pl.accepted(profile.GapLocalServices)
		}
	}
	return d, nil
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// String says the decision on one line: allowed or denied, by what, and
// the accepted gaps it rests on.
func (d Decision) String() string {
	var b strings.Builder
	switch {
	case d.AboveTable:
		arch := d.Access.Arch
		nr, _ := arch.Syscall(d.Access.Syscall)
		fmt.Fprintf(&b, "denied (ENOSYS) by seccomp: %s is number %d on %s, above the reviewed table (%d)", d.Access.Syscall, nr, arch.Name, arch.ceiling)
	case d.Seccomp != nil:
		fmt.Fprintf(&b, "denied (%s) by seccomp rule %s (%s)", d.Seccomp.Errno, d.Seccomp, d.Seccomp.Why)
	case d.Access.Op == OpSyscall:
		fmt.Fprintf(&b, "allowed by seccomp: no rule matches %s on %s", d.Access, d.Access.Arch.Name)
	case d.Access.Op == OpConnect && d.Access.Path != "":
		fmt.Fprintf(&b, "allowed: socket(AF_UNIX) by seccomp")
	case d.Errno == ENETUNREACH:
		fmt.Fprintf(&b, "denied (ENETUNREACH) at tier T1: %s is not the run's own loopback", d.Access.Host)
	case d.Access.Op == OpConnect || d.Access.Op == OpBind:
		right := "connect_tcp"
		if d.Access.Op == OpBind {
			right = "bind_tcp"
		}
		switch {
		case !d.NetHandled:
			fmt.Fprintf(&b, "allowed: the ruleset does not handle %s (network %s", right, d.network)
			if d.abi < 4 {
				fmt.Fprintf(&b, ", Landlock ABI %d", d.abi)
			}
			b.WriteString(")")
		case d.Net != nil:
			fmt.Fprintf(&b, "allowed: %s on port %d by Landlock rule tcp port %d: %s", right, d.Access.Port, d.Net.Port, d.Net.Access)
		default:
			fmt.Fprintf(&b, "denied (EACCES): no Landlock rule allows %s on port %d", right, d.Access.Port)
		}
		if d.Access.Host != "" && d.NetHandled {
			b.WriteString("; Landlock does not see the host")
		}
	case d.Mount != nil && !d.Allowed:
		fmt.Fprintf(&b, "denied (%s) at tier T1: the mount %s %s covers it with an empty read-only mount (if it exists when the run starts)", d.Errno, d.Mount.Kind, d.Mount.Path)
	case d.NewName != nil && !d.Allowed:
		where := "in any directory"
		if d.NewName.Class == NewNameInGitDir {
			where = "in a git directory"
		}
		fmt.Fprintf(&b, "denied (%s) at tier T1 by the new-names supervisor: it refuses %s %s (Landlock would allow it)", d.Errno, d.NewName.Name, where)
	default:
		d.fsString(&b)
	}
	if d.Note != "" {
		b.WriteString("; " + d.Note)
	}
	for _, g := range d.Gaps {
		fmt.Fprintf(&b, "; not enforced (accepted gap %s): %s", g.Gap, g.Detail)
	}
	return b.String()
}

func (d Decision) fsString(b *strings.Builder) {
	if !d.Allowed {
		for _, c := range d.Checks {
			if c.Missing == 0 {
				continue
			}
			fmt.Fprintf(b, "denied (%s): no Landlock rule grants %s on %s", d.Errno, c.Missing, c.At)
			for _, dn := range c.Denied {
				fmt.Fprintf(b, "; hard-deny %s took %s from the %s rule %s (protected %s)", dn.Class, dn.Access&c.Missing, dn.Layer, dn.Path, dn.Protected)
			}
			if len(c.Covering) > 0 {
				r := c.Covering[0]
				fmt.Fprintf(b, "; nearest rule (%s) %s: %s", r.Layer, r.Path, r.Access)
			} else if len(c.Denied) == 0 {
				fmt.Fprintf(b, "; no rule covers %s or a directory above it", c.At)
			}
			return
		}
	}
	b.WriteString("allowed: ")
	// One clause per granting rule: "make_reg on /w and write_file on
	// /w/x by Landlock rule (policy) /w: ...".
	type clause struct {
		what []string
		rule *PathRule
	}
	var cls []clause
	for _, c := range d.Checks {
		for _, g := range c.Grants {
			what := fmt.Sprintf("%s on %s", g.Right, c.At)
			if n := len(cls); n > 0 && cls[n-1].rule != nil && *cls[n-1].rule == g.Rule {
				cls[n-1].what = append(cls[n-1].what, what)
				continue
			}
			cls = append(cls, clause{what: []string{what}, rule: &g.Rule})
		}
		if c.Unhandled != 0 {
			cls = append(cls, clause{what: []string{fmt.Sprintf("the ruleset does not handle %s (Landlock ABI %d)", c.Unhandled, d.abi)}})
		}
	}
	parts := make([]string, len(cls))
	for i, c := range cls {
		parts[i] = strings.Join(c.what, " and ")
		if c.rule != nil {
			parts[i] += fmt.Sprintf(" by Landlock rule (%s) %s: %s", c.rule.Layer, c.rule.Path, c.rule.Access)
		}
	}
	b.WriteString(strings.Join(parts, "; "))
}

// decisionJSON is the JSON shape of a Decision: rights as lists of names,
// rules as in the plan's JSON.
type decisionJSON struct {
	Op         Op            `json:"op"`
	Path       string        `json:"path,omitempty"`
	Right      []string      `json:"right,omitempty"`
	Host       string        `json:"host,omitempty"`
	Port       uint16        `json:"port,omitempty"`
	Syscall    string        `json:"syscall,omitempty"`
	Args       []string      `json:"args,omitempty"`
	Arch       string        `json:"arch,omitempty"`
	Allowed    bool          `json:"allowed"`
	Errno      string        `json:"errno,omitempty"`
	Checks     []checkJSON   `json:"checks"`
	Seccomp    *seccompJSON  `json:"seccomp"`
	AboveTable bool          `json:"above_table,omitempty"`
	NetRule    *netRuleJSON  `json:"net_rule"`
	NetHandled bool          `json:"net_handled,omitempty"`
	Gaps       []gapPartJSON `json:"accepted_gaps"`
	Note       string        `json:"note,omitempty"`
	Mount      *mountJSON    `json:"mount,omitempty"`
	NewName    string        `json:"new_name_refused,omitempty"`
	Text       string        `json:"text"`
}

type checkJSON struct {
	Need      []string     `json:"need"`
	At        string       `json:"at"`
	Grants    []grantJSON  `json:"grants"`
	Missing   []string     `json:"missing"`
	Unhandled []string     `json:"unhandled,omitempty"`
	Covering  []ruleJSON   `json:"covering"`
	Denied    []denialJSON `json:"hard_denied"`
}

type grantJSON struct {
	Right []string `json:"right"`
	Rule  ruleJSON `json:"rule"`
}

// MarshalJSON writes the decision for tools (procage explain --backend
// linux --json).
func (d Decision) MarshalJSON() ([]byte, error) {
	a := d.Access
	j := decisionJSON{Op: a.Op, Path: a.Path, Host: a.Host, Port: a.Port, Syscall: a.Syscall,
		Allowed: d.Allowed, Checks: []checkJSON{}, AboveTable: d.AboveTable, NetHandled: d.NetHandled,
		Gaps: []gapPartJSON{}, Note: d.Note, Text: d.String()}
	if a.Op == OpRight {
		j.Right = names(a.Right)
	}
	if a.Op == OpSyscall {
		for _, v := range a.Args {
			j.Args = append(j.Args, "0x"+strconv.FormatUint(v, 16))
		}
	}
	if a.Arch != nil {
		j.Arch = a.Arch.Name
	}
	if !d.Allowed {
		j.Errno = d.Errno.String()
	}
	if d.NewName != nil {
		j.NewName = d.NewName.Name
	}
	for _, c := range d.Checks {
		cj := checkJSON{Need: names(c.Need), At: c.At, Grants: []grantJSON{}, Missing: names(c.Missing), Covering: []ruleJSON{}, Denied: []denialJSON{}}
		if c.Unhandled != 0 {
			cj.Unhandled = names(c.Unhandled)
		}
		for _, g := range c.Grants {
			cj.Grants = append(cj.Grants, grantJSON{Right: names(g.Right), Rule: ruleJSON{Path: g.Rule.Path, Access: names(g.Rule.Access), Layer: g.Rule.Layer, Why: g.Rule.Why}})
		}
		for _, r := range c.Covering {
			cj.Covering = append(cj.Covering, ruleJSON{Path: r.Path, Access: names(r.Access), Layer: r.Layer, Why: r.Why})
		}
		for _, dn := range c.Denied {
			cj.Denied = append(cj.Denied, denialJSON{Class: dn.Class, Protected: dn.Protected, Path: dn.Path, Layer: dn.Layer, Access: names(dn.Access)})
		}
		j.Checks = append(j.Checks, cj)
	}
	if r := d.Seccomp; r != nil {
		var cs []string
		for _, c := range r.Conds {
			cs = append(cs, c.String())
		}
		j.Seccomp = &seccompJSON{Syscall: r.Syscall, If: strings.Join(cs, " && "), Errno: r.Errno.String(), Why: r.Why}
	}
	if d.Mount != nil {
		m := mountJSON(*d.Mount)
		j.Mount = &m
	}
	if d.Net != nil {
		j.NetRule = &netRuleJSON{Port: d.Net.Port, Access: names(d.Net.Access)}
	}
	for _, g := range d.Gaps {
		j.Gaps = append(j.Gaps, gapPartJSON(g))
	}
	return json.Marshal(j)
}

// onWritableMount reports whether p lies in one of a T1 plan's writable
// trees.
func (pl *Plan) onWritableMount(p string) bool {
	for _, m := range pl.Mounts {
		if m.Kind == MountWritable && within(p, m.Path) {
			return true
		}
	}
	return false
}
