package forkexec

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// darwin calls libc through dlsym'd pointers and the runtime's
// push-linknamed raw libc callers, as x/sys calls libc: no assembly,
// no cgo. rawSyscall/rawSyscall6 are nosplit and norace, run the C function
// on g0 without entering the scheduler, and report errno when the result is
// -1 as an int32 [confirmed: Go 1.26 syscall/syscall_darwin.go].

//go:linkname rawSyscall syscall.rawSyscall
func rawSyscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

//go:linkname rawSyscall6 syscall.rawSyscall6
func rawSyscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

// fns holds libc entry points. fork must be libc's so libSystem's atfork
// child handlers run, as in syscall/exec_libc2.go.
type fns struct {
	forkArg     uintptr // fork
	setsid      uintptr
	setpgid     uintptr
	dup2        uintptr
	fcntl       uintptr
	chdir       uintptr
	setrlimit   uintptr
	getpid      uintptr
	execve      uintptr
	write       uintptr
	exit        uintptr // _exit: no atexit handlers
	procPidinfo uintptr
	macSyscall  uintptr
}

var loadFns = sync.OnceValues(func() (*fns, error) {
	f := new(fns)
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		{"fork", &f.forkArg}, {"setsid", &f.setsid}, {"setpgid", &f.setpgid},
		{"dup2", &f.dup2}, {"fcntl", &f.fcntl}, {"chdir", &f.chdir},
		{"setrlimit", &f.setrlimit}, {"getpid", &f.getpid}, {"execve", &f.execve},
		{"write", &f.write}, {"_exit", &f.exit}, {"proc_pidinfo", &f.procPidinfo},
		{"__mac_syscall", &f.macSyscall},
	} {
		p, err := purego.Dlsym(purego.RTLD_DEFAULT, s.name)
		if err != nil || p == 0 {
			return nil, fmt.Errorf("forkexec: libc symbol %s not found (%v); this macOS release is unsupported", s.name, err)
		}
		*s.p = p
	}
	return f, nil
})

// defaultNofile is macOS's default soft RLIMIT_NOFILE: 256, as launchd sets
// it (`launchctl limit maxfiles` prints "256 unlimited") [reported]; Go's
// syscall/rlimit.go notes "On some systems the limit is 256" [confirmed].
const defaultNofile = 256

// goRaisedNofile reports whether lim has the shape syscall/rlimit.go gives
// the limit it raises: Cur = Max - 1, capped at kern.maxfilesperproc
// [confirmed: Go 1.26 syscall/rlimit_darwin.go].
func goRaisedNofile(lim syscall.Rlimit) bool {
	if lim.Max > 0 && lim.Cur == lim.Max-1 {
		return true
	}
	n, err := syscall.SysctlUint32("kern.maxfilesperproc")
	return err == nil && lim.Cur == uint64(n) && lim.Cur < lim.Max
}

// checkCalls enforces that no darwin path runs a target unsandboxed: an
// Attr needs a StepApply call and a StepConfirm call whose result must be
// non-zero.
func checkCalls(calls []Call) error {
	var apply, confirm bool
	for _, c := range calls {
		apply = apply || c.step == StepApply
		confirm = confirm || (c.step == StepConfirm && c.result != nil)
	}
	if !apply || !confirm {
		return ErrNotSandboxed
	}
	return nil
}

// MacSyscall returns a Call that issues __mac_syscall(policy, call, arg) at
// step's position. policy is a NUL-terminated policy name ("Sandbox"); arg
// points to the call's block. If mustBeNonZero is non-nil the step fails
// with EPERM unless *mustBeNonZero is non-zero after the call, which is how
// a confirmation (Sandbox call 2) fails closed. The Call keeps policy, arg
// and mustBeNonZero alive.
func MacSyscall(step Step, policy *byte, call uintptr, arg unsafe.Pointer, mustBeNonZero *uint64) (Call, error) {
	if !step.valid() {
		return Call{}, fmt.Errorf("%w: MacSyscall step %v", ErrInvalidAttr, step)
	}
	if policy == nil {
		return Call{}, fmt.Errorf("%w: MacSyscall policy is nil", ErrInvalidAttr)
	}
	f, err := loadFns()
	if err != nil {
		return Call{}, err
	}
	c := Call{
		step:   step,
		fn:     f.macSyscall,
		args:   [6]uintptr{uintptr(unsafe.Pointer(policy)), call, uintptr(arg)},
		result: mustBeNonZero,
	}
	c.keep[0] = unsafe.Pointer(policy)
	c.keep[1] = arg
	c.keep[2] = unsafe.Pointer(mustBeNonZero)
	return c, nil
}

