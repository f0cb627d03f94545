package forkexec

import (
	"syscall"
	"unsafe"
)

// Linux "functions" are system call numbers; the table only carries the
// clone flags.
type fns struct {
	forkArg uintptr // clone flags
}

// sysCloseRange is close_range(2), number 436 on every Linux architecture
// [confirmed: x/sys zsysnum_linux_*.go]; closeRangeCloexec is
// CLOSE_RANGE_CLOEXEC (Linux 5.11+) [confirmed: x/sys ztypes_linux.go].
const (
	sysCloseRange     = 436
	closeRangeCloexec = 0x4
)

// defaultNofile is Linux's initial soft RLIMIT_NOFILE: INR_OPEN_CUR = 1024
// (include/uapi/linux/fs.h, used by include/asm-generic/resource.h), also
// systemd's default soft limit (DefaultLimitNOFILE=1024:524288) [reported].
const defaultNofile = 1024

// goRaisedNofile reports whether lim has the shape syscall/rlimit.go's
// init gives the limit it raises: Cur = Max - 1.
func goRaisedNofile(lim syscall.Rlimit) bool {
	return lim.Max > 0 && lim.Cur == lim.Max-1
}

// Test knobs: force a plain fork instead of vfork, and the /proc (then the
// fcntl-loop) fallback instead of close_range.
var (
	forcePlainFork       bool
	forceCloexecFallback bool
	forceProcFallback    bool
)

func loadFns() (*fns, error) {
	f := &fns{forkArg: uintptr(syscall.SIGCHLD)}
	if vforkSupported && !forcePlainFork {
		f.forkArg |= syscall.CLONE_VM | syscall.CLONE_VFORK
	}
	return f, nil
}

func checkCalls([]Call) error { return nil }

// RawCall returns a Call that issues system call trap with args (at most
// six) at step's position. It panics if given more than six arguments.
// A failing RawCall fails its step with the call's errno; tests use it to
// make each step fail in turn.
func RawCall(step Step, trap uintptr, args ...uintptr) Call {
	if len(args) > 6 {
		panic("forkexec.RawCall: more than 6 arguments")
	}
	c := Call{step: step, fn: trap}
	copy(c.args[:], args)
	return c
}

// RawCallExpect returns a Call that issues system call trap with args at
// step's position and fails the step unless the call reports exactly errno
// want (0: success) and, on success, returns ret. A confirmation is built
// this way: prctl(PR_GET_SECCOMP) must return 2, a signal to the parent
// must fail with EPERM. A mismatch fails the step with the call's own errno
// when it reported a different one, else with EPERM.
func RawCallExpect(step Step, ret uintptr, want syscall.Errno, trap uintptr, args ...uintptr) Call {
	c := RawCall(step, trap, args...)
	c.expect, c.wantRet, c.wantErr = true, ret, want
	return c
}

// osPlan holds the /proc/self/fd fallback's buffers.
type osPlan struct {
	procfd *byte  // "/proc/self/fd"
	dirbuf []byte // getdents64 buffer
	bound  int    // last-resort fcntl loop bound: the parent's soft RLIMIT_NOFILE
}

var procSelfFD = []byte("/proc/self/fd\x00")

func statusPipe(p *[2]int) error {
	return syscall.Pipe2(p[:], syscall.O_CLOEXEC)
}

func prepareLocked(p *plan) error {
	p.os.procfd = &procSelfFD[0]
	p.os.dirbuf = make([]byte, 2048)
	var lim syscall.Rlimit
	p.os.bound = 1 << 20
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 1<<31 {
		p.os.bound = int(lim.Cur)
	}
	return prepareNSLocked(p)
}

//go:nosplit
//go:norace
func rawCall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(trap, a1, a2, a3, a4, a5, a6)
	return r, e
}

//go:nosplit
//go:norace
func sysSetsid(*fns) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
	return e
}

//go:nosplit
//go:norace
func sysSetpgid(*fns) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_SETPGID, 0, 0, 0)
	return e
}

// dup3 rather than dup2: arm64 and riscv64 have no dup2.
//
//go:nosplit
//go:norace
func sysDupCloexec(_ *fns, oldfd, newfd int) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(oldfd), uintptr(newfd), syscall.O_CLOEXEC)
	return e
}

//go:nosplit
//go:norace
func sysDup(_ *fns, oldfd, newfd int) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(oldfd), uintptr(newfd), 0)
	return e
}

