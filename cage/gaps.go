package cage

import (
	"fmt"

	"github.com/procage-go/procage/profile"
)

// GapError lists the parts of a policy the Linux backend cannot enforce
// and the caller did not accept ([profile.GapError]; Has reports whether
// it names a gap). New refuses such a policy unless the gaps are accepted
// by name with [AcceptGaps]; an accepted gap is shown in the plan and not
// enforced. docs/linux-backend.md explains each [profile.Gap].
type GapError = profile.GapError

// AcceptGaps lets a Linux-backend cage leave the named gaps unenforced
// (they are listed in the plan) instead of refusing the policy. It has no
// effect on a macOS-backend cage.
func AcceptGaps(gaps ...profile.Gap) Option {
	return optionFunc(func(c *config) error {
		for _, g := range gaps {
			if _, err := profile.ParseGap(string(g)); err != nil {
				return fmt.Errorf("cage: AcceptGaps: %w", err)
			}
			c.accept = append(c.accept, g)
		}
		return nil
	})
}
