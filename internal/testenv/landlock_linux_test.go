package testenv

import (
	"fmt"
	"strings"
	"testing"
)

func TestRequireLandlockABI(t *testing.T) {
	t.Setenv(StrictEnv, "")
	have := LandlockABI()
	f := &fakeTB{TB: t}
	RequireLandlockABI(f, have, "what this kernel has")
	if f.skipped != "" || f.fatal != "" {
		t.Errorf("RequireLandlockABI(%d) at ABI %d: skipped %q, fatal %q", have, have, f.skipped, f.fatal)
	}
	f = &fakeTB{TB: t}
	RequireLandlockABI(f, have+1, "a newer right")
	want := fmt.Sprintf("procage-skip(landlock-abi): Landlock ABI %d here, the test needs %d: a newer right", have, have+1)
	if f.skipped != want {
		t.Errorf("RequireLandlockABI(%d) at ABI %d: skipped %q, want %q", have+1, have, f.skipped, want)
	}
	f = &fakeTB{TB: t}
	RequireNoLandlock(f)
	if got := f.skipped != ""; got != (have != 0) || (got && !strings.HasPrefix(f.skipped, "procage-skip(landlock-on): ")) {
		t.Errorf("RequireNoLandlock at ABI %d: skipped %q", have, f.skipped)
	}
}
