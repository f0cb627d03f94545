package cage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// The macOS backend: Seatbelt. Only what is Seatbelt lives here (the
// libsandbox calls, the child's apply/confirm/consume calls, the
// run-marker search, the probes); the lifecycle is portable.

const (
	hostBackend    = BackendMacOS
	hostHasBackend = true
)

// sZomb is p_stat of a zombie (xnu bsd/sys/proc.h: #define SZOMB 5).
const sZomb = 5

// checkPIDOffset is the offset of the pid in the Sandbox call-2 block
// (Finch's reading of libsandbox's sandbox_check). The child writes its
// own pid there (forkexec Call.WithPID), since the pid is unknown before
// fork.
const checkPIDOffset = 8

var loadLib = sync.OnceValues(libsandbox.Load)

// hostOSBuild names the macOS build, kern.osversion.
func hostOSBuild() string {
	v, err := unix.Sysctl("kern.osversion")
	if err != nil || v == "" {
		return "macOS (build unknown)"
	}
	return "macOS " + v
}

// hostLandlockABI: no Landlock here; a Linux plan is for the newest ABI.
func hostLandlockABI() int { return 0 }

func libOrUnsupported() (*libsandbox.Lib, error) {
	lib, err := loadLib()
	if err != nil {
		return nil, &UnsupportedError{OSBuild: hostOSBuild(), What: "libsandbox interface not available", Err: err}
	}
	return lib, nil
}

func hostSandboxed() (bool, error) {
	lib, err := libOrUnsupported()
	if err != nil {
		return false, err
	}
	is, err := lib.IsSandboxed(os.Getpid())
	if err != nil {
		return false, &UnsupportedError{OSBuild: hostOSBuild(), What: "sandbox self check failed", Err: err}
	}
	return is, nil
}

func seatbeltCompiler() (compiler, error) {
	lib, err := libOrUnsupported()
	if err != nil {
		return nil, err
	}
	return lib, nil
}

// hostEnforce makes the Seatbelt backend of a macOS-backend cage.
func hostEnforce(_ *Cage, p planned) (backend, error) {
	sp, ok := p.(*seatbeltPlan)
	if !ok || sp.comp == nil {
		return nil, errors.New("cage: no compiled Seatbelt plan")
	}
	return &seatbeltBackend{plan: sp}, nil
}

// seatbeltBackend is a cage's Seatbelt backend.
type seatbeltBackend struct {
	plan *seatbeltPlan
}

func (s *seatbeltBackend) probe(forking bool) error {
	if err := probeApply(); err != nil {
		return err
	}
	if forking {
		return probeMarker()
	}
	return nil
}

func (s *seatbeltBackend) child(sp *spawnSpec) (*childSpec, error) {
	lib, err := libOrUnsupported()
	if err != nil {
		return nil, err
	}
	code, err := s.plan.code(sp.target, sp.marker, sp.temp, sp.proxyPort)
	if err != nil {
		return nil, err
	}
	calls, keep, err := sandboxCalls(lib, code, sp.marker, sp.grants)
	if err != nil {
		return nil, err
	}
	return &childSpec{calls: calls, keep: keep}, nil
}

// endRun kills every process carrying the run's marker (zombies are
// skipped, so whether the child was reaped does not matter).
func (s *seatbeltBackend) endRun(r *run, _ bool) error {
	if r.marker == "" {
		return nil
	}
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	return killMarked(lib, r.marker)
}

