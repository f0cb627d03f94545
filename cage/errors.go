package cage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile/seatbelt"
)

// ErrAlreadySandboxed is returned by [New] when the calling process already
// runs under a Seatbelt profile: macOS refuses a second profile in a
// sandboxed process (and its children inherit the outer one), so a cage
// cannot be built there. Run the program outside the outer sandbox.
var ErrAlreadySandboxed = errors.New("cage: already sandboxed")

// ErrRunNotEnded is returned (wrapped) by [Cmd.Wait] and [Cmd.Kill] when
// processes of a run were still found after every kill round, or could not
// be checked ([*UncheckedError]): the run may not have ended.
var ErrRunNotEnded = errors.New("cage: run not ended")

// ErrTempNotRemoved is matched (errors.Is) by the error [Cmd.Wait] returns
// when the run's private temporary directory ([WithPrivateTemp]) could not
// be removed; the error is a [*TempDirError] naming it.
var ErrTempNotRemoved = errors.New("cage: private temporary directory not removed")

// TempDirError reports a private temporary directory that outlived its
// run: removing it failed even after every directory in it was made
// accessible again, so it and what the run left there remain. Wait joins
// it to the run's own error (an *exec.ExitError stays reachable through
// errors.As); errors.Is(err, ErrTempNotRemoved) holds.
type TempDirError struct {
	Path string
	Err  error
}

func (e *TempDirError) Error() string {
	return "cage: private temporary directory " + e.Path + " not removed: " + e.Err.Error()
}

// Is reports ErrTempNotRemoved as a match.
func (e *TempDirError) Is(target error) bool { return target == ErrTempNotRemoved }

// Unwrap returns the removal's error.
func (e *TempDirError) Unwrap() error { return e.Err }

// CaseSensitiveError reports an allow rule, allowed Unix socket,
// Seatbelt-layer allow or grant naming a path on a case-sensitive volume,
// for the macOS backend. Seatbelt matches paths case-insensitively on every
// volume, so the rule would also allow the name's case variants, which are
// other files there. errors.Is(err, pathresolve.ErrCaseSensitive) holds.
type CaseSensitiveError = pathresolve.CaseSensitiveError

// LinkError reports a policy path or grant that resolves through a
// symbolic link a caged child could have planted: a link inside a tree the
// policy grants that leads out of it, or one that leads to its own
// ancestor. Accept a link you trust with [AcceptLink].
// errors.Is(err, pathresolve.ErrSuspectLink) holds.
type LinkError = pathresolve.LinkError

// LimitError reports a macOS profile with more rules than the compile
// limit ([WithCompileLimit], default [seatbelt.DefaultLimit]): libsandbox
// aborts its caller on very large profiles, so the count is checked first.
type LimitError = seatbelt.LimitError

// CompileError reports a profile libsandbox rejected (macOS backend), with
// its message. The Seatbelt-layer rules of the policy are the usual cause.
type CompileError struct {
	Message string
}

func (e *CompileError) Error() string {
	return "cage: libsandbox rejected the profile: " + e.Message
}

// Step names one stage of the caged child's set-up, in the order the child
// runs them. Test an [*ApplyError]'s Step against these constants.
type Step int

// The child's steps. StepApply, StepConfirm and StepConsume are the
// backend's: on macOS, apply the compiled profile, confirm the child is
// sandboxed, consume grant tokens.
const (
	StepSession Step = Step(forkexec.StepSession) // setsid, or setpgid with TTYInherit
	StepStdio   Step = Step(forkexec.StepStdio)   // descriptors 0..n-1
	StepDir     Step = Step(forkexec.StepDir)     // chdir(Dir)
	StepRlimit  Step = Step(forkexec.StepRlimit)  // resource limits
	StepApply   Step = Step(forkexec.StepApply)   // put the sandbox in force
	StepConfirm Step = Step(forkexec.StepConfirm) // prove it is in force
	StepConsume Step = Step(forkexec.StepConsume) // take the spawn's grants
	StepCloexec Step = Step(forkexec.StepCloexec) // close other descriptors on exec
	StepExec    Step = Step(forkexec.StepExec)    // execve(Path)
)

// String returns the step's name ("session", "exec", ...).
func (s Step) String() string {
	if s < 0 || s > 1<<16 {
		return "step(" + strconv.Itoa(int(s)) + ")"
	}
	return forkexec.Step(s).String()
}

// ApplyError reports that the forked child failed one of its set-up
// steps; the target never ran. It wraps the errno, so errors.Is(err,
// fs.ErrPermission) holds for EPERM and EACCES.
//
// What a step's failure usually means: at [StepApply] or [StepConfirm]
// the sandbox could not be put in force; at [StepConsume] a grant's token
// was refused (check the grant paths); at [StepExec] with EPERM or EACCES
// the sandbox does not allow executing and reading the target (for example
// add profile.Exec on its directory).
type ApplyError struct {
	Step  Step
	Call  string // the failing call within Step, as the backend names it; "" for the step itself
	Errno syscall.Errno
}

func (e *ApplyError) Error() string {
	if e.Call != "" {
		return "cage: child step " + e.Step.String() + " (" + e.Call + "): " + e.Errno.Error()
	}
	return "cage: child step " + e.Step.String() + ": " + e.Errno.Error()
}

// Unwrap returns the errno.
func (e *ApplyError) Unwrap() error { return e.Errno }

// UnsupportedError reports that this host cannot cage a process: no
// backend for this OS or a cage planned for another OS's backend, a
// missing libsandbox symbol, too old a kernel, or a failed probe
// ([Probe]). It satisfies errors.Is(err, errors.ErrUnsupported). There is
// never a fallback to running unsandboxed: procage refuses rather than run
// a target unconfined.
type UnsupportedError struct {
	OSBuild string // e.g. "macOS 25G123" or "linux"
	What    string // what does not work
	Err     error  // the underlying cause, if any
}

func (e *UnsupportedError) Error() string {
	s := "cage: unsupported on " + e.OSBuild + ": " + e.What
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports errors.ErrUnsupported as a match.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Unwrap returns the cause.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// UncheckedError reports processes that ending a run could not check
// (macOS: the sandbox query for them failed with an error other than "no
// such process"): each may be a process of the run that is still alive.
// errors.Is(err, ErrRunNotEnded) holds.
type UncheckedError struct {
	PIDs []int
	Err  error // the first query error
}

func (e *UncheckedError) Error() string {
	ps := make([]string, len(e.PIDs))
	for i, p := range e.PIDs {
		ps[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("cage: could not check processes %s: %v", strings.Join(ps, " "), e.Err)
}

// Is reports ErrRunNotEnded as a match.
func (e *UncheckedError) Is(target error) bool { return target == ErrRunNotEnded }

// Unwrap returns the first query error.
func (e *UncheckedError) Unwrap() error { return e.Err }