// procFdinfo is struct proc_fdinfo {int32 proc_fd; uint32 proc_fdtype}
// [confirmed: xnu bsd/sys/proc_info.h].
type procFdinfo struct {
	fd  int32
	typ uint32
}

// procPidListFDs is PROC_PIDLISTFDS [confirmed: xnu bsd/sys/proc_info.h].
const procPidListFDs = 1

// osPlan holds the descriptor list. The child lists its fds before the
// profile applies (StepApply's position, after the fd shuffle) and marks
// them at StepCloexec; apply, confirm and consume create no descriptors
// [inferred]. So the profile needs no process-info rule for the listing
// (proc_info is gated by Seatbelt's process-info*: xnu
// bsd/kern/proc_info.c, proc_security_policy); what the
// child still does after apply is fcntl(F_SETFD), write and _exit on the
// status pipe (syscall-unix, left open by (version 1)'s prelude [reported])
// and execve (process-exec plus file-read*/file-map-executable of the
// target), besides Sandbox calls 2 and 6 for confirm and consume.
type osPlan struct {
	list   []procFdinfo // sized in the parent from proc_pidinfo's hint
	count  int          // records listed; -1: use the fcntl loop
	bound  int          // loop bound (exclusive)
	pbound int          // the parent's loop bound, if the child cannot ask
}

func statusPipe(p *[2]int) error {
	if err := syscall.Pipe(p[:]); err != nil {
		return err
	}
	syscall.CloseOnExec(p[0])
	syscall.CloseOnExec(p[1])
	return nil
}

// prepareLocked sizes the fd list under ForkLock: proc_pidinfo with a NULL
// buffer returns (fd_nfiles + 20) * 8 bytes, a bound on every open fd
// [confirmed: xnu bsd/kern/proc_info.c proc_pidfdlist].
func prepareLocked(p *plan) error {
	hint, _, errno := purego.SyscallN(p.fn.procPidinfo, uintptr(syscall.Getpid()), procPidListFDs, 0, 0, 0)
	n := int(int32(hint)) / 8
	if n <= 0 {
		// proc_pidinfo returns 0 on error [confirmed: xnu libproc.c]. Without
		// the hint, pbound could fall below the highest open fd, and a child
		// whose own listing also fails would leave those fds open for the
		// target: refuse rather than fork.
		return fmt.Errorf("forkexec: proc_pidinfo(PROC_PIDLISTFDS) size query failed: %w", syscall.Errno(errno))
	}
	p.os.list = make([]procFdinfo, n+64)
	p.os.pbound = max(n, p.nextfd+len(p.fds)+2)
	return nil
}

// Every helper below runs in the forked child, so each is nosplit (no stack
// check: runtime_BeforeFork set stackguard0 to stackFork) and norace: with
// -race the compiler otherwise inserts racefuncenter/racefuncexit and
// raceread calls into them (seen with -gcflags=-S), which call into the race
// runtime after fork. syscall/exec_libc2.go relies on the same rule: "The
// calls to rawSyscall are okay because they are nosplit functions that do
// not grow the stack and are not race instrumented (go:norace)".
//
//go:nosplit
//go:norace
func rawCall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, syscall.Errno) {
	r, _, e := rawSyscall6(fn, a1, a2, a3, a4, a5, a6)
	return r, e
}