// sandboxCalls prepares the child's raw calls: apply code, confirm the
// child is sandboxed (and, with a marker, that it denies the run prefix's
// sibling name, which only this profile does), consume each grant.
func sandboxCalls(lib *libsandbox.Lib, code []byte, marker string, grants []grant) ([]forkexec.Call, []any, error) {
	policy := &libsandbox.PolicyName[0]
	apply := libsandbox.NewApply(code)
	ca, err := forkexec.MacSyscall(forkexec.StepApply, policy, libsandbox.CallApply, apply.Arg(), nil)
	if err != nil {
		return nil, nil, err
	}
	self := libsandbox.NewSelfCheck(0)
	cc, err := forkexec.MacSyscall(forkexec.StepConfirm, policy, libsandbox.CallCheck, self.Arg(), self.Result())
	if err != nil {
		return nil, nil, err
	}
	calls := []forkexec.Call{ca, cc.WithPID(pidSlot(self))}
	keep := []any{apply, self}
	if marker != "" {
		sib, err := libsandbox.NewMarkerCheck(0, siblingName())
		if err != nil {
			return nil, nil, err
		}
		cs, err := forkexec.MacSyscall(forkexec.StepConfirm, policy, libsandbox.CallCheck, sib.Arg(), sib.Result())
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, cs.WithPID(pidSlot(sib)))
		keep = append(keep, sib)
	}
	for _, g := range grants {
		token, err := lib.IssueExtension(g.extensionClass(), g.path)
		if err != nil {
			return nil, nil, fmt.Errorf("cage: issuing a grant for %q: %w", g.path, err)
		}
		cons, err := libsandbox.NewConsume(token)
		if err != nil {
			return nil, nil, err
		}
		// Chromium treats a handle > 0 as consumed; 0 is the "invalid" token.
		call, err := forkexec.MacSyscall(forkexec.StepConsume, policy, libsandbox.CallConsume, cons.Arg(), (*uint64)(unsafe.Pointer(cons.Handle())))
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, call)
		keep = append(keep, cons)
	}
	return calls, keep, nil
}

func pidSlot(c *libsandbox.CheckCall) *uint64 {
	return (*uint64)(unsafe.Add(c.Arg(), checkPIDOffset))
}

