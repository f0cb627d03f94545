package seatbelt

import (
	"testing"

	"github.com/procage-go/procage/internal/golden"
	"github.com/procage-go/procage/profile"
)

// TestGoldenLower pins whole lowered profiles for typical policies. Rewrite
// with go test ./profile/seatbelt -update after an intended change, and read the
// diff: every line of it is a change in what a cage allows.
func TestGoldenLower(t *testing.T) {
	cases := []struct {
		name   string
		opts   []profile.Option
		env    profile.Env
		reason string
	}{
		{
			name:   "agent-workspace.sb",
			opts:   []profile.Option{profile.ReadWrite("/Users/alice/project"), profile.Read("/opt/homebrew"), profile.Exec("/opt/homebrew/bin")},
			env:    profile.Env{Home: testHome},
			reason: "the common agent shape: one writable workspace under the home directory, where every hard-deny class must follow the broad allow and repeat its specific operations",
		},
		{
			name: "resolved-paths.sb",
			opts: []profile.Option{profile.ReadWrite("/tmp/build"), profile.Read("/Users/alice/link/docs")},
			env: profile.Env{
				Home:     testHome,
				Resolved: map[string]string{"/tmp/build": "/private/tmp/build", "/Users/alice/link/docs": "/Volumes/Data/docs"},
				Links:    []string{"/tmp", "/Users/alice/link"},
			},
			reason: "rules name only kernel spellings; each traversed link gets metadata on itself and nothing behind it",
		},
		{
			name:   "network-and-services.sb",
			opts:   []profile.Option{profile.Network(profile.NetworkLoopback, 5432, 8080), profile.UnixSocket("/private/var/run/app.sock"), profile.MachLookup("com.apple.trustd.agent"), profile.Waive(profile.ProcessAccess, profile.TrustHandoff)},
			env:    profile.Env{Home: testHome},
			reason: "loopback ports, an allowed Unix socket (connect is network-outbound, plus the file at matching specificity), a Mach service; two classes waived",
		},
		{
			name:   "forking-seatbelt.sb",
			opts:   []profile.Option{profile.Fork(), profile.Read("/usr/local"), profile.Seatbelt(`(allow sysctl-read (sysctl-name "kern.boottime")) (deny file-read* (subpath "/usr/local/secret"))`)},
			env:    profile.Env{Home: testHome},
			reason: "a forking policy ends with the run-marker block bound per spawn; Seatbelt-layer rules sit between the policy and the hard-deny tier",
		},
		{
			name:   "network-proxy.sb",
			opts:   []profile.Option{profile.AllowHosts("github.com", "*.pythonhosted.org"), profile.DenyHosts("gist.github.com"), profile.ReadWrite("/Users/alice/project")},
			env:    profile.Env{Home: testHome, ProxyPort: 41234},
			reason: "network proxy: outbound TCP to the run's proxy port on localhost by a remote filter, IP sockets and TLS trust; no DNS, no UDP, no listening; the host names stay with the proxy",
		},
		{
			name:   "exec-target-only.sb",
			opts:   []profile.Option{profile.ExecTargetOnly(), profile.ReadWrite("/Users/alice/project"), profile.Exec("/opt/homebrew/bin")},
			env:    profile.Env{Home: testHome},
			reason: "only the spawn's target may be executed: one deny after every exec allow, its target bound per spawn",
		},
		{
			name:   "private-temp.sb",
			opts:   []profile.Option{profile.ReadWrite("/Users/alice/project"), profile.Fork()},
			env:    profile.Env{Home: testHome, PrivateTemp: true},
			reason: "each run's private temporary directory (a preset's) is executable, as on Linux: go test runs the binary it links there; the directory is bound per spawn, before the hard-deny tier",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustLower(t, mustNew(t, tc.opts...), tc.env)
			golden.Check(t, "lower/"+tc.name, plan.Text())
		})
	}
}
