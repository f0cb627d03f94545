package forkexec

import (
	"errors"
	"strconv"
	"syscall"
	"unsafe"
)

// Step names one stage of the child's set-up. A failing stage is reported
// as a [*StepError] carrying its Step.
type Step uint32

// The stages, listed in the order the child runs them. StepStdio, StepDir,
// StepNamespace and StepPID run before StepRlimit so that a lowered
// RLIMIT_NOFILE cannot make the descriptor shuffle or the namespace set-up
// fail (they open descriptors above every caller's fd); the spec's order —
// session and limits before the profile — is unchanged.
const (
	StepSession   Step = iota + 1 // setsid, or setpgid(0, 0) with Attr.ProcessGroup
	StepStdio                     // dup2 Attr.Files onto 0..n-1
	StepDir                       // chdir(Attr.Dir)
	StepNamespace                 // namespaces and mounts (Calls only; Linux tier T1)
	StepPID                       // Linux, Attr.PIDNamespace: fork pid 1 and the target, mount /proc
	StepRlimit                    // Attr.Rlimits, then the RLIMIT_NOFILE restore
	StepApply                     // apply the compiled profile (Calls only)
	StepConfirm                   // confirm the child is sandboxed (Calls only)
	StepConsume                   // consume grant tokens (Calls only)
	StepCloexec                   // mark every descriptor >= len(Files) close-on-exec
	StepExec                      // execve(Attr.Path)
	stepEnd
)

var stepNames = [...]string{
	StepSession:   "session",
	StepStdio:     "stdio",
	StepDir:       "chdir",
	StepRlimit:    "rlimit",
	StepNamespace: "namespace",
	StepPID:       "pidns",
	StepApply:     "apply",
	StepConfirm:   "confirm",
	StepConsume:   "consume",
	StepCloexec:   "cloexec",
	StepExec:      "exec",
}

func (s Step) String() string {
	if s >= StepSession && s < stepEnd {
		return stepNames[s]
	}
	return "step(" + strconv.FormatUint(uint64(s), 10) + ")"
}

func (s Step) valid() bool { return s >= StepSession && s < stepEnd }

// Rlimit is one resource limit the child sets with setrlimit (prlimit64 on
// Linux). Resource is a RLIMIT_* constant of the target OS.
type Rlimit struct {
	Resource int
	Cur, Max uint64
}

// Attr describes the child to start. Every field is read before fork; the
// child runs on copies prepared by [Start].
type Attr struct {
	Path         string    // absolute path of the executable (no PATH lookup)
	Args         []string  // argv, including argv[0]; must not be empty
	Env          []string  // environment, "KEY=value" entries
	Dir          string    // working directory; "" inherits the parent's
	Files        []uintptr // child fd i = Files[i]; at least 0, 1 and 2
	ProcessGroup bool      // false: setsid (new session); true: setpgid(0, 0)
	Rlimits      []Rlimit  // applied in order at StepRlimit
	Calls        []Call    // prepared raw calls, each run at its Step's position, in order

	// PIDNamespace (Linux) starts the run in a new pid namespace at
	// StepPID (see [StartProc]); Start refuses it. The namespace belongs to
	// the user namespace the child is in then: the StepNamespace calls
	// enter the user and mount namespaces (internal/linuxsandbox's
	// NamespaceCalls, the one owner of unshare, id maps and mount
	// propagation), forkexec only the pid namespace, which needs the fork.
	PIDNamespace bool
	// MountProc mounts a fresh procfs on /proc in the target at StepPID,
	// so /proc shows only the run's processes. It needs PIDNamespace, and
	// the StepNamespace calls must have entered a mount namespace: the
	// child checks that its mount namespace is not the caller's
	// (/proc/self/ns/mnt) and fails StepPID with EINVAL otherwise, never
	// mounting over the caller's /proc. Calls tagged StepPID run right
	// after the mount (a Landlock rule for the new /proc goes there: a rule
	// on the host's /proc does not cover the mount on top of it).
	MountProc bool
}

// Proc is a child started in its own pid namespace by [StartProc].
type Proc struct {
	// Pid is the target, a direct child of the caller (signal it, wait
	// for it as for any child); inside the namespace it is pid 2.
	Pid int
	// Init is the namespace's pid 1, also the caller's child: it reaps
	// the run's orphans and, when the target ends, ends and takes every
	// other process of the namespace with it. The caller must reap it
	// after the target: it cannot finish exiting while the target is an
	// unreaped zombie. 0 without Attr.PIDNamespace.
	Init int
}

// Wait waits for the target, then for the namespace's pid 1 (the rest of
// the run has ended then), and returns the target's status.
func (p Proc) Wait() (syscall.WaitStatus, error) {
	ws, err := Wait(p.Pid)
	if p.Init > 0 {
		_, ierr := Wait(p.Init)
		err = errors.Join(err, ierr)
	}
	return ws, err
}

