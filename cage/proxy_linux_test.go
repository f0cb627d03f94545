package cage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// TestProxyModeRefusedAtStart: the lowering confines the child to the
// proxy's port, but Start does not run the proxy yet, so a proxy-mode run
// is refused, never started without its network or with more.
func TestProxyModeRefusedAtStart(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.AllowHosts("github.com"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(p, cage.AcceptGaps(profile.GapProxyDirect))
	skipIfTooOld(t, err)
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(context.Background(), "/bin/true")
	if err := cmd.Start(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Start: %v, want ErrUnsupported", err)
	}
	if _, err := cage.New(p); !errors.Is(err, cage.ErrGap) {
		t.Errorf("New without the gap accepted: %v, want ErrGap", err)
	}
}
