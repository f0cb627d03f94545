package cage

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// ErrAlreadySandboxed is returned by [New] when the calling process already
// runs under a Seatbelt profile: macOS refuses a second profile in a
// sandboxed process (and its children inherit the outer one), so a cage
// cannot be built there. Run the program outside the outer sandbox.
var ErrAlreadySandboxed = errors.New("cage: already sandboxed")

// ErrRunNotEnded is returned (wrapped) by [Cmd.Wait] and [Cmd.Kill] when
// processes of a run were still found after every kill round, or could not
// be checked (the error names their process IDs): the run may not have
// ended.
var ErrRunNotEnded = errors.New("cage: run not ended")

// ErrTempNotRemoved is matched (errors.Is) by the error [Cmd.Wait] returns
// when the run's private temporary directory ([WithPrivateTemp]) could not
// be removed; errors.As finds an *fs.PathError naming it.
var ErrTempNotRemoved = errors.New("cage: private temporary directory not removed")

// tempDirError is Wait's report of a private temporary directory that
// outlived its run: removing it failed even after every directory in it was
// made accessible again. errors.Is(err, ErrTempNotRemoved) holds and
// errors.As finds the *fs.PathError naming the directory.
func tempDirError(dir string, err error) error {
	return fmt.Errorf("%w: %w", ErrTempNotRemoved, &fs.PathError{Op: "remove", Path: dir, Err: err})
}

// The kinds of [*PolicyError]: errors.Is(err, kind) holds for its kind.
var (
	// ErrSuspectLink: a policy path or grant resolves through a symbolic
	// link a caged child could have planted (inside a tree the policy
	// grants, leading out of it, or to its own ancestor). Accept a link
	// you trust with [AcceptLink]. errors.As finds the
	// *pathresolve.LinkError with the link and where it leads.
	ErrSuspectLink = pathresolve.ErrSuspectLink
	// ErrCaseSensitive: an allow rule, allowed Unix socket, Seatbelt-layer
	// allow or grant names a path on a case-sensitive volume, for the
	// macOS backend. Seatbelt matches paths case-insensitively on every
	// volume, so the rule would also allow the name's case variants, which
	// are other files there.
	ErrCaseSensitive = pathresolve.ErrCaseSensitive
	// ErrTooManyRules: a macOS profile has more rules than the compile
	// limit ([WithCompileLimit]); libsandbox aborts its caller on very
	// large profiles, so the count is checked before anything is compiled.
	ErrTooManyRules = errors.New("cage: more rules than the compile limit")
	// ErrProfileRejected: libsandbox rejected the profile (macOS); the
	// Seatbelt-layer rules of the policy are the usual cause.
	ErrProfileRejected = errors.New("cage: libsandbox rejected the profile")
	// ErrGap: the Linux backend cannot enforce parts of the policy
	// ([PolicyError.Gaps]) and the caller did not accept them
	// ([AcceptGaps]).
	ErrGap = errors.New("cage: the Linux backend cannot enforce part of the policy")
	// ErrLiteralDirectory: a rule for one file (a Literal rule, a file
	// grant) names a directory, whose file rights on Linux would reach
	// every file beneath it (Linux).
	ErrLiteralDirectory = linux.ErrLiteralDirectory
	// ErrPathChanged: a path changed between its link check and the open
	// its rule is bound to (Linux): a link was swapped in, so it is
	// refused rather than followed.
	ErrPathChanged = linux.ErrPathChanged
)

// PolicyError reports a policy, option or grant a cage refuses before
// anything runs. Kind is one of [ErrSuspectLink], [ErrCaseSensitive],
// [ErrTooManyRules], [ErrProfileRejected], [ErrGap], [ErrLiteralDirectory]
// and [ErrPathChanged]; errors.Is(err,
// Kind) holds, and Err, the detail, is reachable with errors.As (for
// example a *pathresolve.LinkError or a *profile.GapError).
type PolicyError struct {
	Kind error
	Path string            // ErrSuspectLink: the link (what AcceptLink takes); ErrCaseSensitive: the path; else ""
	Gaps []profile.GapPart // the parts Linux cannot enforce (ErrGap)
	Err  error             // the detail
}

func (e *PolicyError) Error() string {
	if e.Err == nil {
		return e.Kind.Error()
	}
	// The detail's own package prefix would pile up behind cage's.
	s := e.Err.Error()
	for _, p := range []string{"cage: ", "pathresolve: ", "seatbelt: "} {
		s = strings.TrimPrefix(s, p)
	}
	return "cage: " + s
}

// Unwrap returns Kind and Err.
func (e *PolicyError) Unwrap() []error { return []error{e.Kind, e.Err} }

// policyError returns err as a *PolicyError if it is one of the refusals
// PolicyError kinds name, else err unchanged. It is applied where New and
// Start return, so every such refusal has one type.
func policyError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*PolicyError](err); ok {
		return err
	}
	if le, ok := errors.AsType[*pathresolve.LinkError](err); ok {
		return &PolicyError{Kind: ErrSuspectLink, Path: le.Link, Err: le}
	}
	if ce, ok := errors.AsType[*pathresolve.CaseSensitiveError](err); ok {
		return &PolicyError{Kind: ErrCaseSensitive, Path: ce.Path, Err: ce}
	}
	if ge, ok := errors.AsType[*profile.GapError](err); ok {
		return &PolicyError{Kind: ErrGap, Gaps: ge.Parts, Err: ge}
	}
	for _, k := range []error{ErrLiteralDirectory, ErrPathChanged} {
		if errors.Is(err, k) {
			return &PolicyError{Kind: k, Err: err}
		}
	}
	return err
}

// Step names one stage of the caged child's set-up, in the order the child
// runs them. Test an [*ApplyError]'s Step against these constants.
type Step int

// The child's steps. StepApply, StepConfirm and StepConsume are the
// backend's: on macOS, apply the compiled profile, confirm the child is
// sandboxed, consume grant tokens.
const (
	StepSession   Step = Step(forkexec.StepSession)   // setsid, or setpgid with TTYInherit
	StepStdio     Step = Step(forkexec.StepStdio)     // descriptors 0..n-1
	StepDir       Step = Step(forkexec.StepDir)       // chdir(Dir)
	StepNamespace Step = Step(forkexec.StepNamespace) // Linux tier T1: namespaces and mounts
	StepPID       Step = Step(forkexec.StepPID)       // Linux tier T1: the run's pid namespace, its pid 1 and /proc
	StepRlimit    Step = Step(forkexec.StepRlimit)    // resource limits
	StepApply     Step = Step(forkexec.StepApply)     // put the sandbox in force
	StepConfirm   Step = Step(forkexec.StepConfirm)   // prove it is in force
	StepConsume   Step = Step(forkexec.StepConsume)   // take the spawn's grants
	StepCloexec   Step = Step(forkexec.StepCloexec)   // close other descriptors on exec
	StepExec      Step = Step(forkexec.StepExec)      // execve(Path)
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

// Unwrap returns errors.ErrUnsupported and the cause.
func (e *UnsupportedError) Unwrap() []error { return []error{errors.ErrUnsupported, e.Err} }

// uncheckedError reports processes that ending a run could not check
// (macOS: the sandbox query for them failed with an error other than "no
// such process"): each may be a process of the run that is still alive.
// errors.Is(err, ErrRunNotEnded) holds.
func uncheckedError(pids []int, err error) error {
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	return fmt.Errorf("%w: could not check processes %s: %w", ErrRunNotEnded, strings.Join(ps, " "), err)
}
