package cage_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// TestLinuxOldABI: a kernel whose Landlock ABI is older than the plan
// needs is an *UnsupportedError naming the kernel and the ABI needed (6 for
// Base V1's process-access scopes, 3 for truncate once they are waived); a
// policy that needs less is planned for the kernel's ABI and runs. The
// "kernel" row asserts this kernel's own verdict (.ci/kernel-matrix runs it
// on Linux 6.1, ABI 2); the others pretend an older ABI, which only a newer
// kernel can enforce.
func TestLinuxOldABI(t *testing.T) {
	kernel := linuxsandbox.KernelABI()
	if kernel == 0 {
		testenv.SkipLandlockABI(t, 0, 1, "no Landlock: TestLinuxNoLandlockKernel")
	}
	for _, tt := range []struct {
		name string
		abi  int
	}{{"kernel", kernel}, {"pretend-5", 5}, {"pretend-2", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.abi > kernel {
				testenv.SkipLandlockABI(t, kernel, tt.abi, "pretending an ABI needs a kernel at least that new")
			}
			real := linuxsandbox.KernelABI
			linuxsandbox.KernelABI = func() int { return tt.abi }
			defer func() { linuxsandbox.KernelABI = real }()
			checkABIVerdict(t, tt.abi, cage.TierT2, nil, 6)
			checkABIVerdict(t, tt.abi, cage.TierT2, []profile.Option{profile.Waive(profile.ProcessAccess)}, 3)
		})
	}
}

// TestLinuxOldABIT1: at T1 the run's pid and network namespaces keep its
// signals and abstract sockets in, and read-only mounts stop truncation
// outside the writable trees, so Base V1 needs no Landlock ABI beyond 1
// (the "a policy runs on ABI 1-5 kernels"); with the host's
// network, abstract sockets still need ABI 6's scope.
func TestLinuxOldABIT1(t *testing.T) {
	requireT1Here(t)
	kernel := linuxsandbox.KernelABI()
	for _, abi := range []int{kernel, 5, 2, 1} {
		if abi > kernel {
			continue // pretending needs a kernel at least that new
		}
		t.Run(fmt.Sprint("abi-", abi), func(t *testing.T) {
			real := linuxsandbox.KernelABI
			linuxsandbox.KernelABI = func() int { return abi }
			defer func() { linuxsandbox.KernelABI = real }()
			checkABIVerdict(t, abi, cage.TierT1, nil, 1)
			checkABIVerdict(t, abi, cage.TierT1, []profile.Option{profile.Network(profile.NetworkOn)}, 6)
		})
	}
}

// checkABIVerdict: at ABI abi, New of Base V1 with opts is refused by name
// when abi < need, and otherwise plans for abi, needs exactly need and runs.
func checkABIVerdict(t *testing.T, abi int, tier cage.LinuxTier, opts []profile.Option, need int) {
	t.Helper()
	pol, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(pol, cage.WithHome(t.TempDir()), cage.WithLinuxTier(tier), cage.AcceptGaps(profile.GapLocalServices))
	if abi < need {
		ue, isUE := errors.AsType[*cage.UnsupportedError](err)
		ae, isAE := errors.AsType[*linuxsandbox.ABIError](err)
		if !isUE || !isAE || !errors.Is(err, errors.ErrUnsupported) || ae.Have != abi || ae.Need != need ||
			ue.What != "Landlock is too old for this policy" ||
			!strings.Contains(err.Error(), linuxsandbox.KernelRelease()) || !strings.Contains(err.Error(), fmt.Sprintf("need %d", need)) {
			t.Errorf("New at ABI %d (%d options): %v, want an UnsupportedError naming the kernel and ABI %d", abi, len(opts), err, need)
		}
		return
	}
	if err != nil {
		t.Fatalf("New at ABI %d (%d options): %v", abi, len(opts), err)
	}
	p := c.LinuxPlan()
	if p.ABI != min(abi, linux.MaxABI) || p.MinABI != need || (abi < 6 && p.Scopes != 0) {
		t.Errorf("plan ABI %d, min %d, scopes %s; want ABI %d, min %d", p.ABI, p.MinABI, p.Scopes, min(abi, linux.MaxABI), need)
	}
	if err := c.Command(t.Context(), "/bin/true").Run(); err != nil {
		t.Errorf("Run at ABI %d: %v", abi, err)
	}
}

