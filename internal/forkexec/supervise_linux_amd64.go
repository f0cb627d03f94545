//go:build linux && amd64 && !procage_nosupervisor

package forkexec

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor runs in a forked copy of the caller with one thread:
// like the rest of the child it only makes raw calls on memory prepared
// here, stores integers only, and does not grow its stack.

const (
	supPathMax = 4096 // PATH_MAX, the NUL included
	supExempt  = 8    // mount roots the deny list skips, at most
	oTmpfile   = 0x400000
	// PIDFD_THREAD (O_EXCL): a pidfd of the thread itself (Linux 6.9).
	pidfdThread = unix.O_EXCL
	pageSize    = 4096
)

// The kernel's structs (include/uapi/linux/seccomp.h).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

type seccompAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// Supervisor is a run's new-names supervisor, prepared before fork by
// [NewSupervisor].
//
// The Call [SuperviseCall] builds makes the child fork it, twice, so that
// it is no child of the target (whose program would see an unexpected
// child that never exits) but an orphan its pid namespace's init adopts.
// It inherits the Landlock domain the target holds at that point; the
// target then stacks the policy's own layer on top and installs a seccomp
// filter that turns every system call creating a name into a user
// notification, whose listener it hands over on a socket pair. From then
// on the supervisor performs each such call itself, on the directory it
// resolved by handle, and never lets the target's own call continue: the
// kernel acts on the bytes that were checked (seccomp_unotify(2)).
type Supervisor struct {
	st superState
}

// supIovec is struct iovec with an integer base: the supervisor stores
// integers only (no write barrier in a forked child), and the buffers it
// points into live in the Supervisor, which the parent keeps alive.
type supIovec struct {
	base uintptr
	len  uint64
}

// supName is a path's final component: path[off:off+n], NUL-terminated.
type supName struct{ off, n int }

type superState struct {
	sock, procfd, listener int
	exemptPaths            []*byte
	deny                   []supDeny         // SetDenyList's, prepared
	folds                  []supFold         // SetDenyList's folds
	ignore                 [][2]uint32       // and the code points a comparison skips
	marker, upMarker       [3]*byte          // the DenyMarker names, and ../ each
	exempt                 [supExempt]uint64 // their mount ids, in the supervisor
	nexempt                int
	all                    uint64
	capHdr                 unix.CapUserHeader
	capData                [2]unix.CapUserData

	msg  syscall.Msghdr
	iov  syscall.Iovec
	one  [1]byte
	cbuf [24]byte // CMSG_SPACE(sizeof(int))

	notif    seccompNotif
	resp     seccompResp
	addfd    seccompAddfd
	syncWake uint64

	liov   supIovec // integers only: a pointer stored in the child would need a write barrier
	riov   unix.RemoteIovec
	path   [2][supPathMax + 8]byte
	plen   [2]int
	magic  [2]bool // the path is /proc/<tid>/fd/<n>, spelled so by the supervisor
	rew    [2]bool // the path was spelled again (supFdDir, supRewrite)
	trail  [2]bool // it ended in a slash
	name   [2]supName
	parent [2]int // O_PATH descriptors of the parents, -1: none
	base   [2]int // and of the directories a relative path started from
	tmp    [supPathMax + 64]byte
	status [512]byte
	sa     [128]byte // a bind's address, as the target gave it
	sa2    [112]byte // sockaddr_un: the final component alone
	st     unix.Stat_t
	stx    unix.Statx_t
	fs     unix.Statfs_t
	how    unix.OpenHow
}

// NewSupervisor prepares a supervisor that receives the target's listener
// on sock (a socket above the descriptor shuffle).
func NewSupervisor(sock int) (*Supervisor, error) {
	s := &Supervisor{}
	st := &s.st
	st.sock = sock
	st.all = ^uint64(0)
	st.capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	st.capData[0].Effective, st.capData[0].Permitted = 1<<unix.CAP_SYS_PTRACE, 1<<unix.CAP_SYS_PTRACE
	st.iov.Base = &st.one[0]
	st.iov.SetLen(1)
	st.msg.Iov = &st.iov
	st.msg.Iovlen = 1
	st.msg.Control = &st.cbuf[0]
	st.msg.SetControllen(len(st.cbuf))
	return s, nil
}

// supDeny is a DenyName as the supervisor compares it: lower-case ASCII,
// and for a marker its index.
type supDeny struct {
	lit    string
	class  int
	marker int
}

// supFold is a UTF-8 sequence a case-folding directory folds to the
// lower-case ASCII to.
type supFold struct{ seq, to string }

// SetDenyList gives the supervisor its deny list, which must hold exactly
// three DenyMarker names, the UTF-8 sequences that fold to ASCII letters
// ({sequence, lower-case letters}) and the code points a comparison skips
// (ranges, none ASCII).
func (s *Supervisor) SetDenyList(names []DenyName, folds [][2]string, ignore [][2]rune) error {
	st := &s.st
	st.deny, st.folds, st.ignore = nil, nil, nil
	for _, g := range ignore {
		if g[0] < 0x80 || g[1] < g[0] {
			return fmt.Errorf("forkexec: ignorable range %U-%U", g[0], g[1])
		}
		st.ignore = append(st.ignore, [2]uint32{uint32(g[0]), uint32(g[1])})
	}
	for _, f := range folds {
		if f[0] == "" || f[0][0] < 0x80 || f[1] == "" || strings.ToLower(f[1]) != f[1] {
			return fmt.Errorf("forkexec: fold %q to %q", f[0], f[1])
		}
		st.folds = append(st.folds, supFold{seq: f[0], to: f[1]})
	}
	m := 0
	for _, n := range names {
		if n.Class < DenyAnywhere || n.Class > DenyMarker || n.Name == "" || strings.ContainsAny(n.Name, "/\x00") {
			return fmt.Errorf("forkexec: deny list entry %q, class %d", n.Name, n.Class)
		}
		d := supDeny{lit: strings.ToLower(n.Name), class: n.Class}
		if n.Class == DenyMarker {
			if m == 3 {
				return errors.New("forkexec: deny list with more than three markers")
			}
			var err error
			if st.marker[m], err = cstring("marker", n.Name); err != nil {
				return err
			}
			if st.upMarker[m], err = cstring("marker", "../"+n.Name); err != nil {
				return err
			}
			d.marker = m
			m++
		}
		st.deny = append(st.deny, d)
	}
	if m != 3 {
		return fmt.Errorf("forkexec: deny list with %d markers, want 3", m)
	}
	return nil
}

// SetExempt names the mount roots where the deny list does not apply: the
// run's private temporary space, which nothing outside the run trusts. The
// supervisor looks up their mount ids when it starts, in the run's mount
// namespace, and fails (so does the spawn) if one is missing.
func (s *Supervisor) SetExempt(roots []string) error {
	if len(roots) > supExempt {
		return fmt.Errorf("forkexec: %d exempt mounts, at most %d", len(roots), supExempt)
	}
	s.st.exemptPaths = nil
	for _, p := range roots {
		b, err := cstring("exempt mount", p)
		if err != nil {
			return err
		}
		s.st.exemptPaths = append(s.st.exemptPaths, b)
	}
	return nil
}

