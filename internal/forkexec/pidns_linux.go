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
// A writes their pids to the status pipe, wakes I with SIGUSR1 and exits;
// a vfork target (linux/amd64) does the first two itself, before its steps,
// and A exits once it has executed.
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
	pid      bool // Attr.PIDNamespace
	proc     bool // Attr.MountProc
	callerfd int  // pidfd of the caller, above the descriptor shuffle
	kept     int  // KeptAbove(Files): the lowest fd the shuffle keeps

	proc0, procfs, selfMnt *byte        // "/proc", "proc", "/proc/self/ns/mnt"
	callerMnt              uint64       // the caller's mount namespace (its nsfs inode)
	mntStat                unix.Statx_t // the target's, written in the child
	all, usr1              uint64       // signal sets: every signal; SIGUSR1
	saved                  uint64       // the first child's mask before StepPID
	zero                   [2]int64     // a zero timespec
	pfd                    [2]unix.PollFd
	siginfo                []byte // signalfd_siginfo buffer
	bound                  int    // close loop bound without close_range
	fin                    pidnsFinish
}

// pidnsFinish is what vforkTarget needs: the words are set before that
// fork, rec by the first child only if the fork failed. The layout is read
// by vfork_linux_amd64.s.
type pidnsFinish struct {
	pipe uintptr // the status pipe's write end
	base uint64  // pidsTag | init<<16: the pids record without the target
	fail uint64  // StepPID: an error record's first word
	//lint:ignore U1000 written by vfork_linux_amd64.s only
	rec uint64 // the record written
}

// vforkTID is the vfork target's pid (in the caller's namespace) while it
// shares the caller's memory and stack: the kernel stores it at the
// target's clone, before the target runs (CLONE_PARENT_SETTID), and clears
// it with a futex wake when the target executes or exits
// (CLONE_CHILD_CLEARTID, in mm_release). The caller's doFork waits for 0
// before it returns onto its stack: its own vfork wait ends when the first
// child ends, which a SIGKILL makes happen while the target still runs
// there (TestPIDNSFirstChildKilled). One word serves: forks hold ForkLock.
var vforkTID int32

func prepareNS(p *plan, attr *Attr) error {
	if attr.MountProc && !attr.PIDNamespace {
		return invalid("MountProc needs PIDNamespace")
	}
	if !attr.PIDNamespace {
		return nil
	}
	n := &p.ns
	n.pid, n.proc = true, attr.MountProc
	n.proc0 = &[]byte("/proc\x00")[0]
	n.procfs = &[]byte("proc\x00")[0]
	n.selfMnt = &[]byte("/proc/self/ns/mnt\x00")[0]
	if n.proc {
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/self/ns/mnt", &st); err != nil {
			return fmt.Errorf("forkexec: the caller's mount namespace, needed for MountProc: %w", err)
		}
		n.callerMnt = st.Ino
	}
	n.all = ^uint64(0)
	n.usr1 = 1 << (syscall.SIGUSR1 - 1)
	n.siginfo = make([]byte, 8*unsafe.Sizeof(unix.SignalfdSiginfo{}))
	n.bound = 1 << 20
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Max < 1<<20 {
		n.bound = int(lim.Max)
	}
	n.kept = KeptAbove(attr.Files)
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
	if p.fn.forkArg&syscall.CLONE_VFORK != 0 {
		// The target shares this child's memory until it executes (no copy
		// of the caller's page tables, none dropped again at its exec);
		// this child finishes in vforkTarget (it cannot return into this
		// frame, which the target reused), so only the target returns.
		p.ns.fin = pidnsFinish{pipe: uintptr(pipe), base: pidsTag | uint64(init)<<16, fail: uint64(StepPID)}
		vforkTID = 0
		_, e = vforkTarget(uintptr(syscall.SIGCHLD)|syscall.CLONE_PARENT|syscall.CLONE_VM|syscall.CLONE_VFORK|
			syscall.CLONE_PARENT_SETTID|syscall.CLONE_CHILD_CLEARTID, &p.ns.fin)
		if e != 0 {
			return e
		}
		// The target, before any step of its own, writes the pids and
		// wakes pid 1 (1 here), as the plain fork's first child does right
		// after its fork: this child waits for the target's exec, and if
		// it died meanwhile (SIGKILL) and these were its to do, pid 1 would
		// wait for ever holding the status pipe and Start with it
		// (TestPIDNSFirstChildKilled).
		v = p.ns.fin.base | uint64(uint32(vforkTID))<<40
		rec[0], rec[1] = uint32(v), uint32(v>>32)
		syscall.RawSyscall(syscall.SYS_WRITE, uintptr(pipe), uintptr(unsafe.Pointer(&rec)), unsafe.Sizeof(rec))
		if _, _, e = syscall.RawSyscall(syscall.SYS_KILL, 1, uintptr(syscall.SIGUSR1), 0); e != 0 {
			return e
		}
		_, _, e = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.ns.saved)), 0, 8, 0, 0)
		return e
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
// namespace: EINVAL if the StepNamespace calls did not enter one (never a
// procfs over the caller's /proc). The mount belongs to the pid namespace
// of the process that mounts it, so the target does it.
//
//go:nosplit
//go:norace
func mountProc(p *plan) syscall.Errno {
	_, _, e := syscall.RawSyscall6(unix.SYS_STATX, atFDCWD, uintptr(unsafe.Pointer(p.ns.selfMnt)),
		0, unix.STATX_INO, uintptr(unsafe.Pointer(&p.ns.mntStat)), 0)
	if e != 0 {
		return e
	}
	if p.ns.mntStat.Ino == p.ns.callerMnt {
		return syscall.EINVAL
	}
	_, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(p.ns.procfs)), uintptr(unsafe.Pointer(p.ns.proc0)),
		uintptr(unsafe.Pointer(p.ns.procfs)), syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, 0, 0)
	return e
}
