//go:build darwin || linux

package forkexec

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"unsafe"
)

// Runtime fork hooks, push-linknamed into package syscall by runtime/proc.go
// ("Do not remove or change the type signature. See go.dev/issue/67401").
// They are used exactly as syscall/exec_libc2.go and exec_linux.go use them.

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// rlimRec is one prepared setrlimit: the layout of struct rlimit (darwin)
// and struct rlimit64 (linux prlimit64) is {cur, max uint64}.
type rlimRec struct {
	resource uintptr
	lim      [2]uint64
}

// plan is everything the child touches, allocated in the parent before fork.
// The child only reads it, except fds (the shuffle) and the per-OS
// descriptor-listing state, which it overwrites with integers.
type plan struct {
	path    *byte
	argv    []*byte // NULL-terminated
	envv    []*byte // NULL-terminated
	dir     *byte   // nil: inherit
	fds     []int   // Attr.Files, rewritten by the shuffle
	nextfd  int     // first fd above every Files entry
	setpgid bool
	rlims   []rlimRec
	calls   []Call // stable-sorted by step
	fn      *fns   // per-OS function table
	os      osPlan // per-OS state (descriptor listing)
	ns      nsPlan // per-OS namespace state (Linux)
}

// Start forks a child that runs the steps of [Step] in order and then
// executes attr.Path. It returns once the child has executed the target
// (pid, nil) or failed a step (0, *StepError; the child has been reaped).
// Any other error means the Attr was rejected before forking (wrapping
// [ErrInvalidAttr] or [ErrNotSandboxed]) or that creating the status pipe
// or forking failed.
//
// The caller must reap a started child: [Wait], syscall.Wait4, or
// os.FindProcess(pid) followed by Process.Wait all work (on Unix
// os.FindProcess always succeeds and Process.Wait uses wait4/waitid).
func Start(attr *Attr) (pid int, err error) {
	if attr != nil && attr.PIDNamespace {
		return 0, invalid("PIDNamespace is set; use StartProc, which also returns the namespace's pid 1")
	}
	pr, err := StartProc(attr)
	return pr.Pid, err
}

// StartProc is [Start] for an Attr that may ask for a new pid namespace
// (Attr.PIDNamespace, Linux). The target is then pid 2 of
// the namespace and Proc.Init its pid 1; both are the caller's children
// and the caller must reap both ([Proc.Wait]). When the target ends, pid 1
// ends and the kernel kills every other process of the namespace
// (pid_namespaces(7)); when the caller dies, pid 1 gets SIGKILL
// (PR_SET_PDEATHSIG) and so does the whole run. See doc.go, "Pid namespace".
func StartProc(attr *Attr) (Proc, error) {
	p, err := prepare(attr)
	if err != nil {
		return Proc{}, err
	}
	if p.ns.pid {
		var pr Proc
		onSpawnerThread(func() { pr, err = forkExec(p) })
		return pr, err
	}
	return forkExec(p)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidAttr}, args...)...)
}