var (
	supProc      = []byte("/proc\x00")
	supDot       = []byte(".\x00")
	supSlash     = []byte("/\x00")
	supEmptyPath = []byte("\x00")
)

// superviseStart runs in the target: it forks the supervisor's parent,
// which forks the supervisor and exits, and reaps it. It returns true in
// the supervisor, which the caller must enter with superviseMain (from
// its own frame: the supervisor's nosplit chain is deep).
//
//go:nosplit
//go:norace
func superviseStart(s *Supervisor) (bool, syscall.Errno) {
	var ws int32
	pid, e := rawFork(uintptr(syscall.SIGCHLD))
	if e != 0 {
		return false, e
	}
	if pid == 0 {
		pid, e = rawFork(uintptr(syscall.SIGCHLD))
		if e == 0 && pid == 0 {
			return true, 0
		}
		for {
			sysExit(nil, int(e))
		}
	}
	for {
		_, _, e = syscall.RawSyscall6(syscall.SYS_WAIT4, pid, uintptr(unsafe.Pointer(&ws)), 0, 0, 0, 0)
		if e != syscall.EINTR {
			break
		}
	}
	if e != 0 {
		return false, e
	}
	if ws != 0 {
		return false, syscall.ECHILD
	}
	return false, 0
}

// superviseMain is the supervisor: it never returns. Its own frame is
// small: the nosplit chain below it is deep.
//
//go:nosplit
//go:norace
func superviseMain(sv *Supervisor) {
	s := &sv.st
	if supInit(s) == 0 {
		for supServe(s) == 0 {
		}
	}
	for {
		sysExit(nil, 0)
	}
}

// supInit sets the supervisor up and receives the listener.
//
//go:nosplit
//go:norace
func supInit(s *superState) syscall.Errno {
	var (
		r uintptr
		e syscall.Errno
		i int
	)
	// Its own session (a terminal's signals to the run's group miss it),
	// not dumpable (the run's processes cannot open its /proc files or
	// ptrace it; Landlock already refuses them its outer domain), every
	// signal blocked but SIGKILL.
	syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
	if _, _, e = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		return e
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&s.all)), 0, 8, 0, 0)
	// CAP_SYS_PTRACE alone (Yama's ptrace_scope 1 and 2 want it to read a
	// process it did not start; Landlock keeps it to the run's processes).
	if _, _, e = syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&s.capHdr)), uintptr(unsafe.Pointer(&s.capData[0])), 0); e != 0 {
		return e
	}
	// Keep only the socket: the target's pipes must reach EOF without it.
	if s.sock > 0 {
		syscall.RawSyscall(sysCloseRange, 0, uintptr(s.sock-1), 0)
	}
	syscall.RawSyscall(sysCloseRange, uintptr(s.sock+1), uintptr(^uint32(0)), 0)
	r, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&supProc[0])), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return e
	}
	s.procfd = int(r)
	for i = 0; i < len(s.exemptPaths) && i < supExempt; i++ {
		_, _, e = syscall.RawSyscall6(unix.SYS_STATX, atFDCWD, uintptr(unsafe.Pointer(s.exemptPaths[i])), unix.AT_SYMLINK_NOFOLLOW,
			unix.STATX_MNT_ID, uintptr(unsafe.Pointer(&s.stx)), 0)
		if e != 0 || s.stx.Mask&unix.STATX_MNT_ID == 0 {
			return syscall.ENOENT
		}
		s.exempt[i] = s.stx.Mnt_id
		s.nexempt = i + 1
	}
	for {
		r, _, e = syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(s.sock), uintptr(unsafe.Pointer(&s.msg)), unix.MSG_CMSG_CLOEXEC)
		if e != syscall.EINTR {
			break
		}
	}
	// One SCM_RIGHTS message with one descriptor (cmsghdr: len, level, type).
	if e != 0 || r != 1 || *(*uint64)(unsafe.Pointer(&s.cbuf[0])) != 20 ||
		*(*int32)(unsafe.Pointer(&s.cbuf[8])) != syscall.SOL_SOCKET || *(*int32)(unsafe.Pointer(&s.cbuf[12])) != syscall.SCM_RIGHTS {
		return syscall.EBADMSG
	}
	s.listener = int(*(*int32)(unsafe.Pointer(&s.cbuf[16])))
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(s.sock), 0, 0)
	s.parent[0], s.parent[1], s.base[0], s.base[1] = -1, -1, -1, -1
	// Wake the target on the supervisor's CPU when it answers (Linux 6.6;
	// older kernels refuse the flag, which only saves a wake-up).
	s.syncWake = unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
	syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(s.listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, uintptr(unsafe.Pointer(&s.syncWake)))
	return 0
}

// supServe answers one call; an error ends the supervisor. RECV waits for
// the next call; the supervisor ends with the pid namespace, when the
// target does (pid_namespaces(7)).
//
//go:nosplit
//go:norace
func supServe(s *superState) syscall.Errno {
	s.notif = seccompNotif{}
	_, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(s.listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&s.notif)))
	if e == syscall.EINTR || e == syscall.ENOENT {
		return 0 // ENOENT: the caller died before it was read
	}
	if e != 0 {
		return e
	}
	s.resp = seccompResp{id: s.notif.id}
	e = supHandle(s)
	supClose(s)
	if e == supSent {
		return 0
	}
	if e != 0 {
		s.resp.error = -int32(e)
	}
	syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(s.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&s.resp)))
	return 0
}

// supSent says the answer went with SECCOMP_IOCTL_NOTIF_ADDFD.
const supSent = syscall.Errno(1 << 20)

// The calls the filter sends (linuxsandbox's new-names filter), x86_64.
const (
	nrOpen      = 2
	nrRename    = 82
	nrMkdir     = 83
	nrCreat     = 85
	nrLink      = 86
	nrSymlink   = 88
	nrMknod     = 133
	nrOpenat    = 257
	nrMkdirat   = 258
	nrMknodat   = 259
	nrRenameat  = 264
	nrLinkat    = 265
	nrSymlinkat = 266
	nrRenameat2 = 316
	nrBind      = 49
)