// Call is one raw call prepared in the parent and issued by the child at the
// position of its Step, after the built-in action of that step. On Linux it
// is a system call number with arguments ([RawCall]); on darwin a libc
// function pointer with arguments ([MacSyscall]). It fails its step when the
// call reports an errno or, if it has a result pointer, when the pointed-to
// value is still zero afterwards (EPERM): that is how a confirmation fails
// closed.
type Call struct {
	step   Step
	fn     uintptr    // syscall number (linux) or libc function (darwin)
	args   [6]uintptr // unused trailing arguments are zero
	result *uint64    // if non-nil, *result == 0 after the call fails the step
	pid    *uint64    // if non-nil, the child stores getpid() here before the call
	keep   [4]unsafe.Pointer

	expect  bool // RawCallExpect: the call must return wantRet / wantErr
	wantRet uintptr
	wantErr syscall.Errno

	sup *Supervisor // SuperviseCall: start the new-names supervisor here

	// Slots: words prepared in the parent that the child writes and reads
	// at call time, so one call can use what an earlier one returned (an
	// fd it opened) without allocating. The child stores integers only.
	store  *uintptr    // StoreResult: the call's return value goes here
	from   [6]*uintptr // ArgFrom: argument i is read from here at call time
	eq     [2]*uint64  // WantEqual: after the call *eq[i] must be eqWant[i]
	eqWant [2]uint64
}

// StoreResult returns a copy of c whose child stores the call's return
// value (on success) into *slot, for a later call's [Call.ArgFrom]. The
// slot is written in the child: with CLONE_VM that is the parent's memory,
// so a slot must belong to one spawn, never be shared by concurrent ones.
func (c Call) StoreResult(slot *uintptr) Call {
	c.store = slot
	return c
}

// ArgFrom returns a copy of c whose argument i is read from *slot when the
// child issues the call (an fd an earlier call stored with
// [Call.StoreResult]), instead of the value it was built with. It panics
// if i is not 0..5.
func (c Call) ArgFrom(i int, slot *uintptr) Call {
	c.from[i] = slot
	return c
}

// WantEqual returns a copy of c that fails its step with ESTALE unless,
// after the call succeeded, *word == want: a fstat'ed (dev, ino) checked
// against the parent's record, so a rename swapped in between fails
// closed. A call takes at most two; a third panics.
func (c Call) WantEqual(word *uint64, want uint64) Call {
	switch {
	case c.eq[0] == nil:
		c.eq[0], c.eqWant[0] = word, want
	case c.eq[1] == nil:
		c.eq[1], c.eqWant[1] = word, want
	default:
		panic("forkexec: Call.WantEqual: at most two words")
	}
	return c
}

// Step reports the stage at which the child issues c.
func (c Call) Step() Step { return c.step }

// WithPID returns a copy of c whose child, just before issuing the call,
// stores its own process id into *slot. Use it for call blocks that must
// name the child (a sandbox check on self), since the pid is unknown before
// fork. slot must point into memory the call's argument keeps alive.
func (c Call) WithPID(slot *uint64) Call {
	c.pid = slot
	c.keep[3] = unsafe.Pointer(slot)
	return c
}

// WithResult returns a copy of c that fails its step with EPERM unless
// *result is non-zero after the call.
func (c Call) WithResult(result *uint64) Call {
	c.result = result
	c.keep[2] = unsafe.Pointer(result)
	return c
}

// StepError reports that the child failed a step; the target never ran.
// errors.Is works with the errno (and so with fs.ErrPermission for EPERM
// and EACCES).
type StepError struct {
	Step Step
	Err  syscall.Errno
	// Call is the position (1-based), among the Attr.Calls tagged with
	// Step in the order given, of the call that failed; 0 means the step's
	// built-in action.
	Call int
}

func (e *StepError) Error() string {
	if e.Call > 0 {
		return "procage child: " + e.Step.String() + " call " + strconv.Itoa(e.Call) + ": " + e.Err.Error()
	}
	return "procage child: " + e.Step.String() + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// ErrInvalidAttr is wrapped by every error Start returns for an Attr it
// rejects before forking.
var ErrInvalidAttr = errors.New("forkexec: invalid Attr")

// ErrNotSandboxed is returned (wrapped) on darwin when an Attr carries no
// StepApply call or no StepConfirm call with a result pointer: the engine
// never starts a target it cannot prove sandboxed.
var ErrNotSandboxed = errors.New("forkexec: Attr has no apply and confirm calls; refusing to start an unsandboxed child")

// KeptAbove returns the lowest descriptor number the child's descriptor
// shuffle for files cannot overwrite: it dup2s onto 0..len(files)-1 and
// onto numbers from just above every caller's fd upwards, one per moved fd
// and one for its status pipe. A descriptor a [Call] names after
// StepStdio (a Landlock ruleset, say) must be at least this number.
func KeptAbove(files []uintptr) int {
	top := len(files)
	for _, f := range files {
		top = max(top, int(min(f, 1<<30)))
	}
	return top + 1 + len(files) + 1
}
