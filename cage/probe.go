package cage

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
)

// ProbeResult says whether this host can cage processes: Apply is the
// in-child apply method (a deny-default child must not run its target),
// Marker the query that finds a forking run's processes. nil means it works.
type ProbeResult struct {
	OSBuild string
	Apply   error
	Marker  error
}

// Err returns the first failure, or nil.
func (r ProbeResult) Err() error { return errors.Join(r.Apply, r.Marker) }

// String summarises the result on one line.
func (r ProbeResult) String() string {
	word := func(err error) string {
		if err == nil {
			return "ok"
		}
		return "FAILED (" + err.Error() + ")"
	}
	return fmt.Sprintf("%s: apply %s; run query %s", r.OSBuild, word(r.Apply), word(r.Marker))
}

// applyVerdict judges the apply probe: a child under (deny default) was
// started for /usr/bin/true. It works when exec was refused (a step error
// at "exec" with EPERM or EACCES) or the exec'd image was killed by a signal
// before it could exit normally (dyld denied its libraries). A normal exit,
// any other step failing, or any other error means the method does not work.
func applyVerdict(osBuild string, startErr error, status syscall.WaitStatus) error {
	if startErr != nil {
		if ae, ok := errors.AsType[*ApplyError](startErr); ok && ae.Step == "exec" &&
			(ae.Errno == syscall.EPERM || ae.Errno == syscall.EACCES) {
			return nil
		}
		return &UnsupportedError{OSBuild: osBuild, What: "the in-child apply probe failed", Err: startErr}
	}
	if status.Signaled() {
		return nil
	}
	return &UnsupportedError{OSBuild: osBuild, What: fmt.Sprintf("the probe child executed its target under (deny default) (exit status %d): the profile was not applied", status.ExitStatus())}
}

// markerVerdict judges the run query on a live child of a forking run: its
// sandbox must allow the marker and deny the sibling name.
func markerVerdict(osBuild string, markerDenied, siblingDenied bool, err error) error {
	switch {
	case err != nil:
		return &UnsupportedError{OSBuild: osBuild, What: "the run-marker query failed", Err: err}
	case markerDenied:
		return &UnsupportedError{OSBuild: osBuild, What: "the run-marker query says a run's process denies its own marker"}
	case !siblingDenied:
		return &UnsupportedError{OSBuild: osBuild, What: "the run-marker query says a run's process allows a sibling name, so runs cannot be told apart"}
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