//go:nosplit
//go:norace
func supHandle(s *superState) syscall.Errno {
	a := &s.notif.args
	switch s.notif.nr {
	case nrOpen:
		return supOpen(s, atFDCWD, a[0], a[1], a[2])
	case nrOpenat:
		return supOpen(s, uintptr(int32(a[0])), a[1], a[2], a[3])
	case nrCreat:
		return supOpen(s, atFDCWD, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, a[1])
	case nrMkdir:
		return supMake(s, nrMkdirat, atFDCWD, a[0], a[1], 0)
	case nrMkdirat:
		return supMake(s, nrMkdirat, uintptr(int32(a[0])), a[1], a[2], 0)
	case nrMknod:
		return supMake(s, nrMknodat, atFDCWD, a[0], a[1], a[2])
	case nrMknodat:
		return supMake(s, nrMknodat, uintptr(int32(a[0])), a[1], a[2], a[3])
	case nrSymlink:
		return supSymlink(s, a[0], atFDCWD, a[1])
	case nrSymlinkat:
		return supSymlink(s, a[0], uintptr(int32(a[1])), a[2])
	case nrRename:
		return supRename(s, atFDCWD, a[0], atFDCWD, a[1], 0)
	case nrRenameat:
		return supRename(s, uintptr(int32(a[0])), a[1], uintptr(int32(a[2])), a[3], 0)
	case nrRenameat2:
		return supRename(s, uintptr(int32(a[0])), a[1], uintptr(int32(a[2])), a[3], a[4])
	case nrLink:
		return supLink(s, atFDCWD, a[0], atFDCWD, a[1], 0)
	case nrLinkat:
		return supLink(s, uintptr(int32(a[0])), a[1], uintptr(int32(a[2])), a[3], a[4])
	case nrBind:
		return supBind(s, a[0], a[1], a[2])
	}
	return syscall.ENOSYS
}

// supClose closes the parents and bases a call opened.
//
//go:nosplit
//go:norace
func supClose(s *superState) {
	for i := 0; i < 2; i++ {
		if s.parent[i] >= 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(s.parent[i]), 0, 0)
			s.parent[i] = -1
		}
		if s.base[i] >= 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(s.base[i]), 0, 0)
			s.base[i] = -1
		}
	}
}

// supRead copies the NUL-terminated string at addr in the target into
// path i, a page at a time (a page is mapped whole or not at all).
//
//go:nosplit
//go:norace
func supRead(s *superState, i int, addr uint64) syscall.Errno {
	var n, k, chunk int
	for n < supPathMax {
		chunk = pageSize - int((addr+uint64(n))%pageSize)
		if chunk > supPathMax-n {
			chunk = supPathMax - n
		}
		s.liov = supIovec{base: uintptr(unsafe.Pointer(&s.path[i&1])) + uintptr(n), len: uint64(chunk)}
		s.riov = unix.RemoteIovec{Base: uintptr(addr) + uintptr(n), Len: chunk}
		r, _, e := syscall.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(s.notif.pid), uintptr(unsafe.Pointer(&s.liov)), 1,
			uintptr(unsafe.Pointer(&s.riov)), 1, 0)
		if e != 0 || r == 0 {
			return syscall.EFAULT
		}
		for k = n; k < n+int(r); k++ {
			if s.path[i][k] == 0 {
				s.plen[i] = k
				return 0
			}
		}
		n += int(r)
	}
	return syscall.ENAMETOOLONG
}

// supValid checks that the notification still names a live, blocked
// call, so what was read came from its memory (the pid is not reused).
//
//go:nosplit
//go:norace
func supValid(s *superState) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(s.listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&s.notif.id)))
	return e
}

// supPrefix reports whether path i begins with lit.
//
//go:nosplit
//go:norace
func supPrefix(s *superState, i int, lit string) bool {
	if s.plen[i] < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		if s.path[i][k] != lit[k] {
			return false
		}
	}
	return true
}

// supDigits writes v in decimal at s.tmp[at:] and returns the new end.
//
//go:nosplit
//go:norace
func supDigits(s *superState, at int, v uint64) int {
	var n, k int
	w := v
	for {
		n++
		w /= 10
		if w == 0 {
			break
		}
	}
	for k = n - 1; k >= 0; k-- {
		s.tmp[at+k] = byte('0' + v%10)
		v /= 10
	}
	return at + n
}

// supProcPath writes "<tid>/<lit><fd>" (fd >= 0) or "<tid>/<lit>" into
// s.tmp, NUL-terminated, for openat on the /proc descriptor.
//
//go:nosplit
//go:norace
func supProcPath(s *superState, lit string, fd int64) {
	n := supDigits(s, 0, uint64(s.notif.pid))
	s.tmp[n] = '/'
	n++
	for k := 0; k < len(lit); k++ {
		s.tmp[n] = lit[k]
		n++
	}
	if fd >= 0 {
		n = supDigits(s, n, uint64(fd))
	}
	s.tmp[n] = 0
}

// supRewrite spells the target's own names for itself (/proc/self,
// /proc/thread-self, /dev/fd, /dev/std*) with its thread id: they would
// name the supervisor otherwise. magic[i] is set for /proc/<tid>/fd/<n>.
//
//go:nosplit
//go:norace
func supRewrite(s *superState, i int) syscall.Errno {
	var skip, n, k int
	var fd string
	switch {
	case supPrefix(s, i, "/proc/self/"):
		skip = len("/proc/self/")
	case supPrefix(s, i, "/proc/thread-self/"):
		skip = len("/proc/thread-self/")
	case supPrefix(s, i, "/dev/fd/"):
		skip, fd = len("/dev/fd/"), "fd/"
	case s.plen[i] == len("/dev/stdin") && supPrefix(s, i, "/dev/stdin"):
		skip, fd = s.plen[i], "fd/0"
	case s.plen[i] == len("/dev/stdout") && supPrefix(s, i, "/dev/stdout"):
		skip, fd = s.plen[i], "fd/1"
	case s.plen[i] == len("/dev/stderr") && supPrefix(s, i, "/dev/stderr"):
		skip, fd = s.plen[i], "fd/2"
	default:
		return 0
	}
	s.tmp[0], s.tmp[1], s.tmp[2], s.tmp[3], s.tmp[4], s.tmp[5] = '/', 'p', 'r', 'o', 'c', '/'
	n = supDigits(s, 6, uint64(s.notif.pid))
	s.tmp[n] = '/'
	n++
	for k = 0; k < len(fd); k++ {
		s.tmp[n] = fd[k]
		n++
	}
	for k = skip; k < s.plen[i] && n < supPathMax-1; k++ {
		s.tmp[n] = s.path[i][k]
		n++
	}
	if k < s.plen[i] {
		return syscall.ENAMETOOLONG
	}
	for k = 0; k < n; k++ {
		s.path[i][k] = s.tmp[k]
	}
	s.path[i][n] = 0
	s.plen[i] = n
	s.rew[i&1] = true
	// /proc/<tid>/fd/<digits> and nothing after.
	k = 6
	for k < n && s.path[i][k] != '/' {
		k++
	}
	if n-k < 5 || s.path[i][k+1] != 'f' || s.path[i][k+2] != 'd' || s.path[i][k+3] != '/' {
		return 0
	}
	for k += 4; k < n; k++ {
		if s.path[i][k] < '0' || s.path[i][k] > '9' {
			return 0
		}
	}
	s.magic[i] = true
	return 0
}

