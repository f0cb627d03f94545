package forkexec

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nsPlan is what the namespace steps touch, prepared before fork.
//
// The pid namespace's shape: the first child A (the vfork child) runs the
// steps up to StepPID in the caller's pid namespace, unshares CLONE_NEWPID
// and forks twice with CLONE_PARENT, so both children are the caller's
// own: pid 1 of the new namespace (its init, I), then the target (pid 2).
// A writes their pids to the status pipe, wakes I with SIGUSR1 and exits.
//   - The target being the caller's child keeps os/exec's semantics as
//     they are: the caller signals it and waits for it directly, and sees
//     its own wait status, a death by signal included. An init cannot
//     carry that status: the kernel never kills a namespace's init with a
//     signal it has not asked for (SIGNAL_UNKILLABLE, kernel/signal.c),
//     so it could only exit 128+N.
//   - I sets PR_SET_PDEATHSIG(SIGKILL) (the caller's death ends the
//     namespace), checks on a pidfd of the caller that the caller did not
//     die before that, opens a pidfd on the target (pid 2: a fresh
//     namespace numbers its processes in order) and closes every other
//     descriptor, the status pipe included, so EOF on it still means the
//     target has executed and I watches it. Then it reaps the orphans the
//     run leaves to it (SIGCHLD through a signalfd, every signal blocked),
//     forwards any other signal sent to it to the target, and exits when
//     the target's pidfd turns readable: the kernel then kills everything
//     else in the namespace (pid_namespaces(7)), a double-forked daemon too.
//   - I cannot finish exiting until the target, a zombie of the caller,
//     is reaped (zap_pid_ns_processes waits for every pid of the
//     namespace), so the caller reaps the target first, then I.
type nsPlan struct {
	flags    uintptr // Attr.Namespaces
	pid      bool    // CLONE_NEWPID
	proc     bool    // Attr.MountProc
	callerfd int     // pidfd of the caller, above the descriptor shuffle
	kept     int     // KeptAbove(Files): the lowest fd the shuffle keeps

	setgroups, uidMap, gidMap *byte    // "/proc/self/..." paths
	deny, uidLine, gidLine    []byte   // what is written to them
	root, proc0, procfs       *byte    // "/", "/proc", "proc"
	all, usr1                 uint64   // signal sets: every signal; SIGUSR1
	saved                     uint64   // the first child's mask before StepPID
	zero                      [2]int64 // a zero timespec
	pfd                       [2]unix.PollFd
	siginfo                   []byte // signalfd_siginfo buffer
	bound                     int    // close loop bound without close_range
}

// cloneNewPID is CLONE_NEWPID, named in the shared Start.
const cloneNewPID = syscall.CLONE_NEWPID

// The namespaces Attr.Namespaces may name.
const nsAllowed = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
	syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

func prepareNS(p *plan, attr *Attr) error {
	f := attr.Namespaces
	if f&^nsAllowed != 0 {
		return invalid("Namespaces %#x has flags other than CLONE_NEW*", f)
	}
	if attr.MountProc && f&(syscall.CLONE_NEWPID|syscall.CLONE_NEWNS) != syscall.CLONE_NEWPID|syscall.CLONE_NEWNS {
		// Never a procfs mounted over the caller's own /proc.
		return invalid("MountProc needs CLONE_NEWPID and CLONE_NEWNS in Namespaces")
	}
	if f == 0 {
		return nil
	}
	n := &p.ns
	n.flags, n.pid, n.proc = f, f&syscall.CLONE_NEWPID != 0, attr.MountProc
	n.setgroups = &[]byte("/proc/self/setgroups\x00")[0]
	n.uidMap = &[]byte("/proc/self/uid_map\x00")[0]
	n.gidMap = &[]byte("/proc/self/gid_map\x00")[0]
	n.deny = []byte("deny")
	n.uidLine = fmt.Appendf(nil, "%d %d 1\n", os.Geteuid(), os.Geteuid())
	n.gidLine = fmt.Appendf(nil, "%d %d 1\n", os.Getegid(), os.Getegid())
	n.root = &[]byte("/\x00")[0]
	n.proc0 = &[]byte("/proc\x00")[0]
	n.procfs = &[]byte("proc\x00")[0]
	n.all = ^uint64(0)
	n.usr1 = 1 << (syscall.SIGUSR1 - 1)
	n.siginfo = make([]byte, 8*unsafe.Sizeof(unix.SignalfdSiginfo{}))
	n.bound = 1 << 20
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Max < 1<<20 {
		n.bound = int(lim.Max)
	}
	if n.pid {
		n.kept = KeptAbove(attr.Files)
	}
	return nil
}

// prepareNSLocked opens the pidfd pid 1 checks the caller's life on, at a
// number the child's descriptor shuffle cannot overwrite (pidfd_open(2):
// close-on-exec, Linux 5.3+).
func prepareNSLocked(p *plan) error {
	if !p.ns.pid {
		return nil
	}
	fd, _, e := syscall.RawSyscall(unix.SYS_PIDFD_OPEN, uintptr(os.Getpid()), 0, 0)
	if e != 0 {
		return fmt.Errorf("forkexec: pidfd_open of the caller, needed for a pid namespace: %w", e)
	}
	high, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, p.ns.kept)
	syscall.Close(int(fd))
	if err != nil {
		return fmt.Errorf("forkexec: moving the caller's pidfd: %w", err)
	}
	p.ns.callerfd = high
	return nil
}

