package cage

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ProbeResult says whether this host can cage processes. nil means it
// works.
type ProbeResult struct {
	// OSBuild names the host: the macOS build, or "Linux" and the kernel
	// release.
	OSBuild string
	// Sandbox names the host's sandbox: SandboxSeatbelt on macOS,
	// SandboxLinux on Linux, "" where there is none.
	Sandbox string
	// Apply is the in-child apply method: a child under a sandbox that
	// denies everything must be refused exec of its target (EPERM from
	// Seatbelt on macOS, EACCES from Landlock on Linux).
	Apply error
	// RunSearch is the way a forking run's processes are found when the
	// run ends: the run-marker query on macOS; on Linux the run's process
	// group, which seccomp keeps them in, so there is nothing to probe.
	RunSearch error
	// Tier is the Linux tier a TierAuto cage gets here: "T1" where every
	// T1 step worked in the probe's throwaway child, else "T2"; "" off
	// Linux or when apply failed.
	Tier string
	// T1 says why the tier is T2: an *UnsupportedError wrapping the
	// *ApplyError that names the first T1 step that failed and its errno
	// (nil at T1 and off Linux).
	T1 error
	// Proc says why a T1 run gets no /proc of its own here ("T1 without
	// /proc": a container's masked /proc refuses the proc mount): an
	// *UnsupportedError wrapping the *ApplyError of the failing step. A
	// policy that grants /proc is then refused at T1. nil otherwise.
	Proc error
	// NewNames says why a T1 run's new names are not supervised here
	// (the new-names supervisor needs linux/amd64, Linux 5.19, no Yama
	// ptrace restriction and the run's own /proc, and its probe must pass):
	// a policy with a writable tree then keeps the trust-handoff gap at T1
	// too. nil where they are, at T2 and off Linux.
	NewNames error
	// Policy is what New does with the default policy (Base V1 alone)
	// here: nil, or why it refuses it (a Landlock ABI older than the plan
	// needs; a policy that waives process-access may still run). Only
	// checked when apply works; not part of Err, since the host can cage.
	Policy error
}

// The sandboxes ProbeResult.Sandbox names.
const (
	SandboxSeatbelt = "Seatbelt"
	SandboxLinux    = "Landlock+seccomp"
)

// hostSandbox is this host's ProbeResult.Sandbox.
func hostSandbox() string {
	switch {
	case !hostHasBackend:
		return ""
	case hostBackend == BackendLinux:
		return SandboxLinux
	}
	return SandboxSeatbelt
}

// errNotChecked is the RunSearch of a result whose apply probe failed.
var errNotChecked = errors.New("cage: not checked")

// Err returns Apply and RunSearch joined (errors.Join), or nil if both
// worked; a run search left unchecked because apply failed is not repeated.
func (r ProbeResult) Err() error {
	if errors.Is(r.RunSearch, errNotChecked) {
		return r.Apply
	}
	return errors.Join(r.Apply, r.RunSearch)
}

// String summarises the result on one line, naming the sandbox and each
// failure once: "Linux 6.18.1: Landlock+seccomp apply ok", "macOS 25A1:
// Seatbelt apply ok; run-marker query ok". On Linux a run's processes are
// found as its process group, which needs no query: only a failure is
// shown.
func (r ProbeResult) String() string {
	word := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, errNotChecked):
			return "not checked"
		case r.Apply != nil && err != r.Apply && err.Error() == r.Apply.Error():
			return "FAILED (as apply)"
		}
		return "FAILED (" + err.Error() + ")"
	}
	s := r.OSBuild + ": "
	if r.Sandbox != "" {
		s += r.Sandbox + " "
	}
	s += "apply " + word(r.Apply)
	switch {
	case r.Sandbox == SandboxSeatbelt:
		s += "; run-marker query " + word(r.RunSearch)
	case r.Sandbox == SandboxLinux:
		if r.RunSearch != nil && !errors.Is(r.RunSearch, errNotChecked) {
			s += "; run search " + word(r.RunSearch)
		}
	default:
		s += "; run search " + word(r.RunSearch)
	}
	if r.Tier != "" {
		s += "; tier " + r.Tier
		if r.T1 != nil {
			s += " (T1 unavailable: " + tierWhy(r.T1) + ")"
		}
		if r.Proc != nil {
			s += " without /proc (" + tierWhy(r.Proc) + ")"
		}
		switch {
		case r.Tier == "T1" && r.Proc == nil && r.NewNames == nil:
			s += "; new names supervised"
		case r.NewNames != nil:
			s += "; new names NOT supervised (" + tierWhy(r.NewNames) + ")"
		}
	}
	if r.Policy != nil {
		s += "; default policy REFUSED (" + r.Policy.Error() + ")"
	}
	return s
}

// tierWhy names the failing T1 step of a probe's T1 error.
func tierWhy(err error) string {
	if ae, ok := errors.AsType[*ApplyError](err); ok {
		if ae.Call != "" {
			return ae.Step.String() + " step " + ae.Call + ": " + ae.Errno.Error()
		}
		return ae.Step.String() + " step: " + ae.Errno.Error()
	}
	return err.Error()
}

