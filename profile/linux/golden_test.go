package linux

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/procage-go/procage/internal/golden"
	"github.com/procage-go/procage/profile"
)

// TestGoldenPlan pins whole Linux plans for typical policies. Rewrite with
// go test ./profile/linux -update after an intended change, and read the
// diff: every line of it is a change in what a Linux child gets.
func TestGoldenPlan(t *testing.T) {
	const home = "/home/alice"
	cases := []struct {
		name   string
		opts   []profile.Option
		env    Env
		json   bool // also pin the JSON form
		reason string
	}{
		{
			name:   "base-v1.txt",
			env:    Env{Env: profile.Env{Home: home}},
			reason: "Base V1 alone: the rules, scopes and seccomp set every plan starts from (network off, no forking)",
		},
		{
			name: "agent-workspace.txt",
			opts: []profile.Option{profile.ReadWrite(home + "/project"), profile.Read("/opt/tool"), profile.Exec("/opt/tool/bin"), profile.Fork()},
			env:  Env{Env: profile.Env{Home: home}, Accept: []profile.Gap{profile.GapTrustHandoff}},
			json: true,
			reason: "the common agent shape: a writable workspace (its git hooks an accepted gap), a tool tree, forking " +
				"(setsid and setpgid refused instead of fork); also pins the JSON tools read",
		},
		{
			name:   "resolved-paths.txt",
			opts:   []profile.Option{profile.Read(home + "/link/docs"), profile.ReadWrite("/tmp/build"), profile.Waive(profile.TrustHandoff)},
			env:    Env{Env: profile.Env{Home: home, Resolved: map[string]string{home + "/link/docs": "/data/docs", "/tmp/build": "/var/tmp/build"}}},
			reason: "rules name only the kernel spellings the caller resolved, never the paths as written",
		},
		{
			name:   "loopback-ports.txt",
			opts:   []profile.Option{profile.Network(profile.NetworkLoopback, 5432, 8080)},
			env:    Env{Env: profile.Env{Home: home}, Accept: []profile.Gap{profile.GapLoopback}},
			reason: "loopback ports: Landlock TCP port rules (ABI 4), TCP-only sockets and no Fast Open; the address gap accepted",
		},
		{
			name:   "network-on.txt",
			opts:   []profile.Option{profile.Network(profile.NetworkOn, profile.AnyPort), profile.ListenAnyInterface(), profile.UnixSocket("/run/app.sock")},
			env:    Env{Env: profile.Env{Home: home}, Accept: []profile.Gap{profile.GapUnixSocketPath}},
			reason: "network on with every port and interface asked for (no gap): IP and NETLINK_ROUTE sockets, the resolver's directory; a Unix socket by path accepted",
		},
		{
			name:   "root.txt",
			opts:   []profile.Option{profile.ReadWrite("/srv/out"), profile.Waive(profile.TrustHandoff)},
			env:    Env{Env: profile.Env{Home: "/root"}, Root: true},
			reason: "a root caller keeps uid 0: seccomp also refuses mode, owner, xattr and inode-flag changes",
		},
		{
			name:   "hard-deny.txt",
			opts:   []profile.Option{profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, home+"/.bashrc"), profile.Read(home + "/.ssh/keys"), profile.Read(home + "/src")},
			env:    Env{Env: profile.Env{Home: home}},
			reason: "hard-deny classes strip a rule on or beneath a protected path (listed as hard-deny lines), without a gap",
		},
		{
			name:   "abi3-waived.txt",
			opts:   []profile.Option{profile.Read("/data"), profile.Waive(profile.ProcessAccess), profile.Network(profile.NetworkLoopback, 80)},
			env:    Env{Env: profile.Env{Home: home}, ABI: 3, Accept: []profile.Gap{profile.GapLoopback}},
			reason: "an ABI 3 kernel: only its rights handled, no TCP rules or scopes (process-access waived, so no ABI 6 need), and the plan says ABI 4 is needed",
		},
		{
			name: "t1-agent-workspace.txt",
			opts: []profile.Option{profile.ReadWrite(home + "/project"), profile.Read("/opt/tool"), profile.Exec("/opt/tool/bin"), profile.Fork()},
			env:  Env{Env: profile.Env{Home: home}, Tier: TierT1, Accept: []profile.Gap{profile.GapTrustHandoff}},
			json: true,
			reason: "the agent shape at tier T1: the mount layout (all read-only, the workspace read-write, its git directories pinned), " +
				"and the trust-handoff gap narrowed to the names a run can create, still accepted by name",
		},
		{
			name:   "t1-home-read.txt",
			opts:   []profile.Option{profile.Read(home)},
			env:    Env{Env: profile.Env{Home: home}, Tier: TierT1},
			reason: "a home read at T1 needs no gap: every protected store that exists is covered by an empty read-only mount (hide lines)",
		},
		{
			name:   "t1-writable-home.txt",
			opts:   []profile.Option{profile.ReadWrite(home)},
			env:    Env{Env: profile.Env{Home: home}, Tier: TierT1, Accept: []profile.Gap{profile.GapTrustHandoff, profile.GapSecrets}},
			reason: "a writable home at T1: stores that exist are hidden and startup files protected, but both gaps stay, narrowed to the names that do not exist yet",
		},
		{
			name:   "t1-root.txt",
			opts:   []profile.Option{profile.ReadWrite("/srv/out"), profile.Waive(profile.TrustHandoff)},
			env:    Env{Env: profile.Env{Home: "/root"}, Root: true, Tier: TierT1},
			reason: "root at T1: read-only mounts stop mode, owner and xattr changes outside the writable trees (and /proc is read-only), so seccomp refuses only inode flags and set-ID bits",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reason == "" {
				t.Fatal("a golden case needs a reason")
			}
			pol, err := profile.New(profile.BaseV1, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := Lower(pol, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, pl.String())
			if tc.json {
				b, err := json.Marshal(pl)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := json.Indent(&out, b, "", "  "); err != nil {
					t.Fatal(err)
				}
				out.WriteByte('\n')
				golden.Check(t, tc.name[:len(tc.name)-len(filepath.Ext(tc.name))]+".json", out.String())
			}
		})
	}
}
