package cage_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// TestPackageDocExample runs the package documentation's opening example
// (with a scratch directory for /tmp/build): where this host cages, ls
// lists the directory; where it does not, the run is refused as
// unsupported and nothing runs.
func TestPackageDocExample(t *testing.T) {
	build := filepath.Join(t.TempDir(), "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	policy, err := profile.New(profile.BaseV1, profile.Read(build))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(policy, cage.WithHome(t.TempDir()))
	if err != nil {
		skipIfTooOld(t, err)
		t.Fatal(err)
	}
	out, err := c.Command(ctx, "/bin/ls", build).Output()

	if perr := cage.Probe().Err(); perr != nil {
		if !errors.Is(err, errors.ErrUnsupported) || len(out) != 0 {
			t.Errorf("on a host that does not cage (%v): Output = %q, %v; want nothing and ErrUnsupported", perr, out, err)
		}
		return
	}
	if err != nil || string(out) != "main.go\n" {
		t.Errorf("Output = %q, %v; want the directory listed", out, err)
	}
}