// supFdDir turns a path through one of the target's own descriptors
// (/dev/fd/N/rest, /proc/self/fd/N/rest, /proc/thread-self/fd/N/rest)
// into rest relative to N, as openat(N, rest) would have it; it returns
// N, or -1 for any other path.
//
//go:nosplit
//go:norace
func supFdDir(s *superState, i int) int64 {
	var k, j int
	var fd int64
	switch {
	case supPrefix(s, i, "/dev/fd/"):
		k = len("/dev/fd/")
	case supPrefix(s, i, "/proc/self/fd/"):
		k = len("/proc/self/fd/")
	case supPrefix(s, i, "/proc/thread-self/fd/"):
		k = len("/proc/thread-self/fd/")
	default:
		return -1
	}
	for j = k; j < s.plen[i] && s.path[i][j] >= '0' && s.path[i][j] <= '9' && j-k < 9; j++ {
		fd = fd*10 + int64(s.path[i][j]-'0')
	}
	if j == k || j >= s.plen[i] || s.path[i][j] != '/' {
		return -1
	}
	for j++; j < s.plen[i] && s.path[i][j] == '/'; j++ {
	}
	for k = 0; j+k <= s.plen[i]; k++ {
		s.path[i][k] = s.path[i][j+k]
	}
	s.plen[i] -= j
	if s.plen[i] == 0 {
		s.path[i][0], s.path[i][1] = '.', 0
		s.plen[i] = 1
	}
	return fd
}

// supSplit spells path i for the supervisor (supRewrite), strips its
// trailing slashes and splits off its final component; it returns the
// parent's spelling.
//
//go:nosplit
//go:norace
func supSplit(s *superState, i int) (*byte, syscall.Errno) {
	var j, n int
	s.magic[i], s.trail[i] = false, false
	if e := supRewrite(s, i); e != 0 {
		return nil, e
	}
	n = s.plen[i]
	for n > 1 && s.path[i][n-1] == '/' {
		n--
		s.trail[i] = true
	}
	s.path[i][n] = 0
	j = n - 1
	for j >= 0 && s.path[i][j] != '/' {
		j--
	}
	switch {
	case n == 1 && s.path[i][0] == '/':
		s.name[i] = supName{off: 0, n: 0}
		return &supSlash[0], 0
	case j < 0:
		s.name[i] = supName{off: 0, n: n}
		return &supDot[0], 0
	case j == 0:
		s.name[i] = supName{off: 1, n: n - 1}
		return &supSlash[0], 0
	}
	s.path[i][j] = 0
	s.name[i] = supName{off: j + 1, n: n - j - 1}
	return &s.path[i][0], 0
}

// supResolve opens path i's parent directory (relative to dirfd in the
// target) by handle into parent[i] and finds its final component.
//
//go:nosplit
//go:norace
func supResolve(s *superState, i int, dirfd uintptr) syscall.Errno {
	var (
		base = atFDCWD
		r    uintptr
		e    syscall.Errno
	)
	if s.plen[i] == 0 {
		return syscall.ENOENT
	}
	s.rew[i&1] = false
	if fd := supFdDir(s, i); fd >= 0 {
		dirfd, s.rew[i&1] = uintptr(fd), true
	}
	ps, e := supSplit(s, i)
	if e != 0 {
		return e
	}
	if s.path[i][0] != '/' {
		if dirfd == atFDCWD {
			supProcPath(s, "cwd", -1)
		} else {
			if int32(dirfd) < 0 {
				return syscall.EBADF
			}
			supProcPath(s, "fd/", int64(int32(dirfd)))
		}
		r, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.procfd), uintptr(unsafe.Pointer(&s.tmp[0])), unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
		if e != 0 {
			if e == syscall.ENOENT && dirfd != atFDCWD {
				return syscall.EBADF
			}
			return e
		}
		base = r
	}
	e = supParent(s, i, base, ps)
	if base != atFDCWD {
		// Kept until the call is answered: bind resolves its address again
		// from this very directory, never from /proc/TID/cwd anew (another
		// thread may chdir meanwhile).
		s.base[i&1] = int(base)
	}
	return e
}

// supParent opens ps from base into parent[i]. The walk refuses magic
// links (ELOOP): a planted /proc/self/... link would lead into the
// supervisor's own descriptors.
//
//go:nosplit
//go:norace
func supParent(s *superState, i int, base uintptr, ps *byte) syscall.Errno {
	s.how = unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	r, _, e := syscall.RawSyscall6(unix.SYS_OPENAT2, base, uintptr(unsafe.Pointer(ps)), uintptr(unsafe.Pointer(&s.how)), unsafe.Sizeof(s.how), 0, 0)
	if e != 0 {
		return e
	}
	s.parent[i&1] = int(r) // i&1: no bounds check, whose panic path the nosplit stack has no room for
	return 0
}

// supNamePtr is path i's final component as a C string.
//
//go:nosplit
//go:norace
func supNamePtr(s *superState, i int) uintptr {
	return uintptr(unsafe.Pointer(supNameAt(s, i)))
}

// supNameAt is path i's final component (unchecked indexing: the name lies
// within the path).
//
//go:nosplit
//go:norace
func supNameAt(s *superState, i int) *byte {
	return (*byte)(unsafe.Add(unsafe.Pointer(&s.path[i&1]), s.name[i&1].off))
}

// supSpecial reports a final component that names no new entry: "", "."
// or "..".
//
//go:nosplit
//go:norace
func supSpecial(s *superState, i int) bool {
	nm := s.name[i]
	return nm.n == 0 || nm.n == 1 && s.path[i][nm.off] == '.' ||
		nm.n == 2 && s.path[i][nm.off] == '.' && s.path[i][nm.off+1] == '.'
}

// supIs compares path i's final component with lit (lower-case ASCII)
// as a case-folding directory would (ext4, f2fs casefold; vfat): ASCII
// case, and the two non-ASCII letters whose folding is ASCII, KELVIN SIGN
// (k) and LATIN SMALL LETTER LONG S (s).
//
//go:nosplit
//go:norace
func supIs(s *superState, i int, lit string) bool {
	var (
		c    byte
		f, m int
		r    uint32
		w    int
	)
	k, end := s.name[i&1].off, s.name[i&1].off+s.name[i&1].n
	j := 0
	folds, ign := s.folds, s.ignore
	for k < end {
		c = supAt(s, i, k)
		if c < 0x80 {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if j < len(lit) && c == supStrAt(lit, j) {
				k, j = k+1, j+1
				continue
			}
			// vfat strips trailing dots and spaces (vfat_striptail_len).
			for j == len(lit) && k < end && (supAt(s, i, k) == '.' || supAt(s, i, k) == ' ') {
				k++
			}
			return k == end && j == len(lit)
		}
		// A code point a case-folding directory folds to ASCII letters,
		if f = supFoldAt(s, i, k, end, lit, j); f >= 0 && f < len(folds) {
			k, j = k+len(folds[f].seq), j+len(folds[f].to)
			continue
		}
		// or drops (ignorable, before Linux 6.12).
		r, w = supRune(s, i, k, end)
		for m = 0; m < len(ign); m++ {
			if ign[m][0] <= r && r <= ign[m][1] {
				break
			}
		}
		if w == 0 || m == len(ign) {
			return false
		}
		k += w
	}
	return j == len(lit)
}

