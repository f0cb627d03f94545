package tests

// The T1 fallbacks, exercised for real: the probe, spawns and New run in a
// re-executed test binary whose system calls are refused as on another
// host (testenv.HostShapes: a seccomp filter on the whole helper process),
// or inside namespaces whose /proc is masked as a container's is. The
// helper reports what it saw as JSON; the test asserts on it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// fallbackReportHelper is the report helper's name (helperEnv).
const fallbackReportHelper = "fallback-report"

// stepReport is an error as the helper saw it: the *ApplyError's step,
// call and errno, whether it is an *UnsupportedError, and its text.
type stepReport struct {
	Step, Call, Errno string
	Unsupported       bool
	Text              string
}

func reportErr(err error) *stepReport {
	if err == nil {
		return nil
	}
	r := &stepReport{Unsupported: errors.Is(err, errors.ErrUnsupported), Text: err.Error()}
	if ae, ok := errors.AsType[*cage.ApplyError](err); ok {
		r.Step, r.Call, r.Errno = ae.Step.String(), ae.Call, ae.Errno.Error()
	}
	return r
}

// fallbackReport is what the helper saw on its host.
type fallbackReport struct {
	Probe     string // cage.ProbeResult.String()
	ProbeErr  string // ProbeResult.Err()
	Tier      string
	T1, Proc  *stepReport
	PolicyErr string // ProbeResult.Policy
	// A TierAuto cage under Base V1: its plan's tier, $$ of sh in a run
	// (T1's own pid namespace makes the target pid 2), and how /proc
	// reads there.
	AutoTier, AutoPID, AutoProc string
	AutoErr                     *stepReport
	// TierAuto with the home (and its ~/.ssh) readable: the gaps New
	// refused, and its error.
	HomeGaps []string
	HomeErr  *stepReport
	// TierT1 required: New's error.
	Required *stepReport
	// TierAuto with /proc readable: New's error, and whether it wraps
	// linux.ErrProcAtT1.
	ProcGrant   *stepReport
	ProcAtT1    bool
	ProcGrantPS string // where New accepted it, a run's /proc: "host" or "own"
}

