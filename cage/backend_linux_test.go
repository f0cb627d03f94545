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
)

// TestLinuxOldABI: a kernel whose Landlock ABI is older than the plan
// needs is an *UnsupportedError naming the kernel and the ABI; a policy
// that needs less is planned for the kernel's ABI and runs.
func TestLinuxOldABI(t *testing.T) {
	if linuxsandbox.KernelABI() < 6 {
		testenv.Skip(t, testenv.ReasonLandlockABI, fmt.Sprintf("Landlock ABI %d here; the test needs 6 to pretend an older one", linuxsandbox.KernelABI()))
	}
	real := linuxsandbox.KernelABI
	linuxsandbox.KernelABI = func() int { return 5 }
	defer func() { linuxsandbox.KernelABI = real }()

	pol, err := profile.New(profile.BaseV1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cage.New(pol, cage.WithHome(t.TempDir()))
	var ue *cage.UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, errors.ErrUnsupported) ||
		!strings.Contains(err.Error(), linuxsandbox.KernelRelease()) || !strings.Contains(err.Error(), "need 6") {
		t.Fatalf("New at ABI 5: %v, want an UnsupportedError naming the kernel and ABI 6", err)
	}

	pol, err = profile.New(profile.BaseV1, profile.Waive(profile.ProcessAccess))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(pol, cage.WithHome(t.TempDir()))
	if err != nil {
		t.Fatalf("New without scopes at ABI 5: %v", err)
	}
	if p := c.LinuxPlan(); p.ABI != 5 || p.MinABI != 3 || p.Scopes != 0 {
		t.Errorf("plan ABI %d, min %d, scopes %s", p.ABI, p.MinABI, p.Scopes)
	}
	if err := c.Command(t.Context(), "/bin/true").Run(); err != nil {
		t.Errorf("Run at ABI 5: %v", err)
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