//go:nosplit
//go:norace
func doFork(fn uintptr) (uintptr, syscall.Errno) {
	r, _, e := rawSyscall(fn, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return uintptr(uint32(r)), 0 // pid_t is 32 bits
}

//go:nosplit
//go:norace
func sysSetsid(f *fns) syscall.Errno {
	_, _, e := rawSyscall(f.setsid, 0, 0, 0)
	return e
}

//go:nosplit
//go:norace
func sysSetpgid(f *fns) syscall.Errno {
	_, _, e := rawSyscall(f.setpgid, 0, 0, 0)
	return e
}

// fcntl is variadic: it goes through rawSyscall (3 arguments), for which
// the arm64 trampoline also puts the third argument on the stack as
// Apple's variadic ABI requires [confirmed: Go 1.26 runtime/sys_darwin_arm64.s].
//
//go:nosplit
//go:norace
func sysSetfd(f *fns, fd int, flag uintptr) syscall.Errno {
	_, _, e := rawSyscall(f.fcntl, uintptr(fd), syscall.F_SETFD, flag)
	return e
}

//go:nosplit
//go:norace
func sysDupCloexec(f *fns, oldfd, newfd int) syscall.Errno {
	_, _, e := rawSyscall(f.dup2, uintptr(oldfd), uintptr(newfd), 0)
	if e != 0 {
		return e
	}
	return sysSetfd(f, newfd, syscall.FD_CLOEXEC)
}

//go:nosplit
//go:norace
func sysDup(f *fns, oldfd, newfd int) syscall.Errno {
	_, _, e := rawSyscall(f.dup2, uintptr(oldfd), uintptr(newfd), 0)
	return e
}

//go:nosplit
//go:norace
func sysChdir(f *fns, dir *byte) syscall.Errno {
	_, _, e := rawSyscall(f.chdir, uintptr(unsafe.Pointer(dir)), 0, 0)
	return e
}

// struct rlimit is {rlim_t cur, max} with 64-bit rlim_t.
//
//go:nosplit
//go:norace
func sysSetrlimit(f *fns, resource uintptr, lim *[2]uint64) syscall.Errno {
	_, _, e := rawSyscall(f.setrlimit, resource, uintptr(unsafe.Pointer(lim)), 0)
	return e
}

//go:nosplit
//go:norace
func sysGetpid(f *fns) uintptr {
	r, _, _ := rawSyscall(f.getpid, 0, 0, 0)
	return uintptr(uint32(r))
}

//go:nosplit
//go:norace
func sysExecve(f *fns, path *byte, argv, envv **byte) syscall.Errno {
	_, _, e := rawSyscall(f.execve, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(argv)), uintptr(unsafe.Pointer(envv)))
	return e
}

//go:nosplit
//go:norace
func sysWrite(f *fns, fd int, b unsafe.Pointer, n uintptr) {
	rawSyscall(f.write, uintptr(fd), uintptr(b), n)
}

//go:nosplit
//go:norace
func sysExit(f *fns, code int) {
	rawSyscall(f.exit, uintptr(code), 0, 0)
}

// cloexecList lists the child's open fds into the parent-sized buffer. A
// full buffer may be truncated (the kernel copies at most buffersize/8
// records silently), so then, or if the call fails, the child falls back to
// an fcntl loop bounded by its own fd table size (a NULL-buffer query), or
// the parent's bound. It never loops to the (Go-raised) RLIMIT_NOFILE.
//
//go:nosplit
//go:norace
func cloexecList(p *plan, first int) {
	var (
		pid  uintptr
		r    uintptr
		size uintptr
	)
	pid = sysGetpid(p.fn)
	size = uintptr(len(p.os.list)) * 8
	r, _, _ = rawSyscall6(p.fn.procPidinfo, pid, procPidListFDs, 0, uintptr(unsafe.Pointer(&p.os.list[0])), size, 0)
	if int32(r) > 0 && uintptr(int32(r)) < size {
		p.os.count = int(int32(r)) / 8
		return
	}
	p.os.count = -1
	p.os.bound = p.os.pbound
	r, _, _ = rawSyscall6(p.fn.procPidinfo, pid, procPidListFDs, 0, 0, 0, 0)
	if int32(r) > 0 {
		p.os.bound = max(p.os.bound, int(int32(r))/8)
	}
	_ = first
}

// cloexecMark sets close-on-exec on every listed fd >= first (macOS has no
// close_range or closefrom [confirmed: xnu bsd/kern/syscalls.master]).
//
//go:nosplit
//go:norace
func cloexecMark(p *plan, first, _ int) syscall.Errno {
	var (
		i, fd int
		e     syscall.Errno
	)
	if p.os.count >= 0 {
		for i = 0; i < p.os.count; i++ {
			fd = int(p.os.list[i].fd)
			if fd < first {
				continue
			}
			e = sysSetfd(p.fn, fd, syscall.FD_CLOEXEC)
			if e != 0 && e != syscall.EBADF {
				return e
			}
		}
		return 0
	}
	for fd = first; fd < p.os.bound; fd++ {
		e = sysSetfd(p.fn, fd, syscall.FD_CLOEXEC)
		if e != 0 && e != syscall.EBADF {
			return e
		}
	}
	return 0
}