// TestLinuxBaseLinkInWritableTree: New resolves the base paths and checks
// them for links against the policy's writable trees before opening them:
// a link a run could have planted at /usr/local/lib in a writable
// /usr/local is refused; the system's own links (/bin -> usr/bin, and
// /etc/localtime out of a tree the policy only reads) pass.
func TestLinuxBaseLinkInWritableTree(t *testing.T) {
	fsys := macfs.New()
	for _, d := range []string{"/usr/bin", "/usr/local", "/usr/share/zoneinfo", "/etc", "/home/me", "/srv"} {
		if err := fsys.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"/bin": "usr/bin", "/usr/local/lib": "/srv", "/etc/localtime": "/usr/share/zoneinfo/UTC"} {
		if err := fsys.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/usr/share/zoneinfo/UTC", nil); err != nil {
		t.Fatal(err)
	}
	newCage := func(opts ...profile.Option) *cage.Cage {
		t.Helper()
		pol, err := profile.New(profile.BaseV1, append(opts, profile.Waive(profile.TrustHandoff))...)
		if err != nil {
			t.Fatal(err)
		}
		c, err := cage.New(pol, cage.WithFS(fsys, nil), cage.WithHome("/home/me"), cage.WithFakeBackend(&cage.FakeBackend{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	w := newCage(profile.ReadWrite("/usr/local"), profile.Read("/etc"))
	if got, err := cage.SpellBaseRule(w, fsys, "/usr/local/lib"); !errors.Is(err, pathresolve.ErrSuspectLink) {
		t.Errorf("/usr/local/lib -> /srv in a writable /usr/local: %q, %v; want a *LinkError", got, err)
	}
	for p, want := range map[string]string{"/bin": "/usr/bin", "/etc/localtime": "/usr/share/zoneinfo/UTC", "/usr/local/bin": "/usr/local/bin"} {
		if got, err := cage.SpellBaseRule(w, fsys, p); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %s", p, got, err, want)
		}
	}
	if got, err := cage.SpellBaseRule(newCage(), fsys, "/usr/local/lib"); err != nil || got != "/srv" {
		t.Errorf("/usr/local/lib outside every writable tree: %q, %v; want /srv (the system's own link)", got, err)
	}
}

// TestPlanOnlyKernelABI: a PlanOnly cage for the host's Linux backend
// plans for the running kernel's Landlock ABI, as an enforcing cage does,
// on any kernel (an older one than the plan needs included), and its
// plan says what it needs. (At T2: at T1 the run's own network namespace
// closes the loopback gap.)
func TestPlanOnlyKernelABI(t *testing.T) {
	c, err := cage.New(mustPolicy(t, profile.Read("/usr/share"), profile.Network(profile.NetworkLoopback, 8080)), cage.PlanOnly(), cage.WithLinuxTier(cage.TierT2))
	if err != nil {
		t.Fatalf("PlanOnly New: %v", err)
	}
	want := linuxsandbox.KernelABI()
	if want <= 0 || want > linux.MaxABI {
		want = linux.MaxABI
	}
	pl := c.LinuxPlan()
	if pl.ABI != want || pl.MinABI != 6 || len(pl.Refused) != 1 || pl.Refused[0].Gap != profile.GapLoopback {
		t.Errorf("plan ABI %d (need %d), refused %v; want ABI %d, need 6 and the loopback gap refused", pl.ABI, pl.MinABI, pl.Refused, want)
	}
}
