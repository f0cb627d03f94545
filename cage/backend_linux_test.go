package cage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/profile"
)

// TestLinuxOldABI: a kernel whose Landlock ABI is older than the plan
// needs is an *UnsupportedError naming the kernel and the ABI; a policy
// that needs less is planned for the kernel's ABI and runs.
func TestLinuxOldABI(t *testing.T) {
	if linuxsandbox.KernelABI() < 6 {
		t.Skip("needs Landlock ABI 6 to pretend an older one")
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