// fallbackHelper runs the report in the host shape testenv's variables
// name (none: this host as it is).
func fallbackHelper() int {
	if err := testenv.EnterHostShape(); err != nil {
		fmt.Println("shape:", err)
		return 1
	}
	var rep fallbackReport
	r := cage.Probe()
	rep.Probe, rep.Tier, rep.T1, rep.Proc = r.String(), r.Tier, reportErr(r.T1), reportErr(r.Proc)
	if err := r.Err(); err != nil {
		rep.ProbeErr = err.Error()
	}
	if r.Policy != nil {
		rep.PolicyErr = r.Policy.Error()
	}
	home, err := os.MkdirTemp("", "procage-fallback-home-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		fmt.Println(err)
		return 1
	}
	newCage := func(opts []profile.Option, copts ...cage.Option) (*cage.Cage, error) {
		// sh runs cat: a forking policy.
		pol, err := profile.New(profile.BaseV1, append([]profile.Option{profile.Fork()}, opts...)...)
		if err != nil {
			return nil, err
		}
		return cage.New(pol, append([]cage.Option{cage.WithHome(home)}, copts...)...)
	}
	// sh reports its pid and whether it reads /proc.
	script := `echo $$; if cat /proc/self/stat >/dev/null 2>&1; then echo proc-read; else echo proc-refused; fi`
	if c, err := newCage(nil); err != nil {
		rep.AutoErr = reportErr(err)
	} else {
		rep.AutoTier = c.LinuxPlan().Tier.String()
		out, err := c.Command(context.Background(), "/bin/sh", "-c", script).Output()
		rep.AutoErr = reportErr(err)
		if f := strings.Fields(string(out)); len(f) == 2 {
			rep.AutoPID, rep.AutoProc = f[0], f[1]
		}
	}
	_, err = newCage([]profile.Option{profile.Read(home)})
	rep.HomeErr = reportErr(err)
	if ge, ok := errors.AsType[*profile.GapError](err); ok {
		for _, g := range []profile.Gap{profile.GapSecrets, profile.GapTrustHandoff} {
			if ge.Has(g) {
				rep.HomeGaps = append(rep.HomeGaps, string(g))
			}
		}
	}
	_, err = newCage(nil, cage.WithLinuxTier(cage.TierT1))
	rep.Required = reportErr(err)
	c, err := newCage([]profile.Option{profile.Read("/proc")})
	rep.ProcGrant, rep.ProcAtT1 = reportErr(err), errors.Is(err, linux.ErrProcAtT1)
	if err == nil {
		// The helper's own pid is in the host's /proc, not in a run's own.
		out, _ := c.Command(context.Background(), "/bin/sh", "-c", fmt.Sprintf("if test -d /proc/%d; then echo host; else echo own; fi", os.Getpid())).Output()
		rep.ProcGrantPS = strings.TrimSpace(string(out))
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// runFallback re-executes the test binary as the report helper under
// shape ("" for this host as it is) and decodes what it saw.
func runFallback(t *testing.T, shape string) fallbackReport {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+fallbackReportHelper, testenv.HostShapeEnv+"="+shape)
	return decodeFallback(t, cmd)
}

func decodeFallback(t *testing.T, cmd *exec.Cmd) fallbackReport {
	t.Helper()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	testenv.SkipNoUserNS(t, cmd, err)
	var rep fallbackReport
	if err != nil || json.Unmarshal(out, &rep) != nil {
		t.Fatalf("helper: %v\nstdout %s\nstderr %s", err, out, errb.Bytes())
	}
	t.Logf("%s", out)
	return rep
}

// requireFallbackHost skips where the default policy cannot run (a
// Landlock ABI older than Base V1 needs): the report spawns under it.
func requireFallbackHost(t *testing.T) {
	t.Helper()
	requireCage(t)
	newCage(t, policy(t))
}

// wantStep checks that e names step, call and errno.
func wantStep(t *testing.T, what string, e *stepReport, step, call string, errno syscall.Errno) {
	t.Helper()
	if e == nil || !e.Unsupported || e.Step != step || e.Call != call || e.Errno != errno.Error() {
		t.Errorf("%s: %+v; want an *UnsupportedError naming the %s step's call %q and %v", what, e, step, call, errno)
	}
}

// wantT2Run checks a TierAuto run at T2: a T2 plan, a run in the caller's
// pid namespace (not pid 2), and the T1-only cover refused by name.
func wantT2Run(t *testing.T, rep fallbackReport) {
	t.Helper()
	if rep.ProbeErr != "" || rep.PolicyErr != "" {
		t.Errorf("the host cannot cage under the shape: %s; default policy %s", rep.ProbeErr, rep.PolicyErr)
	}
	if rep.AutoErr != nil || rep.AutoTier != "T2" || rep.AutoPID == "" || rep.AutoPID == "2" {
		t.Errorf("a TierAuto run: tier %s, pid %q, error %+v; want a T2 run in the caller's pid namespace", rep.AutoTier, rep.AutoPID, rep.AutoErr)
	}
	// A readable home holding ~/.ssh: T1 covers the store with an empty
	// mount, T2 cannot and refuses the policy naming the gap.
	if len(rep.HomeGaps) != 1 || rep.HomeGaps[0] != string(profile.GapSecrets) {
		t.Errorf("a readable home at TierAuto: gaps %v (%+v); want %s refused", rep.HomeGaps, rep.HomeErr, profile.GapSecrets)
	}
}

// TestLinuxFallbackControl: on this host as it is, the report sees T1,
// so the shapes below are what turns it into T2 or T1 without /proc.
func TestLinuxFallbackControl(t *testing.T) {
	requireFallbackHost(t)
	testenv.RequireUserNamespace(t)
	rep := runFallback(t, "")
	if rep.Tier != "T1" || rep.T1 != nil || rep.Proc != nil || rep.AutoTier != "T1" || rep.AutoPID != "2" || rep.HomeErr != nil || rep.Required != nil {
		t.Errorf("this host: %+v; want T1 with its own /proc, a TierAuto run at pid 2, the home readable, T1 required granted", rep)
	}
	if rep.ProcGrant != nil || rep.ProcGrantPS != "own" {
		t.Errorf("a /proc grant at T1: %+v, /proc %q; want granted, the run's own", rep.ProcGrant, rep.ProcGrantPS)
	}
}

// TestLinuxFallbackDocker: under Docker's default seccomp profile
// (testenv.HostShapes "docker": unshare refused with EPERM) the probe
// reports T2 naming the unshare, a TierAuto cage runs at T2 with T2's
// refusals, and a required T1 is refused by name.
func TestLinuxFallbackDocker(t *testing.T) {
	requireFallbackHost(t)
	rep := runFallback(t, "docker")
	wantStep(t, "the probe's T1", rep.T1, "namespace", "unshare", syscall.EPERM)
	if rep.Tier != "T2" || rep.Proc != nil || !strings.Contains(rep.Probe, "tier T2 (T1 unavailable: namespace step unshare: "+syscall.EPERM.Error()+")") {
		t.Errorf("probe: %q, tier %s, proc %+v; want T2 naming the unshare", rep.Probe, rep.Tier, rep.Proc)
	}
	wantT2Run(t, rep)
	wantStep(t, "New with TierT1", rep.Required, "namespace", "unshare", syscall.EPERM)
	// At T2 a /proc grant is the host's /proc.
	if rep.ProcGrant != nil || rep.ProcGrantPS != "host" {
		t.Errorf("a /proc grant at T2: %+v, /proc %q; want the host's", rep.ProcGrant, rep.ProcGrantPS)
	}
}

// TestLinuxFallbackLaterStep: unshare works and a later T1 step is
// refused. This reproduces the shape Ubuntu 24.04's AppArmor restriction
// of unprivileged user namespaces gives (unshare ok, then the mounts or lo
// refused), not AppArmor itself: testenv.HostShapes refuses the mount
// calls with EACCES, or lo's SIOCSIFFLAGS with EPERM. The probe must
// report T2 naming that later step and its errno.
func TestLinuxFallbackLaterStep(t *testing.T) {
	requireFallbackHost(t)
	testenv.RequireUserNamespace(t)
	for _, tc := range []struct {
		shape, call string
		errno       syscall.Errno
	}{
		{"userns-mount-eacces", "mount propagation private", syscall.EACCES},
		{"userns-lo-eperm", "bring lo up (ioctl SIOCSIFFLAGS)", syscall.EPERM},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			rep := runFallback(t, tc.shape)
			wantStep(t, "the probe's T1", rep.T1, "namespace", tc.call, tc.errno)
			if rep.Tier != "T2" || !strings.Contains(rep.Probe, "T1 unavailable: namespace step "+tc.call+": "+tc.errno.Error()) {
				t.Errorf("probe: %q; want T2 naming %s", rep.Probe, tc.call)
			}
			wantT2Run(t, rep)
			wantStep(t, "New with TierT1", rep.Required, "namespace", tc.call, tc.errno)
		})
	}
}

