package tests

// Spawn tests only Linux has; the shared ones are in spawn_unix_test.go.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// TestLinuxWriteGrant: a write grant is a writable tree, where git hooks
// cannot be denied, so it is refused unless trust-handoff is waived (or the
// gap accepted).
func TestLinuxWriteGrant(t *testing.T) {
	requireCage(t)
	dir := t.TempDir()
	c := spawnCage(t, policy(t))
	cmd := c.Command(t.Context(), "/bin/sh", "-c", "echo w > "+filepath.Join(dir, "w"))
	cmd.Grants = []cage.Grant{{Path: dir, Write: true}}
	var ge *profile.GapError
	err := cmd.Run()
	if !errors.As(err, &ge) || !ge.Has(profile.GapTrustHandoff) {
		t.Errorf("write grant: %v, want a GapError naming %s", err, profile.GapTrustHandoff)
	}
	if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || pe.Kind != cage.ErrGap || !errors.Is(err, cage.ErrGap) || len(pe.Gaps) == 0 || pe.Gaps[0].Gap != profile.GapTrustHandoff {
		t.Errorf("write grant: %#v, want a *cage.PolicyError of kind ErrGap listing %s", err, profile.GapTrustHandoff)
	}
	w := spawnCage(t, policy(t, profile.Waive(profile.TrustHandoff)))
	cmd = w.Command(t.Context(), "/bin/sh", "-c", "echo w > "+filepath.Join(dir, "w"))
	cmd.Grants = []cage.Grant{{Path: dir, Write: true}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write grant: %v (%s)", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "w")); string(b) != "w\n" {
		t.Errorf("written %q", b)
	}
}

// TestLinuxApplyErrorRlimit: a resource limit the kernel does not know
// fails the rlimit step with EINVAL. (Not on macOS: 4096 is
// _RLIMIT_POSIX_FLAG, 0x1000 in XNU's sys/resource.h, on RLIMIT_CPU 0.)
func TestLinuxApplyErrorRlimit(t *testing.T) {
	requireCage(t)
	bad := spawnCage(t, policy(t), cage.WithRlimits(cage.Rlimit{Resource: 4096, Cur: 1, Max: 1}))
	var ae *cage.ApplyError
	if err := bad.Command(t.Context(), trueBin).Run(); !errors.As(err, &ae) || ae.Step != cage.StepRlimit || ae.Errno != syscall.EINVAL {
		t.Errorf("unknown resource: got %v, want ApplyError at rlimit with EINVAL", err)
	}
}

// TestLinuxRootIsNotRoot: in a cage every capability set is empty, even
// when the caller is root (the bounding set too: nothing can be regained
// by executing a setuid-root or file-capability program), and the
// securebits are locked.
func TestLinuxRootIsNotRoot(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Read("/proc")), cage.WithHome(tempHome(t)))
	o, e, err := run(t, c, "/bin/cat", "/proc/self/status")
	if err != nil {
		t.Fatalf("cat: %v (%s)", err, e)
	}
	st := map[string]string{}
	for _, l := range strings.Split(o, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			st[k] = strings.TrimSpace(v)
		}
	}
	zero := "0000000000000000"
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if st[k] != zero {
			t.Errorf("%s = %q, want %s", k, st[k], zero)
		}
	}
	if os.Geteuid() == 0 && st["CapBnd"] != zero {
		t.Errorf("root: CapBnd = %q, want %s", st["CapBnd"], zero)
	}
	if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" {
		t.Errorf("NoNewPrivs %q Seccomp %q", st["NoNewPrivs"], st["Seccomp"])
	}
	// Root's own files outside the policy stay closed (Landlock binds root).
	o, e, err = run(t, c, "/bin/cat", "/root/.bashrc")
	if os.Geteuid() == 0 {
		if _, serr := os.Stat("/root/.bashrc"); serr == nil {
			mustRefuse(t, "root reading /root/.bashrc", o, e, err)
		}
	}
}

// BenchmarkLinuxSpawn: a caged spawn and wait of true beside os/exec's,
// alternated inside one loop (and which goes first alternated too) so
// neither pays for the other's garbage; each side's time and the ratio are
// reported. new-session is the default (setsid); tty-inherit uses setpgid
// instead: with scheduler autogroups enabled, setsid creates a new
// autogroup (sched_autogroup_create_attach), which dominates under load.
func BenchmarkLinuxSpawn(b *testing.B) {
	requireCage(b)
	for _, mode := range []struct {
		name string
		tty  cage.TTY
	}{{"new-session", cage.TTYNewSession}, {"tty-inherit", cage.TTYInherit}} {
		b.Run(mode.name, func(b *testing.B) {
			c := newCage(b, policy(b), cage.WithHome(b.TempDir()), cage.WithTTY(mode.tty))
			var own, std time.Duration
			caged := func() {
				t := time.Now()
				if err := c.Command(context.Background(), "/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				own += time.Since(t)
			}
			plain := func() {
				t := time.Now()
				if err := exec.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				std += time.Since(t)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					caged()
					plain()
				} else {
					plain()
					caged()
				}
			}
			b.ReportMetric(float64(own.Nanoseconds())/float64(b.N), "caged-ns/spawn")
			b.ReportMetric(float64(std.Nanoseconds())/float64(b.N), "os-exec-ns/spawn")
			b.ReportMetric(float64(own)/float64(std), "caged/os-exec")
		})
	}
}

// TestLinuxPlanChangeDoesNotReachCage: the plan LinuxPlan returns is the
// caller's copy. Review of issue 21 found the live plan handed out: a rule
// appended to it reached every later spawn with a grant, unchecked for
// links and the hard-deny classes.
func TestLinuxPlanChangeDoesNotReachCage(t *testing.T) {
	requireCage(t)
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "s"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	granted := t.TempDir()
	c := spawnCage(t, policy(t))
	pl := c.LinuxPlan()
	pl.Rules = append(pl.Rules, linux.PathRule{Path: secret, Access: linux.FSReadFile | linux.FSReadDir, Layer: linux.LayerGrant})
	if slices.ContainsFunc(c.LinuxPlan().Rules, func(r linux.PathRule) bool { return r.Path == secret }) {
		t.Error("a rule appended to LinuxPlan's result is in the cage's plan")
	}
	cmd := c.Command(t.Context(), "/bin/cat", filepath.Join(secret, "s"))
	cmd.Grants = []cage.Grant{{Path: granted}}
	if out, err := cmd.CombinedOutput(); err == nil || strings.Contains(string(out), "s3cret") {
		t.Errorf("a spawn after changing LinuxPlan's result read the file: %q, %v", out, err)
	}
}