// supAt is byte k of path i, unchecked (name lies within path): a bounds
// check's panic path needs more nosplit stack than the supervisor has.
//
//go:nosplit
//go:norace
func supAt(s *superState, i, k int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(&s.path[i&1]), k))
}

// supFoldAt returns the fold whose sequence is at k in path i and whose
// letters are lit's at j, or -1.
//
//go:nosplit
//go:norace
func supFoldAt(s *superState, i, k, end int, lit string, j int) int {
	var f, m, q int
	folds := s.folds
	for f = 0; f < len(folds); f++ {
		fs := &folds[f]
		if k+len(fs.seq) > end || j+len(fs.to) > len(lit) {
			continue
		}
		for m = 0; m < len(fs.seq) && supAt(s, i, k+m) == supStrAt(fs.seq, m); m++ {
		}
		for q = 0; q < len(fs.to) && supStrAt(lit, j+q) == supStrAt(fs.to, q); q++ {
		}
		if m == len(fs.seq) && q == len(fs.to) {
			return f
		}
	}
	return -1
}

// supStrAt is byte k of str, unchecked (as supAt).
//
//go:nosplit
//go:norace
func supStrAt(str string, k int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(str)), k))
}

// supRune decodes the UTF-8 sequence at k in path i: its code point and
// length, or length 0 if it is not one.
//
//go:nosplit
//go:norace
func supRune(s *superState, i, k, end int) (uint32, int) {
	var n, m int
	c := supAt(s, i, k)
	r := uint32(0)
	switch {
	case c&0xe0 == 0xc0:
		n, r = 2, uint32(c&0x1f)
	case c&0xf0 == 0xe0:
		n, r = 3, uint32(c&0x0f)
	case c&0xf8 == 0xf0:
		n, r = 4, uint32(c&0x07)
	default:
		return 0, 0
	}
	if k+n > end {
		return 0, 0
	}
	for m = 1; m < n; m++ {
		c = supAt(s, i, k+m)
		if c&0xc0 != 0x80 {
			return 0, 0
		}
		r = r<<6 | uint32(c&0x3f)
	}
	return r, n
}