// runMaskedProc runs the report where /proc is masked as in a container
// (testenv.MaskedProc), or in the same namespaces unmasked.
func runMaskedProc(t *testing.T, mask bool) fallbackReport {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+fallbackReportHelper)
	testenv.MaskedProc(cmd, mask)
	return decodeFallback(t, cmd)
}

// TestLinuxFallbackMaskedProc: in a container whose /proc is masked the
// probe reports "T1 without /proc" naming the proc mount: a TierAuto run
// is T1 (pid 2) with /proc closed, and a policy granting /proc is refused
// (linux.ErrProcAtT1, docs/linux-backend.md's /proc row), since the grant
// would be the host's /proc. The same two namespaces unmasked give T1 with
// the run's own /proc: the masks are what the kernel refuses.
func TestLinuxFallbackMaskedProc(t *testing.T) {
	requireFallbackHost(t)
	rep := runMaskedProc(t, true)
	wantStep(t, "the probe's /proc", rep.Proc, "pidns", "mount proc on /proc", syscall.EPERM)
	if rep.Tier != "T1" || rep.T1 != nil || !strings.Contains(rep.Probe, "tier T1 without /proc (pidns step mount proc on /proc: "+syscall.EPERM.Error()+")") {
		t.Errorf("probe: %q; want T1 without /proc naming the proc mount", rep.Probe)
	}
	if rep.AutoErr != nil || rep.AutoTier != "T1" || rep.AutoPID != "2" || rep.AutoProc != "proc-refused" {
		t.Errorf("a TierAuto run: tier %s, pid %q, /proc %s, error %+v; want T1 at pid 2 with /proc refused", rep.AutoTier, rep.AutoPID, rep.AutoProc, rep.AutoErr)
	}
	if rep.Required != nil || rep.HomeErr != nil {
		t.Errorf("T1 required: %+v, a readable home: %+v; want both granted at T1", rep.Required, rep.HomeErr)
	}
	if !rep.ProcAtT1 || rep.ProcGrantPS != "" {
		t.Errorf("a /proc grant: %+v (ran: %q); want refused wrapping linux.ErrProcAtT1", rep.ProcGrant, rep.ProcGrantPS)
	}

	rep = runMaskedProc(t, false)
	if rep.Tier != "T1" || rep.T1 != nil || rep.Proc != nil || rep.ProcGrant != nil || rep.ProcGrantPS != "own" {
		t.Errorf("unmasked: probe %q, /proc grant %+v, /proc %q; want T1 with the run's own /proc", rep.Probe, rep.ProcGrant, rep.ProcGrantPS)
	}
}