func prepare(attr *Attr) (*plan, error) {
	if attr == nil {
		return nil, invalid("nil Attr")
	}
	if !strings.HasPrefix(attr.Path, "/") {
		return nil, invalid("Path %q is not absolute; resolve it before calling Start", attr.Path)
	}
	if len(attr.Args) == 0 {
		return nil, invalid("Args is empty; it must hold at least argv[0]")
	}
	if len(attr.Files) < 3 {
		return nil, invalid("Files has %d entries; supply at least stdin, stdout and stderr", len(attr.Files))
	}
	p := &plan{setpgid: attr.ProcessGroup}
	var err error
	if p.path, err = cstring("Path", attr.Path); err != nil {
		return nil, err
	}
	if p.argv, err = cstrings("Args", attr.Args); err != nil {
		return nil, err
	}
	if p.envv, err = cstrings("Env", attr.Env); err != nil {
		return nil, err
	}
	if attr.Dir != "" {
		if p.dir, err = cstring("Dir", attr.Dir); err != nil {
			return nil, err
		}
	}
	// As syscall does: nextfd lies above every fd the shuffle must keep.
	p.fds = make([]int, len(attr.Files))
	p.nextfd = len(attr.Files)
	for i, f := range attr.Files {
		if f > 1<<30 {
			return nil, invalid("Files[%d] = %d is not a descriptor", i, f)
		}
		p.fds[i] = int(f)
		p.nextfd = max(p.nextfd, int(f))
	}
	p.nextfd++

	explicitNofile := false
	for _, r := range attr.Rlimits {
		if r.Resource < 0 {
			return nil, invalid("Rlimit resource %d is negative", r.Resource)
		}
		if r.Resource == syscall.RLIMIT_NOFILE {
			explicitNofile = true
		}
		p.rlims = append(p.rlims, rlimRec{resource: uintptr(r.Resource), lim: [2]uint64{r.Cur, r.Max}})
	}
	if !explicitNofile {
		if lim, ok := nofileRestore(); ok {
			p.rlims = append(p.rlims, rlimRec{resource: syscall.RLIMIT_NOFILE, lim: [2]uint64{lim.Cur, lim.Max}})
		}
	}

	for i, c := range attr.Calls {
		if !c.step.valid() {
			return nil, invalid("Calls[%d] has step %v; build Calls with this package's constructors", i, c.step)
		}
		if c.sup != nil && !(attr.PIDNamespace && attr.MountProc) {
			return nil, invalid("Calls[%d] starts a supervisor, which needs PIDNamespace and MountProc (its view of the run's processes)", i)
		}
	}
	p.calls = slices.Clone(attr.Calls)
	slices.SortStableFunc(p.calls, func(a, b Call) int { return int(a.step) - int(b.step) })
	if err := checkCalls(p.calls); err != nil {
		return nil, err
	}
	if p.fn, err = loadFns(); err != nil {
		return nil, err
	}
	if err := prepareNS(p, attr); err != nil {
		return nil, err
	}
	return p, nil
}

func cstring(field, s string) (*byte, error) {
	b, err := syscall.BytePtrFromString(s)
	if err != nil {
		return nil, invalid("%s %q contains a NUL byte", field, s)
	}
	return b, nil
}

func cstrings(field string, ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		b, err := syscall.BytePtrFromString(s)
		if err != nil {
			return nil, invalid("%s[%d] %q contains a NUL byte", field, i, s)
		}
		out[i] = b
	}
	return out, nil
}