// killMarked finds the user's processes whose sandbox allows marker and
// denies the sibling name (only a run's processes split that way) and
// kills them, in rounds, until a round finds none (endRounds). A query
// failing otherwise than ESRCH is never taken as "not ours": the process
// is reported as unchecked.
//
// Between finding a process and killing it the process could exit and its
// pid be reused: kill(2) takes a pid. sandbox_check_by_audit_token and
// proc_signal_with_audittoken (ESRCH on a stale pid version; xnu
// tests/signal_exit_reason.c) could pin query and kill to one process
// incarnation; unmeasured, so the pid form is kept (docs/macos-backend.md).
func killMarked(lib *libsandbox.Lib, marker string) error {
	uid, self := uint32(os.Getuid()), int32(os.Getpid())
	sibling := siblingName()
	return endRounds(killRounds, func() (roundResult, error) {
		procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
		if err != nil {
			return roundResult{}, fmt.Errorf("cage: listing processes: %w", err)
		}
		var checks []procCheck
		for i := range procs {
			p := &procs[i]
			pid := p.Proc.P_pid
			if pid <= 1 || pid == self || p.Proc.P_stat == sZomb {
				continue
			}
			if p.Eproc.Ucred.Uid != uid && p.Eproc.Pcred.P_ruid != uid {
				continue
			}
			md, sd, err := markerState(lib, int(pid), marker, sibling)
			checks = append(checks, procCheck{pid: int(pid), ours: !md && sd, err: err})
		}
		kill, res := judgeRound(checks)
		for _, pid := range kill {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		return res, nil
	})
}

func markerState(lib *libsandbox.Lib, pid int, marker, sibling string) (markerDenied, siblingDenied bool, err error) {
	markerDenied, err = lib.Check(pid, "mach-lookup", libsandbox.FilterGlobalName, marker, libsandbox.CheckNoReport)
	if err != nil {
		return false, false, err
	}
	siblingDenied, err = lib.Check(pid, "mach-lookup", libsandbox.FilterGlobalName, sibling, libsandbox.CheckNoReport)
	return markerDenied, siblingDenied, err
}

// probeProfile denies everything but the child's confirmation call, so the
// probe exercises the same in-child sequence as a real spawn.
const probeProfile = `(version 1)
(deny default)
(allow system-mac-syscall (require-all (mac-policy-name "Sandbox") (mac-syscall-number 2)))
`

// probeApply checks once per process that the in-child apply works: a
// child of /usr/bin/true under probeProfile must be refused exec with EPERM.
var probeApply = cachedVerdict(func() error {
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	code, err := lib.Compile(probeProfile, nil)
	if err != nil {
		return &UnsupportedError{OSBuild: hostOSBuild(), What: "probe profile does not compile", Err: err}
	}
	calls, keep, err := sandboxCalls(lib, code, "", nil)
	if err != nil {
		return &UnsupportedError{OSBuild: hostOSBuild(), What: "preparing the probe", Err: err}
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	fd := null.Fd()
	pid, err := forkexec.Start(&forkexec.Attr{
		Path: "/usr/bin/true", Args: []string{"true"}, Files: []uintptr{fd, fd, fd}, Calls: calls,
	})
	runtime.KeepAlive(keep)
	var status syscall.WaitStatus
	var waitErr error
	if err == nil {
		status, waitErr = forkexec.Wait(pid)
	}
	return applyVerdict(hostOSBuild(), applyError(err), status, waitErr)
})

// hostProbeApply is the apply probe.
func hostProbeApply() error { return probeApply() }

// hostProbeRuns is the run-marker probe.
func hostProbeRuns() error { return probeMarker() }

// probeMarker checks once per process that a forking run's processes can
// be found: a sleeping child of a forking policy must allow its marker and
// deny the sibling name.
var probeMarker = cachedVerdict(func() error {
	build := hostOSBuild()
	pol, err := profile.New(profile.BaseV1, profile.Fork())
	if err != nil {
		return fmt.Errorf("cage: probe policy: %w", err)
	}
	c, err := New(pol)
	if err != nil {
		return &UnsupportedError{OSBuild: build, What: "preparing the run-marker probe", Err: err}
	}
	// Look the library up before starting the child, so no return path
	// leaves the probe child running and unreaped.
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sleep", "60")
	cmd.skipProbe = true
	if err := cmd.Start(); err != nil {
		if _, ok := errors.AsType[*ApplyError](err); !ok {
			// Not a verdict (fork or a pipe failed): not cached.
			return fmt.Errorf("cage: starting the run-marker probe: %w", err)
		}
		return &UnsupportedError{OSBuild: build, What: "starting the run-marker probe child", Err: err}
	}
	md, sd, qerr := markerState(lib, cmd.Process.Pid, cmd.run.marker, siblingName())
	_ = cmd.Kill()
	_ = cmd.Wait()
	return markerVerdict(build, md, sd, qerr)
})

// extensionClass is the sandbox extension class a grant is issued under.
func (g grant) extensionClass() string {
	if g.write {
		return seatbelt.ExtensionReadWrite
	}
	return seatbelt.ExtensionRead
}

// hostProbeT1: tiers are Linux's; never asked on macOS.
func hostProbeT1() error {
	return &UnsupportedError{OSBuild: hostOSBuild(), What: "Linux tiers are not a macOS backend's"}
}

// hostPolicyProbe: nothing to check beyond the apply probe.
func hostPolicyProbe() error { return nil }

// hostProbeProc: no Linux namespaces here.
func hostProbeProc() error { return nil }

// hostAnonInodeSetattr: a Linux plan previewed here is the newest kernel's.
func hostAnonInodeSetattr() bool { return false }

// hostNewNames: a Linux plan previewed here shows the trust-handoff gap
// the new-names supervisor would close only on an amd64 host with 5.19.
func hostNewNames() bool { return false }

// hostProbeNewNames: only a Linux host probes the supervisor.
func hostProbeNewNames() error { return nil }