// supExists reports whether name exists in directory fd (not following a
// final link).
//
//go:nosplit
//go:norace
//go:noinline
func supExists(s *superState, fd int, name *byte) bool {
	_, _, e := syscall.RawSyscall6(syscall.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(&s.st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	return e == 0
}

// supVet is the deny list for a new name: path i's final component in
// parent[i]. EPERM for .git and commondir anywhere; hooks, config,
// config.worktree and info beside a HEAD, objects or refs (a git
// directory: info/ renamed in whole would bring its attributes);
// attributes in a directory whose parent holds one of them (info/ of a
// git directory); and the HEAD, objects or refs that would complete a
// directory git takes for a repository (git's setup.c, is_git_directory). The run's private
// temporary mounts are exempt: nothing outside the run trusts them.
//
//go:nosplit
//go:norace
func supVet(s *superState, i int) syscall.Errno {
	var (
		e syscall.Errno
		k int
		p = s.parent[i&1]
	)
	if s.nexempt > 0 {
		_, _, e = syscall.RawSyscall6(unix.SYS_STATX, uintptr(p), uintptr(unsafe.Pointer(&supEmptyPath[0])), unix.AT_EMPTY_PATH,
			unix.STATX_MNT_ID, uintptr(unsafe.Pointer(&s.stx)), 0)
		if e != 0 {
			return e
		}
		for k = 0; k < s.nexempt && k < supExempt; k++ {
			if s.stx.Mnt_id == s.exempt[k] {
				return 0
			}
		}
	}
	k = supClass(s, i)
	if k < 0 {
		return 0
	}
	switch s.deny[k].class {
	case DenyAnywhere:
		return syscall.EPERM
	case DenyInGitDir:
		// A git directory is known by any of its three names: one the run
		// removed (rm .git/HEAD) leaves the other two.
		if supExists(s, p, s.marker[0]) || supExists(s, p, s.marker[1]) || supExists(s, p, s.marker[2]) {
			return syscall.EPERM
		}
	case DenyInGitInfo:
		if supExists(s, p, s.upMarker[0]) || supExists(s, p, s.upMarker[1]) || supExists(s, p, s.upMarker[2]) {
			return syscall.EPERM
		}
	case DenyMarker:
		m := s.deny[k].marker
		return supCompletes(s, i, s.marker[(m+1)%3], s.marker[(m+2)%3])
	}
	return 0
}

// supCompletes refuses path i's final component if, with a and b
// present beside it, it would complete a repository.
//
//go:nosplit
//go:norace
func supCompletes(s *superState, i int, a, b *byte) syscall.Errno {
	p := s.parent[i&1]
	if supExists(s, p, a) && supExists(s, p, b) && !supExists(s, p, supNameAt(s, i)) {
		return syscall.EPERM
	}
	return 0
}

// supClass returns the deny-list entry path i's final component matches,
// or -1.
//
//go:nosplit
//go:norace
func supClass(s *superState, i int) int {
	for k := 0; k < len(s.deny); k++ {
		if supIs(s, i, s.deny[k].lit) {
			return k
		}
	}
	return -1
}

// supStatus reads the calling thread's /proc/<tid>/status into s.status
// (Umask and Tgid are among its first lines) and returns its length.
//
//go:nosplit
//go:norace
func supStatus(s *superState) (int, syscall.Errno) {
	supProcPath(s, "status", -1)
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.procfd), uintptr(unsafe.Pointer(&s.tmp[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, syscall.EPERM
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.status[0])), uintptr(len(s.status)))
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if e != 0 {
		return 0, syscall.EPERM
	}
	return int(r), 0
}

// supField parses the number after "key:" at the start of a line of the
// status read (n bytes) in base (8 or 10).
//
//go:nosplit
//go:norace
func supField(s *superState, n int, key string, base uintptr) (uintptr, bool) {
	var (
		k, j int
		v    uintptr
	)
	for k = 0; k+len(key)+1 < n; k++ {
		if k > 0 && s.status[k-1] != '\n' {
			continue
		}
		for j = 0; j < len(key) && s.status[k+j] == key[j]; j++ {
		}
		if j < len(key) || s.status[k+j] != ':' {
			continue
		}
		for k += j + 1; k < n && (s.status[k] == '\t' || s.status[k] == ' '); k++ {
		}
		if k == n || s.status[k] < '0' || s.status[k] >= '0'+byte(base) {
			return 0, false
		}
		for ; k < n && s.status[k] >= '0' && s.status[k] < '0'+byte(base); k++ {
			v = v*base + uintptr(s.status[k]-'0')
		}
		return v, true
	}
	return 0, false
}

// supUmask sets the supervisor's umask to the calling thread's
// (/proc/<tid>/status, "Umask:", Linux 4.7).
//
//go:nosplit
//go:norace
func supUmask(s *superState) syscall.Errno {
	n, e := supStatus(s)
	if e != 0 {
		return e
	}
	m, ok := supField(s, n, "Umask", 8)
	if !ok {
		return syscall.EPERM
	}
	syscall.RawSyscall(syscall.SYS_UMASK, m&0o777, 0, 0)
	return 0
}

// supSocket copies the calling thread's socket sockfd into the supervisor
// (pidfd_getfd, Linux 5.6, on a pidfd of its thread group: a pidfd names
// a thread group's leader before Linux 6.9).
//
//go:nosplit
//go:norace
func supSocket(s *superState, sockfd uint64) (uintptr, syscall.Errno) {
	// The calling thread's own table (PIDFD_THREAD, Linux 6.9: a thread
	// may have its own, without CLONE_FILES), else its thread group's.
	var (
		n    int
		tgid uintptr
		ok   bool
	)
	pfd, _, e := syscall.RawSyscall(unix.SYS_PIDFD_OPEN, uintptr(s.notif.pid), pidfdThread, 0)
	if e == syscall.EINVAL {
		if n, e = supStatus(s); e != 0 {
			return 0, e
		}
		if tgid, ok = supField(s, n, "Tgid", 10); !ok {
			return 0, syscall.EPERM
		}
		pfd, _, e = syscall.RawSyscall(unix.SYS_PIDFD_OPEN, tgid, 0, 0)
	}
	if e != 0 {
		return 0, e
	}
	fd, _, e := syscall.RawSyscall(unix.SYS_PIDFD_GETFD, pfd, uintptr(int32(sockfd)), 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, pfd, 0, 0)
	if e == syscall.ESRCH {
		e = syscall.EBADF
	}
	return fd, e
}

// supBind is bind: a Unix socket's path is a new name, created from the
// parent it resolves to (the supervisor enters it and binds the final
// component); any other address is bound as given. Either way on the
// target's own socket, which pidfd_getfd shares.
//
//go:nosplit
//go:norace
func supBind(s *superState, sockfd, addr, alen uint64) syscall.Errno {
	var (
		fd  uintptr
		e   syscall.Errno
		k   int
		n   = int(alen)
		fam uint16
	)
	if n < 2 || n > len(s.sa) {
		return syscall.EINVAL
	}
	s.liov = supIovec{base: uintptr(unsafe.Pointer(&s.sa[0])), len: uint64(n)}
	s.riov = unix.RemoteIovec{Base: uintptr(addr), Len: n}
	r, _, e := syscall.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(s.notif.pid), uintptr(unsafe.Pointer(&s.liov)), 1,
		uintptr(unsafe.Pointer(&s.riov)), 1, 0)
	if e != 0 || int(r) != n {
		return syscall.EFAULT
	}
	fam = uint16(s.sa[0]) | uint16(s.sa[1])<<8
	if fam == unix.AF_UNIX && n > int(unsafe.Sizeof(unix.RawSockaddrUnix{})) {
		return syscall.EINVAL
	}
	if fam == unix.AF_UNIX && n > 2 && s.sa[2] != 0 {
		// A path: sun_path, NUL-terminated or filling the address.
		for k = 2; k < n && s.sa[k] != 0; k++ {
			s.path[0][k-2] = s.sa[k]
		}
		s.path[0][k-2] = 0
		s.plen[0] = k - 2
		if e = supResolve(s, 0, atFDCWD); e == 0 {
			e = supValid(s)
		}
		if e == 0 && s.trail[0] {
			e = syscall.EINVAL
		}
		if e == 0 {
			e = supNew(s, 0)
		}
		if e == 0 && s.name[0].n > len(s.sa2)-3 {
			e = syscall.ENAMETOOLONG
		}
		if e == 0 {
			e = supUmask(s)
		}
		if e != 0 {
			return e
		}
		if fd, e = supSocket(s, sockfd); e != 0 {
			return e
		}
		if s.rew[0] {
			// A spelling rewritten for the supervisor (/proc/self, /dev/fd):
			// the final component from the parent it resolved to.
			s.sa2[0], s.sa2[1] = byte(unix.AF_UNIX), 0
			for k = 0; k < s.name[0].n; k++ {
				s.sa2[2+k] = s.path[0][s.name[0].off+k]
			}
			s.sa2[2+k] = 0
			if _, _, e = syscall.RawSyscall(syscall.SYS_FCHDIR, uintptr(s.parent[0]), 0, 0); e == 0 {
				_, _, e = syscall.RawSyscall(syscall.SYS_BIND, fd, uintptr(unsafe.Pointer(&s.sa2[0])), uintptr(3+k))
			}
		} else {
			// The address as given, from the working directory the check
			// started from (its handle, not /proc/TID/cwd again: another
			// thread may chdir meanwhile), so the socket's name
			// (getsockname) is the target's: the kernel resolves it again,
			// to the parent vetted, since every name a run creates
			// meanwhile waits for this supervisor.
			if s.base[0] >= 0 {
				_, _, e = syscall.RawSyscall(syscall.SYS_FCHDIR, uintptr(s.base[0]), 0, 0)
			} else if s.path[0][0] != '/' {
				e = syscall.EBADF // a relative address always has its base
			}
			if e == 0 {
				_, _, e = syscall.RawSyscall(syscall.SYS_BIND, fd, uintptr(unsafe.Pointer(&s.sa[0])), uintptr(n))
			}
			// Defence in depth: the socket must be the name vetted.
			if e == 0 && !supExists(s, s.parent[0], supNameAt(s, 0)) {
				e = syscall.EIO
			}
		}
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		return e
	}
	if e = supValid(s); e != 0 {
		return e
	}
	if fd, e = supSocket(s, sockfd); e != 0 {
		return e
	}
	_, _, e = syscall.RawSyscall(syscall.SYS_BIND, fd, uintptr(unsafe.Pointer(&s.sa[0])), uintptr(n))
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	return e
}

// supOne reads path 0 at addr, resolves it from dirfd and checks that the
// call is still live.
//
//go:nosplit
//go:norace
func supOne(s *superState, addr uint64, dirfd uintptr) syscall.Errno {
	e := supRead(s, 0, addr)
	if e == 0 {
		e = supResolve(s, 0, dirfd)
	}
	if e == 0 {
		e = supValid(s)
	}
	return e
}

