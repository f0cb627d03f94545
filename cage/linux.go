package cage

import (
	"errors"
	"fmt"
	"os"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// linuxPlan is the Linux backend's plan, with what lowering took, so the
// host backend can lower again for the running kernel's ABI.
type linuxPlan struct {
	plan   *linux.Plan
	policy profile.Policy
	env    linux.Env
}

func (p *linuxPlan) kind() Backend { return BackendLinux }
func (p *linuxPlan) text() string  { return p.plan.String() }
func (p *linuxPlan) rules() int    { return len(p.plan.Rules) + len(p.plan.Seccomp) }

// planLinux lowers the policy for Landlock and seccomp at Landlock ABI abi
// (0: the newest this package knows). It is portable, so a Linux plan can
// be previewed on any OS. A part Linux cannot enforce is a *profile.GapError
// unless accepted ([AcceptGaps]), returned with the plan, which lists it.
func planLinux(policy profile.Policy, env profile.Env, accept []profile.Gap, abi int, tier linux.Tier, noProc bool) (*linuxPlan, error) {
	le := linux.Env{Env: env, Accept: accept, ABI: abi, Root: os.Geteuid() == 0, Tier: tier, NoProcMount: noProc, AnonInodeSetattr: hostAnonInodeSetattr(), NewNames: hostNewNames()}
	pl, err := linux.Lower(policy, le)
	if err != nil {
		if _, ok := errors.AsType[*profile.GapError](err); ok {
			// The plan too, for a PlanOnly cage to show.
			return &linuxPlan{plan: pl, policy: policy, env: le}, err
		}
		return nil, fmt.Errorf("cage: %w", err)
	}
	return &linuxPlan{plan: pl, policy: policy, env: le}, nil
}

// LinuxPlan returns the cage's Linux plan, or nil for another backend:
// the Landlock ruleset (each path with its rights and layer), the TCP port
// rules, the scopes, the seccomp rules, the minimum Landlock ABI and the
// accepted gaps (and, in a [PlanOnly] cage, the refused ones). Package profile/linux decides it and documents each part.
func (c *Cage) LinuxPlan() *linux.Plan {
	if p, ok := c.planned.(*linuxPlan); ok {
		return p.plan.Clone() // the backend enforces p.plan: a caller's change must not reach it
	}
	return nil
}
