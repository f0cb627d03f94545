package sim_test

// Red-team canaries for the one hard-deny table (issue 19) on the macOS
// lowering, decided by the simulator only (no claim about real Seatbelt):
// each fails while a lowered profile lets a protected file be read or a
// trust-handoff file be written under some variant.

import (
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sim"
)

// rt19Check lowers opts with env and fails for every variant that allows
// op on file.
func rt19Check(t *testing.T, what string, env profile.Env, file string, ops []string, opts ...profile.Option) {
	t.Helper()
	plan := lowerEnv(t, env, opts...)
	for _, op := range ops {
		open := 0
		var first sim.Decision
		for _, v := range variants {
			d, err := v.decide(plan.Profile, sim.Access{Op: op, Path: file, VnodeType: "REGULAR-FILE"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				if open == 0 {
					first = d
				}
				open++
			}
		}
		if open > 0 {
			t.Errorf("ESCAPE (simulator) %s: %s %s allowed under %d of %d variants: %s", what, op, file, open, len(variants), first)
		}
	}
}

var (
	rt19Read  = []string{"file-read-data"}
	rt19Write = []string{"file-write-data"}
)

// TestRT19SimBareRepository: a bare repository's config and hooks (no
// the variable).
func TestRT19SimXDGConfigHome(t *testing.T) {
	xdg := intentHome + "/xdg"
	env := profile.Env{Home: intentHome, XDGConfigHome: xdg}
	rt19Check(t, "read of $XDG_CONFIG_HOME/gh", env, xdg+"/gh/hosts.yml", rt19Read, profile.Read(xdg+"/gh"))
}

// TestRT19SimSymlinkedStore: ~/.aws a link to ~/dotfiles/aws; the policy
// names ~/.aws and the resolver gives its kernel spelling. The hard-deny
// rule names ~/.aws, which no lookup of the credentials passes through
// once resolved.
func TestRT19SimSymlinkedStore(t *testing.T) {
	aws, target := intentHome+"/.aws", intentHome+"/dotfiles/aws"
	env := profile.Env{Home: intentHome, Resolved: map[string]string{aws: target}, Links: []string{aws}, ProtectedAt: map[string]string{aws: target}}
	rt19Check(t, "read of ~/.aws (a link)", env, target+"/credentials", rt19Read, profile.Read(aws))
}

// TestRT19SimStartupFilesMissing: ~/.bash_aliases (sourced by Debian's
// and Ubuntu's skeleton .bashrc) is not in the table.
func TestRT19SimStartupFilesMissing(t *testing.T) {
	f := intentHome + "/.bash_aliases"
	rt19Check(t, "literal write of ~/.bash_aliases", profile.Env{Home: intentHome}, f, rt19Write,
		profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, f))
}

// TestRT19SimLiteralDirectory holds on the simulator (a literal filter
// matches only the directory itself): the Linux-only escape of
// tests/rt19_linux_test.go TestLinuxRT19LiteralDirectory.
func TestRT19SimLiteralDirectory(t *testing.T) {
	rt19Check(t, "literal rule on the home directory", profile.Env{Home: intentHome}, intentHome+"/.ssh/id_rsa",
		append(rt19Read, rt19Write...), profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, intentHome))
}