// Probe runs (once per process; later calls return the cached verdicts)
// the checks spawning relies on: the in-child apply method of the host's
// backend, and the way a forking run's processes are found.
func Probe() ProbeResult {
	r := ProbeResult{OSBuild: hostOSBuild(), Sandbox: hostSandbox(), Apply: hostProbeApply()}
	if r.Apply == nil {
		r.RunSearch = hostProbeRuns()
	} else {
		r.RunSearch = errNotChecked
	}
	if r.Apply == nil && hostHasBackend && hostBackend == BackendLinux {
		r.Tier = "T1"
		if r.T1 = hostProbeT1(); r.T1 != nil {
			r.Tier = "T2"
		}
		r.Proc = hostProbeProc()
		if r.T1 == nil && r.Proc == nil {
			r.NewNames = hostProbeNewNames()
		}
		r.Policy = hostPolicyProbe()
	}
	return r
}

// applyVerdict judges the apply probe: a child was started for
// /usr/bin/true under a sandbox that denies everything but its own
// confirmation. Only positive evidence passes: the exec step refused with
// EPERM, reported through the status pipe. A child that executed (or died
// before exec: end-of-file on the pipe looks the same), a signalled child,
// another step failing or another errno is an *UnsupportedError naming
// what was seen. A failure to start or wait for the child says nothing
// about the host: it is returned as is, so it is not cached.
func applyVerdict(osBuild string, startErr error, status syscall.WaitStatus, waitErr error) error {
	if startErr != nil {
		ae, ok := errors.AsType[*ApplyError](startErr)
		switch {
		case !ok:
			return fmt.Errorf("cage: starting the apply probe: %w", startErr)
		case ae.Step == StepExec && ae.Errno == syscall.EPERM:
			return nil
		}
		return &UnsupportedError{OSBuild: osBuild, What: "apply probe: child failed step " + ae.Step.String() + ", not exec with EPERM", Err: startErr}
	}
	if waitErr != nil {
		return fmt.Errorf("cage: waiting for the apply probe: %w", waitErr)
	}
	var seen string
	switch {
	case status.Signaled():
		seen = "killed by signal " + status.Signal().String()
	case status.Exited():
		seen = fmt.Sprintf("exited with status %d", status.ExitStatus())
	default:
		seen = "ended without an exit status or a signal"
	}
	return &UnsupportedError{OSBuild: osBuild, What: "apply probe: exec was not refused; the child " + seen}
}

// markerVerdict judges the run query on a live child of a forking run: its
// sandbox must allow the marker and deny the sibling name.
func markerVerdict(osBuild string, markerDenied, siblingDenied bool, err error) error {
	switch {
	case err != nil:
		return &UnsupportedError{OSBuild: osBuild, What: "run-marker query failed", Err: err}
	case markerDenied:
		return &UnsupportedError{OSBuild: osBuild, What: "run-marker query: a run's process denies its own marker"}
	case !siblingDenied:
		return &UnsupportedError{OSBuild: osBuild, What: "run-marker query: a run's process allows a sibling name"}
	}
	return nil
}

// cachedVerdict runs probe until it gives a verdict about this host
// (success or an *UnsupportedError) and then keeps that answer; any other
// error (a descriptor or process limit hit for a moment) is returned and the
// probe runs again next time. Either way nothing runs unsandboxed.
func cachedVerdict(probe func() error) func() error {
	var mu sync.Mutex
	var done bool
	var verdict error
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return verdict
		}
		err := probe()
		if _, unsupported := errors.AsType[*UnsupportedError](err); err == nil || unsupported {
			done, verdict = true, err
		}
		return err
	}
}

// procCheck is the end-of-run search's answer for one process: whether it
// belongs to the run, or the query's error (ESRCH: it is gone).
type procCheck struct {
	pid  int
	ours bool
	err  error
}

// roundResult is what one kill round found.
type roundResult struct {
	killed    int   // processes of the run found and signalled
	unchecked []int // processes whose query failed otherwise than ESRCH
	err       error // the first such query error
}

// judgeRound sorts one round's answers: the processes to kill, and those
// that could not be checked. A process that is gone (ESRCH) is neither.
func judgeRound(checks []procCheck) (kill []int, res roundResult) {
	for _, c := range checks {
		switch {
		case c.err == nil && c.ours:
			kill = append(kill, c.pid)
		case c.err == nil, errors.Is(c.err, syscall.ESRCH):
		default:
			res.unchecked = append(res.unchecked, c.pid)
			if res.err == nil {
				res.err = c.err
			}
		}
	}
	res.killed = len(kill)
	return kill, res
}

// endRounds drives the end of a run: it calls round, which finds and kills
// the run's processes, until a round kills none and leaves none unchecked,
// at most rounds times, sleeping a little longer after each. It never
// reports a run ended that it could not see end: survivors after the last
// round wrap ErrRunNotEnded, and processes the last round could not check
// are an uncheckedError.
func endRounds(rounds int, round func() (roundResult, error)) error {
	var last roundResult
	for i := range rounds {
		res, err := round()
		if err != nil {
			return err
		}
		if res.killed == 0 && len(res.unchecked) == 0 {
			return nil
		}
		last = res
		time.Sleep(time.Duration(i+1) * time.Millisecond)
	}
	if last.killed > 0 {
		err := fmt.Errorf("%w: after %d rounds", ErrRunNotEnded, rounds)
		if len(last.unchecked) > 0 {
			err = errors.Join(err, uncheckedError(last.unchecked, last.err))
		}
		return err
	}
	return uncheckedError(last.unchecked, last.err)
}
