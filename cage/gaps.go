package cage

import (
	"fmt"

	"github.com/procage-go/procage/profile"
)

// AcceptGaps lets a Linux-backend cage leave the named gaps unenforced
// (they are listed in the plan) instead of refusing the policy with a
// [*PolicyError] of kind [ErrGap]; docs/linux-backend.md explains each
// [profile.Gap]. It has no
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
