package cage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
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
