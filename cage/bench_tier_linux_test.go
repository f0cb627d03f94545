package cage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// BenchmarkSpawnTiers spawns and waits for /bin/true with os/exec, in a
// T2 cage, in a T1 cage (with the new-names supervisor where the host runs
// it, and with the trust-handoff class waived, which runs none) and under
// bwrap with Codex's arguments (a
// writable project P with P/.git read-only, a private /dev, /proc and
// /tmp, every namespace unshared, dying with its parent: codex-rs
// linux-sandbox), in one alternating loop, and reports each side's time
// as a ratio to os/exec's. bwrap's column is left out where it is not
// installed.
func BenchmarkSpawnTiers(b *testing.B) {
	proj := b.TempDir()
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	newCage := func(t cage.LinuxTier, opts ...profile.Option) *cage.Cage {
		c, err := cage.New(mustPolicy(b, append(opts, profile.ReadWrite(proj), profile.AcceptGaps(profile.GapTrustHandoff))...), cage.WithHome(b.TempDir()), cage.WithLinuxTier(t))
		if err != nil {
			skipIfTooOld(b, err)
			b.Fatal(err)
		}
		return c
	}
	t2, t1, t1w := newCage(cage.TierT2), newCage(cage.TierT1), newCage(cage.TierT1, profile.Waive(profile.TrustHandoff))
	bwrap, err := exec.LookPath("bwrap")
	haveBwrap := err == nil
	if haveBwrap {
		// bwrap may be refused here (no user namespace): then no column.
		if exec.Command(bwrap, "--ro-bind", "/", "/", "--", "/bin/true").Run() != nil {
			haveBwrap = false
		}
	}
	run := func(cmd interface{ Run() error }) {
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	var tStd, tT2, tT1, tT1w, tBwrap time.Duration
	timed := func(d *time.Duration, f func()) {
		s := time.Now()
		f()
		*d += time.Since(s)
	}
	b.ResetTimer()
	for b.Loop() {
		timed(&tStd, func() { run(exec.Command("/bin/true")) })
		timed(&tT2, func() { run(t2.Command(b.Context(), "/bin/true")) })
		timed(&tT1, func() { run(t1.Command(b.Context(), "/bin/true")) })
		timed(&tT1w, func() { run(t1w.Command(b.Context(), "/bin/true")) })
		if haveBwrap {
			timed(&tBwrap, func() {
				run(exec.Command(bwrap, "--ro-bind", "/", "/", "--bind", proj, proj, "--ro-bind", proj+"/.git", proj+"/.git",
					"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--new-session", "--", "/bin/true"))
			})
		}
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(tT2)/float64(tStd), "T2/os-exec")
	b.ReportMetric(float64(tT1)/float64(tStd), "T1/os-exec")
	b.ReportMetric(float64(tT1w)/float64(tStd), "T1-waived/os-exec")
	if haveBwrap {
		b.ReportMetric(float64(tBwrap)/float64(tStd), "bwrap/os-exec")
	}
}
