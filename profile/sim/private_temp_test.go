package sim_test

import (
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// TestIntentPrivateTemp: a run's private temporary directory (bound per
// spawn as seatbelt.ParamPrivateTemp, read-write through its extension)
// lets the run execute and map what it wrote there, as on Linux (go test
// links its test binary in TMPDIR and runs it); nothing outside it gains
// exec, a plan without a private temporary directory executes nothing
// there, and an ExecTargetOnly policy still executes only its target.
func TestIntentPrivateTemp(t *testing.T) {
	const temp = "/private/var/folders/ab/cd/T/procage-run-1"
	built := temp + "/go-build1/b001/p.test"
	rw := []string{seatbelt.ExtensionReadWrite}
	params := map[string]string{seatbelt.ParamPrivateTemp: temp}
	withTemp := profile.Env{Home: intentHome, PrivateTemp: true}
	cases := []struct {
		name   string
		env    profile.Env
		opts   []profile.Option
		acc    sim.Access
		target string // ExecTargetOnly's bound target
		allow  bool
	}{
		{"exec built binary", withTemp, nil, sim.Access{Op: "process-exec*", Path: built}, "", true},
		{"map built library", withTemp, nil, sim.Access{Op: "file-map-executable", Path: temp + "/lib.dylib"}, "", true},
		{"write built binary", withTemp, nil, sim.Access{Op: "file-write-create", Path: built}, "", true},
		{"forking run", withTemp, []profile.Option{profile.Fork()}, sim.Access{Op: "process-exec*", Path: built}, "", true},
		{"sibling of the directory", withTemp, nil, sim.Access{Op: "process-exec*", Path: temp + "x/p.test"}, "", false},
		{"another temporary directory", withTemp, nil, sim.Access{Op: "process-exec*", Path: "/private/var/folders/ab/cd/T/other/p.test"}, "", false},
		{"no private temp in the plan", profile.Env{Home: intentHome}, nil, sim.Access{Op: "process-exec*", Path: built}, "", false},
		{"exec target only: not the target", withTemp, []profile.Option{profile.ExecTargetOnly()}, sim.Access{Op: "process-exec*", Path: built}, "/bin/sh", false},
		{"exec target only: the target", withTemp, []profile.Option{profile.ExecTargetOnly()}, sim.Access{Op: "process-exec*", Path: built}, built, true},
	}
	for _, tc := range cases {
		plan := lowerEnv(t, tc.env, tc.opts...)
		acc := tc.acc
		acc.Extensions = rw
		acc.Params = map[string]string{}
		for _, k := range plan.Params {
			switch k {
			case seatbelt.ParamPrivateTemp:
				acc.Params[k] = params[k]
			case seatbelt.ParamExecTarget:
				acc.Params[k] = tc.target
			default:
				acc.Params[k] = "org.procage.run.x"
			}
		}
		for _, v := range variants {
			d, err := v.decide(plan.Profile, acc)
			if err != nil {
				t.Fatalf("%s [%s]: %v", tc.name, v.name, err)
			}
			if d.Allowed != tc.allow {
				t.Errorf("%s [%s]: %s %s allowed=%v, want %v (%v)", tc.name, v.name, acc.Op, acc.Path, d.Allowed, tc.allow, d)
			}
		}
	}
}
