package cage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// TestLinuxNoLandlockRefused: a kernel without Landlock (ABI 0: not built,
// or not in the lsm= list) refuses every policy, the one needing least
// too, with an *UnsupportedError naming the kernel; nothing runs.
func TestLinuxNoLandlockRefused(t *testing.T) {
	real := linuxsandbox.KernelABI
	linuxsandbox.KernelABI = func() int { return 0 }
	defer func() { linuxsandbox.KernelABI = real }()
	for _, opts := range [][]profile.Option{nil, {profile.Waive(profile.ProcessAccess)}} {
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		c, err := cage.New(pol, cage.WithHome(t.TempDir()))
		if err == nil {
			err = c.Command(t.Context(), "/bin/true").Run()
		}
		var ue *cage.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "landlock unavailable") || !strings.Contains(err.Error(), linuxsandbox.KernelRelease()) {
			t.Errorf("%d options without Landlock: %v, want an UnsupportedError naming the kernel", len(opts), err)
		}
	}
}

// TestLinuxNoLandlockKernel: on a kernel really without Landlock
// (.ci/kernel-matrix boots Linux 6.1 with landlock left out of lsm=), the
// probe is an *UnsupportedError saying so, and New refuses every policy,
// the one needing least too, with an *UnsupportedError whose
// *linuxsandbox.ABIError names the kernel and ABI 0; nothing runs.
func TestLinuxNoLandlockKernel(t *testing.T) {
	testenv.RequireNoLandlock(t)
	if abi := linuxsandbox.KernelABI(); abi != 0 {
		t.Fatalf("KernelABI() = %d where landlock_create_ruleset reports no Landlock", abi)
	}
	perr := cage.Probe().Apply
	if ue, ok := errors.AsType[*cage.UnsupportedError](perr); !ok || ue.What != "Landlock is not available" || !strings.Contains(perr.Error(), linuxsandbox.KernelRelease()) {
		t.Errorf("Probe().Apply = %v, want an UnsupportedError: Landlock is not available, naming the kernel", perr)
	}
	for _, opts := range [][]profile.Option{nil, {profile.Waive(profile.ProcessAccess)}} {
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(t.TempDir(), "ran")
		c, err := cage.New(pol, cage.WithHome(t.TempDir()))
		if err == nil {
			err = c.Command(t.Context(), "/bin/touch", marker).Run()
			t.Errorf("%d options: New succeeded without Landlock", len(opts))
		}
		_, isUE := errors.AsType[*cage.UnsupportedError](err)
		ae, isAE := errors.AsType[*linuxsandbox.ABIError](err)
		if !isUE || !isAE || ae.Have != 0 || !errors.Is(err, errors.ErrUnsupported) ||
			!strings.Contains(err.Error(), "landlock unavailable on Linux "+linuxsandbox.KernelRelease()) {
			t.Errorf("%d options: %v, want an UnsupportedError: landlock unavailable, naming the kernel", len(opts), err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%d options: the target ran", len(opts))
		}
	}
}