// supTwo is supOne for an old and a new path (rename, link); the old one
// is left unresolved if resolveOld is false (linkat's AT_EMPTY_PATH).
//
//go:nosplit
//go:norace
func supTwo(s *superState, old uint64, odir uintptr, new uint64, ndir uintptr, resolveOld bool) syscall.Errno {
	e := supRead(s, 0, old)
	if e == 0 {
		e = supRead(s, 1, new)
	}
	if e == 0 && resolveOld {
		e = supResolve(s, 0, odir)
	}
	if e == 0 {
		e = supResolve(s, 1, ndir)
	}
	if e == 0 {
		e = supValid(s)
	}
	return e
}

// supNew vets path i's final component as a new name: "", "." and ".."
// exist (EEXIST), the rest goes through the deny list.
//
//go:nosplit
//go:norace
func supNew(s *superState, i int) syscall.Errno {
	if supSpecial(s, i) {
		return syscall.EEXIST
	}
	return supVet(s, i)
}

// supMake is mkdir(at) and mknod(at).
//
//go:nosplit
//go:norace
func supMake(s *superState, nr uintptr, dirfd uintptr, path, mode, dev uint64) syscall.Errno {
	e := supOne(s, path, dirfd)
	if e == 0 && s.trail[0] && nr != nrMkdirat {
		e = syscall.ENOENT // only a directory's name may end in a slash
	}
	if e == 0 {
		e = supNew(s, 0)
	}
	if e != 0 {
		return e
	}
	if e = supUmask(s); e != 0 {
		return e
	}
	if nr == nrMkdirat {
		_, _, e = syscall.RawSyscall(syscall.SYS_MKDIRAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(mode))
	} else {
		_, _, e = syscall.RawSyscall6(syscall.SYS_MKNODAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(mode), uintptr(dev), 0, 0)
	}
	return e
}

// supSymlink is symlink(at): path 0 is the link's text, never resolved.
//
//go:nosplit
//go:norace
func supSymlink(s *superState, text uint64, dirfd uintptr, path uint64) syscall.Errno {
	e := supTwo(s, text, 0, path, dirfd, false)
	if e == 0 && (s.plen[0] == 0 || s.trail[1]) {
		e = syscall.ENOENT
	}
	if e == 0 {
		e = supNew(s, 1)
	}
	if e != 0 {
		return e
	}
	_, _, e = syscall.RawSyscall(syscall.SYS_SYMLINKAT, uintptr(unsafe.Pointer(&s.path[0][0])), uintptr(s.parent[1]), supNamePtr(s, 1))
	return e
}

