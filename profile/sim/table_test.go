package sim_test

import (
	"testing"

	"github.com/procage-go/procage/internal/hardwalk"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// TestProtectedTableOnSimulator walks the hard-deny table for the macOS
// backend: for every protected entry, a policy rule on the entry, on a
// directory beneath it, on its parent and on the home directory (and a
// spawn's read-write grant of each, as a sandbox extension) leaves the
// entry's file unreadable (secrets) and unwritable (both classes) under
// every simulator variant. Linux-only entries are the Linux test's.
func TestProtectedTableOnSimulator(t *testing.T) {
	env := profile.Env{Home: intentHome, ZDotDir: intentHome + "/zdot", XDGConfigHome: intentHome + "/xdg"}
	cases := hardwalk.Cases("darwin", env, intentHome+"/proj")
	if len(cases) < 60 {
		t.Fatalf("only %d table entries placed", len(cases))
	}
	lower := func(opts ...profile.Option) *seatbelt.Plan { return lowerEnv(t, env, opts...) }
	ext := lower() // a spawn grant adds only an extension to the base profile
	for _, c := range cases {
		ops := []string{"file-write-data", "file-write-create", "file-write-unlink"}
		if c.Entry.Protect&profile.ProtectRead != 0 {
			ops = append(ops, "file-read-data")
		}
		check := func(plan *seatbelt.Plan, file, how string, exts []string) {
			for _, v := range variants {
				for _, op := range ops {
					a := sim.Access{Op: op, Path: file, VnodeType: "REGULAR-FILE", Extensions: exts}
					d, err := v.decide(plan.Profile, a)
					if err != nil {
						t.Fatalf("%s: %v", a, err)
					}
					if d.Allowed {
						t.Errorf("%s %s by %s, %s: %s", c.Entry.Class, c.Path, how, v.name, d)
					}
				}
			}
		}
		for _, g := range c.Grants {
			rule := profile.ReadWrite(g.Path)
			if !g.Dir {
				rule = profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, g.Path)
			}
			check(lower(rule), g.File, "policy of "+g.Name+" "+g.Path, nil)
		}
		// Every grant's file is the same: one extension check covers them.
		check(ext, c.Grants[0].File, "a read-write grant", []string{seatbelt.ExtensionReadWrite})
	}
}