//go:nosplit
//go:norace
func sysSetfd(_ *fns, fd int, flag uintptr) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flag)
	return e
}

//go:nosplit
//go:norace
func sysChdir(_ *fns, dir *byte) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(dir)), 0, 0)
	return e
}

// prlimit64(0, ...) takes the same {cur, max uint64} layout on every
// architecture, unlike setrlimit's per-arch struct rlimit.
//
//go:nosplit
//go:norace
func sysSetrlimit(_ *fns, resource uintptr, lim *[2]uint64) syscall.Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, resource, uintptr(unsafe.Pointer(lim)), 0, 0, 0)
	return e
}

//go:nosplit
//go:norace
func sysGetpid(*fns) uintptr {
	r, _, _ := syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
	return r
}

//go:nosplit
//go:norace
func sysExecve(_ *fns, path *byte, argv, envv **byte) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(argv)), uintptr(unsafe.Pointer(envv)))
	return e
}

//go:nosplit
//go:norace
func sysWrite(_ *fns, fd int, b unsafe.Pointer, n uintptr) {
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(b), n)
}

// exit_group, not exit: no atexit handlers exist at this level, and the
// whole (single-threaded) process must end.
//
//go:nosplit
//go:norace
func sysExit(_ *fns, code int) {
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, uintptr(code), 0, 0)
}

// cloexecList is darwin's pre-apply listing; Linux marks in one call.
//
//go:nosplit
//go:norace
func cloexecList(*plan, int) {}

// cloexecMark sets close-on-exec on every fd >= first: close_range with
// CLOSE_RANGE_CLOEXEC (Linux 5.11+; per-fd errors are ignored by the
// kernel); on any error (ENOSYS before 5.9, EINVAL on 5.9/5.10, EPERM from
// a seccomp filter) it falls back to /proc/self/fd.
//
//go:nosplit
//go:norace
func cloexecMark(p *plan, first, _ int) syscall.Errno {
	if !forceCloexecFallback {
		_, _, e := syscall.RawSyscall(sysCloseRange, uintptr(first), uintptr(^uint32(0)), closeRangeCloexec)
		if e == 0 {
			return 0
		}
	}
	return cloexecProc(p, first)
}

// cloexecProc reads /proc/self/fd with getdents64 into the buffer the
// parent allocated and marks each listed fd >= first. Without /proc it
// loops fcntl up to the parent's soft RLIMIT_NOFILE.
//
//go:nosplit
//go:norace
//go:nocheckptr
func cloexecProc(p *plan, first int) syscall.Errno {
	var (
		dirfd, n, off, fd, j uintptr
		e                    syscall.Errno
		reclen               uint16
		buf                  = p.os.dirbuf
	)
	dirfd, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p.os.procfd)),
		syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 || forceProcFallback {
		if e == 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, dirfd, 0, 0)
		}
		for fd = uintptr(first); fd < uintptr(p.os.bound); fd++ {
			_, _, e = syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFD, syscall.FD_CLOEXEC)
			if e != 0 && e != syscall.EBADF {
				return e
			}
		}
		return 0
	}
	for {
		n, _, e = syscall.RawSyscall(syscall.SYS_GETDENTS64, dirfd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e != 0 || n == 0 {
			break
		}
		// struct linux_dirent64 {u64 d_ino; s64 d_off; u16 d_reclen;
		// u8 d_type; char d_name[]} [confirmed: getdents64(2)].
		for off = 0; off+19 < n; off += uintptr(reclen) {
			reclen = *(*uint16)(unsafe.Pointer(&buf[off+16]))
			if reclen == 0 {
				break
			}
			fd = 0
			for j = off + 19; j < off+uintptr(reclen) && buf[j] != 0; j++ {
				if buf[j] < '0' || buf[j] > '9' {
					fd = ^uintptr(0) // "." and ".."
					break
				}
				fd = fd*10 + uintptr(buf[j]-'0')
			}
			if j == off+19 || fd == ^uintptr(0) || fd < uintptr(first) || fd == dirfd {
				continue
			}
			_, _, e = syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFD, syscall.FD_CLOEXEC)
			if e != 0 && e != syscall.EBADF {
				break
			}
			e = 0
		}
		if e != 0 {
			break
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, dirfd, 0, 0)
	return e
}

// atFDCWD is AT_FDCWD (-100) as an unsigned word [confirmed: x/sys
// zerrors_linux.go].
const atFDCWD = ^uintptr(99)
