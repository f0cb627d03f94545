package cage

import (
	"fmt"

	"github.com/procage-go/procage/profile"
)

// AcceptGaps lets a Linux-backend cage leave the named gaps unenforced
// (they are listed in the plan) instead of refusing the policy with a
// [*PolicyError] of kind [ErrGap]; docs/linux-backend.md explains each
// [profile.Gap]. The gaps the policy accepts itself
// ([profile.AcceptGaps]) are accepted too. It has no effect on a
// macOS-backend cage.
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

// PlanOnly makes [New] plan and stop there, as for another OS's backend:
// nothing is compiled, opened or built, and Start refuses. A gap the cage
// does not accept is then no error: the Linux plan lists it (Refused of
// [Cage.LinuxPlan]), so a policy can be reviewed before its gaps are
// accepted, and Start refuses with the [*PolicyError] of kind [ErrGap]
// New would have returned. On the host's Linux backend the plan is made
// for the running kernel's Landlock ABI, as an enforcing cage's is.
func PlanOnly() Option {
	return optionFunc(func(c *config) error {
		c.planOnly = true
		return nil
	})
}
