package cage

import (
	"fmt"

	"github.com/procage-go/procage/internal/linuxsandbox"
)

// Gap names a part of a policy the Linux backend cannot enforce. New
// refuses such a policy with a [*GapError] listing each part, unless the
// caller accepts the gap by name with [AcceptGaps]; an accepted gap is
// shown in the plan and not enforced. docs/linux-backend.md explains each.
type Gap = linuxsandbox.Gap

// The gaps.
const (
	GapSecrets        = linuxsandbox.GapSecrets        // a secrets path inside an allowed tree
	GapTrustHandoff   = linuxsandbox.GapTrustHandoff   // git hooks/config or startup files inside a writable tree
	GapLoopback       = linuxsandbox.GapLoopback       // loopback-only network (Landlock filters ports, not addresses)
	GapLocalServices  = linuxsandbox.GapLocalServices  // network on keeps localhost services and wildcard listening
	GapUnixSocketPath = linuxsandbox.GapUnixSocketPath // one Unix socket by path (before Landlock ABI 9)
	GapMach           = linuxsandbox.GapMach           // Mach service names
	GapSeatbelt       = linuxsandbox.GapSeatbelt       // raw Seatbelt rules
	GapExecTargetOnly = linuxsandbox.GapExecTargetOnly // exec-target-only (ld.so and memfd bypass it)
)

// GapError lists the parts of a policy the Linux backend cannot enforce
// and the caller did not accept. Has reports whether it names a gap.
type GapError = linuxsandbox.GapError

// GapPart is one part a GapError lists: its Gap and what exactly.
type GapPart = linuxsandbox.GapPart

// AcceptGaps lets a Linux-backend cage leave the named gaps unenforced
// (they are listed in the plan) instead of refusing the policy. It has no
// effect on a macOS-backend cage.
func AcceptGaps(gaps ...Gap) Option {
	return optionFunc(func(c *config) error {
		for _, g := range gaps {
			if _, err := linuxsandbox.ParseGap(string(g)); err != nil {
				return fmt.Errorf("cage: AcceptGaps: %w", err)
			}
			c.accept = append(c.accept, g)
		}
		return nil
	})
}

// Gaps returns every [Gap], in the order plans report them.
func Gaps() []Gap { return linuxsandbox.Gaps() }

// ParseGap returns the [Gap] named s (a Gap's string form).
func ParseGap(s string) (Gap, error) { return linuxsandbox.ParseGap(s) }