func releaseLocked(p *plan) {
	if p.ns.callerfd > 0 { // 0: none (a real one is above the shuffle)
		syscall.Close(p.ns.callerfd)
		p.ns.callerfd = 0
	}
}

// The spawner thread. PR_SET_PDEATHSIG fires when the parent *thread*
// exits, not the process (golang/go#27505; moby/moby PR #44215), and the
// caller's thread that forks is pid 1's parent (CLONE_PARENT keeps the
// first child's). Go ends an OS thread only when a goroutine exits locked
// to it, so every pid-namespace fork runs on one goroutine locked to its
// thread for the life of the process: that thread never exits, and a
// caller that locks its own goroutine and then returns cannot kill its
// runs. (Locking the caller's goroutine for the run would not do: Start
// and Wait may run on different goroutines.)
var (
	spawner     = make(chan func())
	spawnerOnce sync.Once
)

func onSpawnerThread(f func()) {
	spawnerOnce.Do(func() {
		go func() {
			runtime.LockOSThread()
			for f := range spawner {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawner <- func() { f(); close(done) }
	<-done
}

// nsEnter is StepNamespace's built-in action (in the first child).
//
//go:nosplit
//go:norace
func nsEnter(p *plan) syscall.Errno {
	var e syscall.Errno
	if f := p.ns.flags &^ syscall.CLONE_NEWPID; f != 0 {
		_, _, e = syscall.RawSyscall(syscall.SYS_UNSHARE, f, 0, 0)
		if e != 0 {
			return e
		}
	}
	if p.ns.flags&syscall.CLONE_NEWUSER != 0 {
		// setgroups "deny" first: an unprivileged gid_map write needs it
		// (user_namespaces(7)).
		if e = writeFile(p.ns.setgroups, p.ns.deny); e != 0 {
			return e
		}
		if e = writeFile(p.ns.uidMap, p.ns.uidLine); e != 0 {
			return e
		}
		if e = writeFile(p.ns.gidMap, p.ns.gidLine); e != 0 {
			return e
		}
	}
	if p.ns.flags&syscall.CLONE_NEWNS != 0 {
		_, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, 0, uintptr(unsafe.Pointer(p.ns.root)), 0,
			syscall.MS_REC|syscall.MS_SLAVE, 0, 0)
	}
	return e
}

//go:nosplit
//go:norace
func writeFile(path *byte, b []byte) syscall.Errno {
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(path)),
		syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return e
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if e == 0 && n != uintptr(len(b)) {
		e = syscall.EIO
	}
	return e
}

// rawFork is a fork-style clone (no CLONE_VM): each child has its own
// copy of memory, so it may outlive the caller's frame.
//
//go:nosplit
//go:norace
func rawFork(flags uintptr) (uintptr, syscall.Errno) {
	if runtime.GOARCH == "s390x" {
		r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, 0, flags, 0, 0, 0, 0)
		return r, e
	}
	r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, flags, 0, 0, 0, 0, 0)
	return r, e
}

// pidnsFork is StepPID's fork, in the first child: it returns 0 in the
// target, an errno in the first child if a fork failed; pid 1 and the
// first child after success never return.
//
//go:nosplit
//go:norace
func pidnsFork(p *plan, pipe int) syscall.Errno {
	var (
		init, target uintptr
		e, e2        syscall.Errno
		rec          [2]uint32
		v            uint64
	)
	_, _, e = syscall.RawSyscall(syscall.SYS_UNSHARE, syscall.CLONE_NEWPID, 0, 0)
	if e != 0 {
		return e
	}
	// pid 1 must start with every signal blocked: one that reaches an init
	// unblocked with its default action is dropped, SIGUSR1 below too. The
	// target restores the mask (runtime_AfterForkInChild's) at once.
	_, _, e = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.ns.all)),
		uintptr(unsafe.Pointer(&p.ns.saved)), 8, 0, 0)
	if e != 0 {
		return e
	}
	init, e = rawFork(uintptr(syscall.SIGCHLD) | syscall.CLONE_PARENT)
	if e != 0 {
		return e
	}
	if init == 0 {
		pidnsInit(p, pipe)
		for {
			sysExit(nil, 252)
		}
	}
	target, e = rawFork(uintptr(syscall.SIGCHLD) | syscall.CLONE_PARENT)
	if e == 0 && target == 0 {
		_, _, e = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.ns.saved)), 0, 8, 0, 0)
		return e
	}
	if e != 0 {
		target = 0
	}
	v = pidsTag | uint64(init)<<16 | uint64(target)<<40
	rec[0], rec[1] = uint32(v), uint32(v>>32)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(pipe), uintptr(unsafe.Pointer(&rec)), unsafe.Sizeof(rec))
	if e != 0 {
		return e
	}
	_, _, e2 = syscall.RawSyscall(syscall.SYS_KILL, init, uintptr(syscall.SIGUSR1), 0)
	if e2 != 0 {
		return e2
	}
	for {
		sysExit(nil, 0)
	}
}