// forkExec runs std's forkExec protocol: the status pipe and the fork
// happen under ForkLock held for writing, so no descriptor another goroutine
// creates without close-on-exec (non-atomically, under ForkLock.RLock) can
// reach the child.
func forkExec(p *plan) (Proc, error) {
	var pipe [2]int
	syscall.ForkLock.Lock()
	if err := statusPipe(&pipe); err != nil {
		syscall.ForkLock.Unlock()
		return Proc{}, fmt.Errorf("forkexec: creating the status pipe: %w", err)
	}
	if err := prepareLocked(p); err != nil {
		syscall.ForkLock.Unlock()
		syscall.Close(pipe[0])
		syscall.Close(pipe[1])
		return Proc{}, err
	}
	pid, errno := forkAndExecInChild(p, pipe[1])
	runtimeAfterFork()
	releaseLocked(p)
	syscall.ForkLock.Unlock()
	syscall.Close(pipe[1])
	if errno != 0 {
		syscall.Close(pipe[0])
		return Proc{}, fmt.Errorf("forkexec: fork: %w", errno)
	}

	// Read the child's {step, errno} record; EOF means execve succeeded and
	// closed the close-on-exec write end. With a pid namespace the first
	// child (the fork above) writes a record of the two pids it forked and
	// exits; pid 1 and the target hold the write end too, and pid 1
	// closes it once it watches the target, so EOF still means exec.
	var (
		rec            [8]byte
		n              int
		err            error
		init, target   int
		gotPids, gotSE bool
		se             *StepError
		serr           error
	)
	for {
		n, err = syscall.Read(pipe[0], rec[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			serr = fmt.Errorf("forkexec: reading the child's status: %w", err)
			break
		}
		if n == 0 {
			break
		}
		if n != len(rec) {
			serr = fmt.Errorf("forkexec: short status record from the child (%d bytes): %w", n, syscall.EPIPE)
			break
		}
		r := *(*[2]uint32)(unsafe.Pointer(&rec))
		if i, t, ok := pidsRecord(r); ok && p.ns.pid && !gotPids {
			init, target, gotPids = i, t, true
		} else if !gotSE {
			se, gotSE = &StepError{Step: Step(r[0] & 0xffff), Err: syscall.Errno(r[1])}, true
			// The high half is 1 + the failing call's index in p.calls.
			if ci := int(r[0]>>16) - 1; ci >= 0 && ci < len(p.calls) {
				first := slices.IndexFunc(p.calls, func(c Call) bool { return c.step == se.Step })
				se.Call = ci - first + 1
			}
		}
		// Without a pid namespace the one record is all; with one, the
		// pids are needed too (or EOF: the fork failed before pid 1).
		if gotSE && (gotPids || !p.ns.pid) {
			break
		}
	}
	syscall.Close(pipe[0])
	runtime.KeepAlive(p)
	if serr == nil && gotSE {
		serr = se
	}
	if !p.ns.pid {
		if serr == nil {
			return Proc{Pid: int(pid)}, nil
		}
		// The child exits right after writing; reap it so no zombie is left.
		_, _ = Wait(int(pid))
		return Proc{}, serr
	}
	// The first child has exited or is about to: reap it.
	_, _ = Wait(int(pid))
	if serr == nil && target > 0 {
		return Proc{Pid: target, Init: init}, nil
	}
	if serr == nil {
		serr = fmt.Errorf("forkexec: the child reported no target pid: %w", syscall.EPIPE)
	}
	// SIGKILL to pid 1 ends the namespace (the target too); pid 1 finishes
	// exiting only once the target is reaped, so the target goes first.
	if init > 0 {
		_ = syscall.Kill(init, syscall.SIGKILL)
	}
	if target > 0 {
		_, _ = Wait(target)
	}
	if init > 0 {
		_, _ = Wait(init)
	}
	return Proc{}, serr
}

// Wait waits for the process pid to end and returns its status, retrying
// on EINTR. It is wait4(pid, &status, 0, nil).
func Wait(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}

// forkAndExecInChild forks. In the parent it returns the pid. The child
// never returns: it runs every step with raw calls only and either executes
// the target or writes {step, errno} to pipe and exits.
//
// After runtimeBeforeFork nothing here may allocate, take a lock, grow the
// stack or hit a write barrier: every callee is nosplit and norace, and the
// child writes only integers (into its frame, plan.fds and plan.os).
// All variables are declared up front, as syscall does.
//
// On linux/amd64 the fork is clone(CLONE_VM|CLONE_VFORK) (see
// vfork_linux_amd64.s for why that is safe): the parent must then not touch
// anything in this frame after doFork returns but doFork's own results, so
// it returns at once and its caller calls runtimeAfterFork.
//
//go:norace
//go:nocheckptr
//go:noinline
func forkAndExecInChild(p *plan, pipe int) (pid uintptr, err1 syscall.Errno) {
	var (
		rec     [2]uint32
		step    Step
		i, ci   int
		nextfd  int
		fd      []int
		c       *Call
		fn      *fns
		r1      uintptr
		args    [6]uintptr
		callIdx uint32 // 1 + the failing call's index in p.calls; 0: a built-in action
		sup     bool   // in the new-names supervisor
	)
	fd = p.fds
	nextfd = p.nextfd
	fn = p.fn

	runtimeBeforeFork()
	pid, err1 = doFork(fn.forkArg)
	if err1 != 0 || pid != 0 {
		return pid, err1
	}

	// In the child.
	for step = StepSession; step < stepEnd; step++ {
		switch step {
		case StepSession:
			if p.setpgid {
				err1 = sysSetpgid(fn)
			} else {
				err1 = sysSetsid(fn)
			}
			if err1 != 0 {
				goto childerror
			}
			// Restore the signal handlers and mask (std's placement: after
			// setsid/setpgid) so the target does not inherit a blocked mask.
			runtimeAfterForkInChild()

		case StepStdio:
			// syscall/exec_libc2.go's shuffle. Pass 1: move the status pipe
			// and every fd[i] < i above all fds pass 2 writes.
			if pipe < nextfd {
				err1 = sysDupCloexec(fn, pipe, nextfd)
				if err1 != 0 {
					goto childerror
				}
				pipe = nextfd
				nextfd++
			}
			for i = 0; i < len(fd); i++ {
				if fd[i] < i {
					if nextfd == pipe {
						nextfd++
					}
					err1 = sysDupCloexec(fn, fd[i], nextfd)
					if err1 != 0 {
						goto childerror
					}
					fd[i] = nextfd
					nextfd++
				}
			}
			// Pass 2: dup fd[i] onto i (the new fd is not close-on-exec);
			// where fd[i] == i, clear close-on-exec since dup2(i, i) would not.
			for i = 0; i < len(fd); i++ {
				if fd[i] == i {
					err1 = sysSetfd(fn, i, 0)
				} else {
					err1 = sysDup(fn, fd[i], i)
				}
				if err1 != 0 {
					goto childerror
				}
			}

		case StepDir:
			if p.dir != nil {
				err1 = sysChdir(fn, p.dir)
				if err1 != 0 {
					goto childerror
				}
			}

		case StepRlimit:
			for i = 0; i < len(p.rlims); i++ {
				err1 = sysSetrlimit(fn, p.rlims[i].resource, &p.rlims[i].lim)
				if err1 != 0 {
					goto childerror
				}
			}

		case StepPID:
			if p.ns.pid {
				// Returns only in the target (or with the first child's
				// error); pid 1 and the first child never return.
				err1 = pidnsFork(p, pipe)
				if err1 != 0 {
					goto childerror
				}
				// The target's own session or group: it leaves the first
				// child's behind, so its pid (Proc.Pid) is its group's.
				if p.setpgid {
					err1 = sysSetpgid(fn)
				} else {
					err1 = sysSetsid(fn)
				}
				if err1 != 0 {
					goto childerror
				}
				if p.ns.proc {
					err1 = mountProc(p)
					if err1 != 0 {
						goto childerror
					}
				}
			}

		case StepApply:
			// Descriptors are listed before the profile applies (darwin),
			// so the listing needs no rule in it; see cloexecList.
			cloexecList(p, len(fd))

		case StepCloexec:
			err1 = cloexecMark(p, len(fd), pipe)
			if err1 != 0 {
				goto childerror
			}
		}

		for ; ci < len(p.calls) && p.calls[ci].step == step; ci++ {
			c = &p.calls[ci]
			if c.sup != nil {
				if sup, err1 = superviseStart(c.sup); sup {
					superviseMain(c.sup) // never returns
				}
				if err1 != 0 {
					callIdx = uint32(ci + 1)
					goto childerror
				}
				continue
			}
			if c.pid != nil {
				*c.pid = uint64(sysGetpid(fn))
			}
			// Fail closed: the result must come from this call, not from
			// whatever the parent's slot held at fork (an integer store in
			// the child's copy, no write barrier).
			if c.result != nil {
				*c.result = 0
			}
			for i = 0; i < len(args); i++ {
				args[i] = c.args[i]
				if c.from[i] != nil {
					args[i] = *c.from[i]
				}
			}
			r1, err1 = rawCall6(c.fn, args[0], args[1], args[2], args[3], args[4], args[5])
			if c.expect {
				if err1 == c.wantErr && (err1 != 0 || r1 == c.wantRet) {
					err1 = 0
				} else if err1 == 0 || err1 == c.wantErr {
					err1 = syscall.EPERM
				}
			}
			if err1 == 0 && c.result != nil && *c.result == 0 {
				err1 = syscall.EPERM
			}
			if err1 == 0 && c.store != nil {
				*c.store = r1
			}
			for i = 0; i < len(c.eq); i++ {
				if err1 == 0 && c.eq[i] != nil && *c.eq[i] != c.eqWant[i] {
					err1 = syscall.ESTALE
				}
			}
			if err1 != 0 {
				callIdx = uint32(ci + 1)
				goto childerror
			}
		}
	}

	step = StepExec
	err1 = sysExecve(fn, p.path, &p.argv[0], &p.envv[0])

childerror:
	rec[0] = uint32(step) | callIdx<<16
	rec[1] = uint32(err1)
	sysWrite(fn, pipe, unsafe.Pointer(&rec), unsafe.Sizeof(rec))
	for {
		sysExit(fn, 253)
	}
}

// pidsTag marks the first child's pids record: no step has this number.
const pidsTag = 0xffff

// pidsRecord decodes {pidsTag | init<<16 | target<<40} (pids are below
// 2^22, PID_MAX_LIMIT); target is 0 if its fork failed.
func pidsRecord(r [2]uint32) (init, target int, ok bool) {
	v := uint64(r[0]) | uint64(r[1])<<32
	if v&0xffff != pidsTag {
		return 0, 0, false
	}
	return int(v >> 16 & 0xffffff), int(v >> 40), true
}
