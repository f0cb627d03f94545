package cage

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// ErrAlreadySandboxed is returned by [New] when the calling process already
// runs under a Seatbelt profile: macOS refuses a second profile in a
// sandboxed process (and its children inherit the outer one), so a cage
// cannot be built there. Run the program outside the outer sandbox.
var ErrAlreadySandboxed = errors.New("cage: this process is already sandboxed; a nested Seatbelt profile would fail or be ignored, so run it outside the outer sandbox")

// ErrRunNotEnded is returned (wrapped) by [Cmd.Wait] and [Cmd.Kill] when
// processes of a forking run were still found after every kill round.
var ErrRunNotEnded = errors.New("cage: processes of the run were still alive after the last kill round")

// CaseSensitiveError reports an allow rule, allowed Unix socket,
// Seatbelt-layer allow or grant naming a path on a case-sensitive volume.
// Seatbelt matches paths case-insensitively on every volume, so the rule
// would also allow the name's case variants, which are other files there.
// errors.Is(err, pathresolve.ErrCaseSensitive) holds.
type CaseSensitiveError = pathresolve.CaseSensitiveError

// LinkError reports a policy path or grant that resolves through a
// symbolic link a caged child could have planted: a link inside a tree the
// policy grants that leads out of it, or one that leads to its own
// ancestor. Accept a link you trust with [AcceptLink].
// errors.Is(err, pathresolve.ErrSuspectLink) holds.
type LinkError = pathresolve.LinkError

// LimitError reports a profile with more rules than the compile limit
// ([WithCompileLimit], default [profile.DefaultLimit]): libsandbox aborts
// its caller on very large profiles, so the count is checked first.
type LimitError = profile.LimitError

// CompileError reports a profile libsandbox rejected, with its message.
type CompileError struct {
	Message string
}

func (e *CompileError) Error() string {
	return "cage: libsandbox rejected the profile: " + e.Message + "; check the Seatbelt-layer rules of the policy"
}

// ApplyError reports that the forked child failed one of its set-up steps
// ("session", "rlimit", "stdio", "chdir", "apply", "confirm", "consume",
// "cloexec", "exec"); the target never ran. It wraps the errno, so
// errors.Is(err, fs.ErrPermission) holds for EPERM and EACCES.
type ApplyError struct {
	Step  string
	Errno syscall.Errno
}

func (e *ApplyError) Error() string {
	hint := ""
	switch e.Step {
	case "apply", "confirm":
		hint = "; the Seatbelt profile could not be put in force, so the target was not started"
	case "consume":
		hint = "; a grant's extension token was refused, check the grant paths"
	case "exec":
		hint = "; the profile must allow executing and reading the target (for example profile.Exec on its directory)"
	}
	return fmt.Sprintf("cage: child step %s failed: %v%s", e.Step, e.Errno, hint)
}

// Unwrap returns the errno.
func (e *ApplyError) Unwrap() error { return e.Errno }

// UnsupportedError reports that this host cannot cage a process: not macOS,
// a libsandbox symbol missing, or a failed probe ([Probe]). It satisfies
// errors.Is(err, errors.ErrUnsupported). There is never a fallback to
// running unsandboxed.
type UnsupportedError struct {
	OSBuild string // e.g. "macOS 25G123" or "linux"
	What    string // what does not work
	Err     error  // the underlying cause, if any
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("cage: unsupported on %s: %s", e.OSBuild, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s + "; procage cannot confine processes here and will not run them unconfined"
}

// Is reports errors.ErrUnsupported as a match.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Unwrap returns the cause.
func (e *UnsupportedError) Unwrap() error { return e.Err }