// pidnsInit is pid 1. Failures before it watches the target are reported
// on the status pipe as StepPID.
//
//go:nosplit
//go:norace
func pidnsInit(p *plan, pipe int) {
	var (
		n        = &p.ns
		r, i     uintptr
		e        syscall.Errno
		tfd, sfd uintptr
		rec      [2]uint32
		signo    uint32
	)
	// Every signal is blocked (pidnsFork): what reaches an init is then
	// queued, never dropped (kernel/signal.c sig_ignored checks the
	// blocked set first), and read from the signalfd.
	if _, _, e = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); e != 0 {
		goto fail
	}
	// The caller may have died before the prctl: its pidfd is readable
	// then. (getppid() cannot tell: it is 0 for a namespace's init.)
	n.pfd[0] = unix.PollFd{Fd: int32(n.callerfd), Events: unix.POLLIN}
	r, _, e = syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&n.pfd[0])), 1, uintptr(unsafe.Pointer(&n.zero)), 0, 8, 0)
	if e != 0 {
		goto fail
	}
	if r != 0 {
		for {
			sysExit(nil, 0)
		}
	}
	// The first child's word that the target exists.
	for {
		r, _, e = syscall.RawSyscall6(syscall.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&n.usr1)), 0, 0, 8, 0, 0)
		if e == 0 && r == uintptr(syscall.SIGUSR1) {
			break
		}
		if e != 0 && e != syscall.EINTR {
			goto fail
		}
	}
	if tfd, _, e = syscall.RawSyscall(unix.SYS_PIDFD_OPEN, 2, 0, 0); e != 0 {
		goto fail
	}
	// Keep the pidfd on 0 and the signalfd on 1, close the rest (the
	// caller's descriptors, the status pipe).
	if _, _, e = syscall.RawSyscall(syscall.SYS_DUP3, tfd, 0, 0); e != 0 {
		goto fail
	}
	if sfd, _, e = syscall.RawSyscall6(syscall.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&n.all)), 8, syscall.O_CLOEXEC, 0, 0); e != 0 {
		goto fail
	}
	if _, _, e = syscall.RawSyscall(syscall.SYS_DUP3, sfd, 1, 0); e != 0 {
		goto fail
	}
	if _, _, e = syscall.RawSyscall(sysCloseRange, 2, uintptr(^uint32(0)), 0); e != 0 {
		for i = 2; i < uintptr(n.bound); i++ {
			syscall.RawSyscall(syscall.SYS_CLOSE, i, 0, 0)
		}
	}
	n.pfd[0] = unix.PollFd{Fd: 0, Events: unix.POLLIN}
	n.pfd[1] = unix.PollFd{Fd: 1, Events: unix.POLLIN}
	for {
		n.pfd[0].Revents, n.pfd[1].Revents = 0, 0
		_, _, e = syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&n.pfd[0])), 2, 0, 0, 8, 0)
		if e != 0 && e != syscall.EINTR {
			break
		}
		if n.pfd[1].Revents != 0 {
			r, _, e = syscall.RawSyscall(syscall.SYS_READ, 1, uintptr(unsafe.Pointer(&n.siginfo[0])), uintptr(len(n.siginfo)))
			for i = 0; e == 0 && i+unsafe.Sizeof(unix.SignalfdSiginfo{}) <= r; i += unsafe.Sizeof(unix.SignalfdSiginfo{}) {
				signo = *(*uint32)(unsafe.Pointer(&n.siginfo[i]))
				if signo != uint32(syscall.SIGCHLD) {
					// pidfd_send_signal: to the target, whose pid may
					// be reused only after the caller reaps it.
					syscall.RawSyscall6(unix.SYS_PIDFD_SEND_SIGNAL, 0, uintptr(signo), 0, 0, 0, 0)
				}
			}
			// Reap every orphan the run left to pid 1 (SIGCHLDs merge).
			for {
				r, _, e = syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), 0, syscall.WNOHANG|unix.WALL, 0, 0, 0)
				if e == syscall.EINTR {
					continue
				}
				if e != 0 || r == 0 {
					break
				}
			}
		}
		if n.pfd[0].Revents != 0 {
			break // the target has ended: so does the namespace
		}
	}
	for {
		sysExit(nil, 0)
	}

fail:
	rec[0] = uint32(StepPID)
	rec[1] = uint32(e)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(pipe), uintptr(unsafe.Pointer(&rec)), unsafe.Sizeof(rec))
	for {
		sysExit(nil, 251)
	}
}

// mountProc is the target's fresh procfs on /proc, in its private mount
// namespace (prepareNS insists on one). The mount belongs to the pid
// namespace of the process that mounts it, so the target does it.
//
//go:nosplit
//go:norace
func mountProc(p *plan) syscall.Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(p.ns.procfs)), uintptr(unsafe.Pointer(p.ns.proc0)),
		uintptr(unsafe.Pointer(p.ns.procfs)), syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, 0, 0)
	return e
}