// supRename is rename, renameat and renameat2: the new name is vetted,
// and with RENAME_EXCHANGE the old one too (it then names what the new
// one did).
//
//go:nosplit
//go:norace
func supRename(s *superState, odir uintptr, old uint64, ndir uintptr, new uint64, flags uint64) syscall.Errno {
	e := supTwo(s, old, odir, new, ndir, true)
	if e == 0 && (s.trail[0] || s.trail[1]) {
		// A name ending in a slash must be a directory's.
		_, _, e = syscall.RawSyscall6(syscall.SYS_NEWFSTATAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(unsafe.Pointer(&s.st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if e == 0 && s.st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			e = syscall.ENOTDIR
		}
	}
	if e != 0 {
		return e
	}
	if supSpecial(s, 0) || supSpecial(s, 1) {
		return syscall.EBUSY
	}
	if e = supVet(s, 1); e != 0 {
		return e
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if e = supVet(s, 0); e != 0 {
			return e
		}
	}
	_, _, e = syscall.RawSyscall6(unix.SYS_RENAMEAT2, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(s.parent[1]), supNamePtr(s, 1), uintptr(flags), 0)
	return e
}

// supLink is link and linkat. The old file is opened by handle (O_PATH;
// its final link followed only with AT_SYMLINK_FOLLOW, and a magic link
// only as the supervisor spelled it) and linked through the supervisor's
// own /proc/self/fd entry, so the inode that was opened is the one linked.
//
//go:nosplit
//go:norace
func supLink(s *superState, odir uintptr, old uint64, ndir uintptr, new uint64, flags uint64) syscall.Errno {
	var (
		fd uintptr
		e  syscall.Errno
	)
	if flags&^uint64(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return syscall.EINVAL
	}
	// AT_EMPTY_PATH with an empty old path: the target's descriptor itself.
	e = supTwo(s, old, odir, new, ndir, true)
	if e == syscall.ENOENT && flags&unix.AT_EMPTY_PATH != 0 && s.plen[0] == 0 {
		e = supTwo(s, old, odir, new, ndir, false)
	}
	if e == 0 && s.trail[1] {
		e = syscall.ENOENT
	}
	if e == 0 {
		e = supNew(s, 1)
	}
	if e != 0 {
		return e
	}
	if s.parent[0] < 0 {
		// AT_EMPTY_PATH: the target's descriptor itself.
		if int32(odir) < 0 {
			return syscall.ENOENT
		}
		supProcPath(s, "fd/", int64(int32(odir)))
		fd, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.procfd), uintptr(unsafe.Pointer(&s.tmp[0])), unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
	} else {
		if supSpecial(s, 0) {
			return syscall.EPERM
		}
		s.how = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.AT_SYMLINK_FOLLOW == 0 {
			s.how.Flags |= unix.O_NOFOLLOW
		}
		if s.magic[0] {
			s.how.Resolve = 0
		}
		fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT2, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(unsafe.Pointer(&s.how)), unsafe.Sizeof(s.how), 0, 0)
	}
	if e != 0 {
		return e
	}
	supSelfFD(s, int(fd))
	_, _, e = syscall.RawSyscall6(syscall.SYS_LINKAT, uintptr(s.procfd), uintptr(unsafe.Pointer(&s.tmp[0])), uintptr(s.parent[1]), supNamePtr(s, 1), unix.AT_SYMLINK_FOLLOW, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	return e
}

// supSelfFD writes "self/fd/<fd>" into s.tmp.
//
//go:nosplit
//go:norace
func supSelfFD(s *superState, fd int) {
	const lit = "self/fd/"
	for k := 0; k < len(lit); k++ {
		s.tmp[k] = lit[k]
	}
	s.tmp[supDigits(s, len(lit), uint64(fd))] = 0
}

// supOpen is open, openat and creat with O_CREAT. An existing name is
// opened as it is (O_NOFOLLOW; an existing FIFO without waiting for its
// other end); a final symlink is followed by handle, and if it dangles,
// its text is resolved from its directory and that name created; a new
// name is vetted and created with O_EXCL. The descriptor goes to the
// target with SECCOMP_IOCTL_NOTIF_ADDFD.
//
//go:nosplit
//go:norace
func supOpen(s *superState, dirfd uintptr, path, flags, mode uint64) syscall.Errno {
	var (
		fd     uintptr
		r      uintptr
		e      syscall.Errno
		tries  int
		fifo   bool
		fl     uint64
		follow = 0
		// created: this call made the file, which must go again if the
		// target cannot take its descriptor (EMFILE), as the kernel
		// would not have made it
		created bool
	)
	if flags&unix.O_CREAT != 0 && flags&oTmpfile == oTmpfile {
		return syscall.EINVAL
	}
	if flags&unix.O_PATH != 0 {
		flags &^= unix.O_CREAT // O_PATH ignores O_CREAT (build_open_flags)
	}
	if e = supOne(s, path, dirfd); e != 0 {
		return e
	}
	if supSpecial(s, 0) || s.trail[0] && flags&unix.O_CREAT != 0 {
		return syscall.EISDIR
	}
	for tries = 0; tries < 16; tries++ {
		_, _, e = syscall.RawSyscall6(syscall.SYS_NEWFSTATAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(unsafe.Pointer(&s.st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if e == syscall.ENOENT && flags&unix.O_CREAT != 0 {
			if e = supVet(s, 0); e != 0 {
				return e
			}
			if e = supUmask(s); e != 0 {
				return e
			}
			fd, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.parent[0]), supNamePtr(s, 0),
				uintptr(flags|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY), uintptr(mode), 0, 0)
			if e == syscall.EEXIST && flags&unix.O_EXCL == 0 {
				continue // created meanwhile: open it as it is
			}
			if e != 0 {
				return e
			}
			created = true
			break
		}
		if e != 0 {
			return e
		}
		if flags&unix.O_EXCL != 0 && flags&unix.O_CREAT != 0 {
			return syscall.EEXIST
		}
		if s.st.Mode&syscall.S_IFMT == syscall.S_IFLNK && flags&unix.O_NOFOLLOW == 0 {
			// Nonblocking too: the link may lead to a FIFO or a device.
			s.how = unix.OpenHow{Flags: (flags &^ unix.O_CREAT) | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK, Resolve: unix.RESOLVE_NO_MAGICLINKS}
			if s.magic[0] {
				s.how.Resolve = 0
			}
			fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT2, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(unsafe.Pointer(&s.how)), unsafe.Sizeof(s.how), 0, 0)
			if e != syscall.ENOENT || flags&unix.O_CREAT == 0 || s.magic[0] {
				if e != 0 {
					return e
				}
				if _, _, e = syscall.RawSyscall(syscall.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&s.st)), 0); e != 0 ||
					s.st.Mode&syscall.S_IFMT == syscall.S_IFDIR && flags&unix.O_CREAT != 0 {
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
					if e != 0 {
						return e
					}
					return supDirCreat(flags)
				}
				if flags&unix.O_NONBLOCK == 0 {
					syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, uintptr(flags))
				}
				break
			}
			// A dangling link: its text, resolved from its directory,
			// names what the kernel would create.
			if follow++; follow > 8 {
				return syscall.ELOOP
			}
			r, _, e = syscall.RawSyscall6(syscall.SYS_READLINKAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(unsafe.Pointer(&s.path[1][0])), supPathMax-1, 0, 0)
			if e != 0 {
				return e
			}
			s.path[1][r] = 0
			for k := uintptr(0); k <= r; k++ {
				s.path[0][k] = s.path[1][k]
			}
			s.plen[0] = int(r)
			e = supRelink(s)
			if e != 0 {
				return e
			}
			if supSpecial(s, 0) || s.trail[0] {
				return syscall.EISDIR
			}
			continue
		}
		if s.st.Mode&syscall.S_IFMT == syscall.S_IFDIR && flags&unix.O_CREAT != 0 {
			return supDirCreat(flags)
		}
		// A FIFO, or a device, is opened without waiting for its other
		// end or its carrier: the supervisor serves every thread of the run.
		fifo = s.st.Mode&syscall.S_IFMT != syscall.S_IFREG && s.st.Mode&syscall.S_IFMT != syscall.S_IFDIR
		fl = (flags &^ unix.O_CREAT) | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY
		if fifo {
			fl |= unix.O_NONBLOCK
		}
		fd, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.parent[0]), supNamePtr(s, 0), uintptr(fl), 0, 0, 0)
		if e == syscall.ELOOP && flags&unix.O_NOFOLLOW == 0 {
			continue // a link swapped in: look again
		}
		if e != 0 {
			return e
		}
		if fifo && flags&unix.O_NONBLOCK == 0 {
			syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, uintptr(flags&^unix.O_NONBLOCK))
		}
		break
	}
	if tries == 16 {
		return syscall.ELOOP
	}
	// Never a /proc file: the supervisor's layer grants /proc where the
	// target's may not, and a link to /proc/self/mem (self is the
	// supervisor, which may always open its own) would hand the target
	// the supervisor's memory.
	_, _, e = syscall.RawSyscall(syscall.SYS_FSTATFS, fd, uintptr(unsafe.Pointer(&s.fs)), 0)
	if e != 0 || s.fs.Type == unix.PROC_SUPER_MAGIC {
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		return syscall.EACCES
	}
	s.addfd = seccompAddfd{id: s.notif.id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(fd)}
	if flags&unix.O_CLOEXEC != 0 {
		s.addfd.newfdFlags = unix.O_CLOEXEC
	}
	_, _, e = syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(s.listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&s.addfd)))
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if e != 0 {
		// EMFILE in the target, say; ENOENT: it is gone. (An O_TRUNC of an
		// existing file is not undone.)
		if created {
			syscall.RawSyscall(syscall.SYS_UNLINKAT, uintptr(s.parent[0]), supNamePtr(s, 0), 0)
		}
		return e
	}
	return supSent
}

// supDirCreat is what O_CREAT of an existing directory answers: EINVAL
// with O_DIRECTORY (Linux 6.4), else EISDIR (open(2)).
//
//go:nosplit
//go:norace
func supDirCreat(flags uint64) syscall.Errno {
	if flags&unix.O_DIRECTORY != 0 {
		return syscall.EINVAL
	}
	return syscall.EISDIR
}

// supRelink resolves path 0 (a dangling link's text) from the link's own
// directory, parent[0], which it replaces.
//
//go:nosplit
//go:norace
func supRelink(s *superState) syscall.Errno {
	old := uintptr(s.parent[0])
	s.parent[0] = -1
	if s.plen[0] == 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, old, 0, 0)
		return syscall.ENOENT
	}
	ps, e := supSplit(s, 0)
	if e != 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, old, 0, 0)
		return e
	}
	base := old
	if s.path[0][0] == '/' {
		base = atFDCWD
	}
	e = supParent(s, 0, base, ps)
	syscall.RawSyscall(syscall.SYS_CLOSE, old, 0, 0)
	return e
}
