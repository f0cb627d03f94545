package cage

import (
	"fmt"

	"github.com/procage-go/procage/profile/linux"
)

// LinuxTier chooses how a Linux cage is enforced.
type LinuxTier int

const (
	// TierAuto (the default) is T1 where this host's probe of the T1 steps
	// passes ([Probe]), else T2. A plan for another host, or previewed on a
	// non-Linux one, is T2.
	TierAuto LinuxTier = iota
	// TierT1 is Landlock and seccomp inside a mount namespace (and, unless
	// the caller is root, a user namespace): everything the policy does not
	// grant write is read-only, git directories in writable trees are
	// pinned with their payload read-only, and protected stores inside
	// allowed trees are covered by empty read-only mounts. Required: New
	// refuses with an [*UnsupportedError] naming the probe's failing step
	// where it is unavailable.
	TierT1
	// TierT2 is Landlock and seccomp only.
	TierT2
)

func (t LinuxTier) String() string {
	switch t {
	case TierAuto:
		return "auto"
	case TierT1:
		return "T1"
	case TierT2:
		return "T2"
	}
	return fmt.Sprintf("LinuxTier(%d)", int(t))
}

// WithLinuxTier sets a Linux cage's tier (default TierAuto). It has no
// effect on a macOS plan.
func WithLinuxTier(t LinuxTier) Option {
	return optionFunc(func(c *config) error {
		if t < TierAuto || t > TierT2 {
			return fmt.Errorf("cage: %v is not a Linux tier", t)
		}
		c.linuxTier = t
		return nil
	})
}

// pickTier decides a Linux plan's tier. onHost: the plan is for this
// Linux host (enforced, or PlanOnly here), so the probe decides auto and
// a required T1 the probe fails is refused. noProc: a T1 host whose probe
// found the run's own /proc refused ("T1 without /proc").
func (cfg *config) pickTier(onHost bool) (tier linux.Tier, noProc bool, err error) {
	switch {
	case cfg.linuxTier == TierT2:
		return linux.TierT2, false, nil
	case !onHost && cfg.linuxTier == TierT1:
		return linux.TierT1, false, nil
	case !onHost:
		return linux.TierT2, false, nil
	}
	err = hostProbeT1()
	switch {
	case err == nil:
		return linux.TierT1, hostProbeProc() != nil, nil
	case cfg.linuxTier == TierT1:
		return 0, false, err
	}
	return linux.TierT2, false, nil
}
