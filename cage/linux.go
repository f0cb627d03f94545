package cage

import "github.com/procage-go/procage/profile"

// linuxPlan is the Linux backend's plan (Landlock and seccomp).
//
// Not yet: the Linux lowering lands with internal/linuxsandbox; until then
// the plan says so, and the Linux host backend refuses to spawn.
type linuxPlan struct {
	txt string
}

func (p *linuxPlan) kind() Backend { return BackendLinux }
func (p *linuxPlan) text() string  { return p.txt }
func (p *linuxPlan) rules() int    { return 0 }

// planLinux lowers the policy for Landlock and seccomp. It is portable, so
// a Linux plan can be previewed on any OS.
func planLinux(policy profile.Policy, env profile.Env) (*linuxPlan, error) {
	return &linuxPlan{txt: "; Linux (Landlock + seccomp) plan for " + policy.String() + ": not yet implemented\n"}, nil
}
