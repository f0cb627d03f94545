package cage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/pathresolve/macfs"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// fixedCompiler stands in for libsandbox so New behaves the same on every
// OS; the profile text is not looked at.
type fixedCompiler struct{}

func (fixedCompiler) Compile(string, []libsandbox.Param) ([]byte, error) {
	return []byte("bytecode"), nil
}

// homeFS is the simulated macOS tree with homes reachable under several
// spellings: through the /var link, through a symbolic link of its own,
// and through the data volume's firmlink.
func homeFS(tb testing.TB) *macfs.FS {
	tb.Helper()
	fsys := macfs.NewMacOS()
	for _, step := range []error{
		fsys.MkdirAll("/private/var/users/me"),
		fsys.Symlink("/Users/me", "/Users/alias"),
		fsys.Symlink("../private/var/users/me", "/Users/varme"),
	} {
		if step != nil {
			tb.Fatal(step)
		}
	}
	return fsys
}

// TestHomeResolvedForHardDenies: a home directory given in a spelling the
// kernel never sees (WithHome, or $HOME on the default path) is resolved
// before lowering, so every home-based hard deny (secrets, trust handoff,
// move-blocking, container sockets) stops the access as the kernel
// spells it, under a policy that grants the home tree. If the home were
// lowered as written, each of these accesses would be allowed by the grant.
func TestHomeResolvedForHardDenies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spelling string // as the caller writes it
		kernel   string
		viaEnv   bool // $HOME on the default path instead of WithHome
	}{
		{"var link", "/var/users/me", "/private/var/users/me", false},
		{"own symlink", "/Users/alias", "/Users/me", false},
		{"symlink then var link", "/Users/varme", "/private/var/users/me", false},
		{"firmlink spelling", "/System/Volumes/Data/Users/me", "/Users/me", false},
		{"HOME var link", "/var/users/me", "/private/var/users/me", true},
		{"HOME own symlink", "/Users/alias", "/Users/me", true},
		{"canonical", "/Users/me", "/Users/me", false},
	} {
		for _, grantHome := range []bool{false, true} {
			name := tc.name + "/root grant"
			if grantHome {
				name = tc.name + "/home grant"
			}
			t.Run(name, func(t *testing.T) {
				fsys := homeFS(t)
				opts := []cage.Option{
					cage.WithFS(fsys, fsys.Firmlinks()),
					cage.WithSandboxCheck(func() (bool, error) { return false, nil }),
					cage.WithCompiler(fixedCompiler{}),
				}
				if tc.viaEnv {
					t.Setenv("HOME", tc.spelling)
				} else {
					opts = append(opts, cage.WithHome(tc.spelling))
				}
				sock := func(home, name string) string { return home + "/" + name + "/docker.sock" }
				// The whole tree is granted, so the home is resolved as the
				// home and not only as a policy path that happens to equal it.
				tree := "/"
				if grantHome {
					tree = tc.spelling
				}
				policy, err := profile.New(profile.BaseV1,
					profile.ReadWrite(tree),
					profile.Network(profile.NetworkOn),
					profile.UnixSocket(sock(tc.spelling, ".docker/run")),
					profile.UnixSocket(sock(tc.spelling, ".orbstack/run")),
					profile.UnixSocket(sock(tc.spelling, ".colima/default")),
				)
				if err != nil {
					t.Fatal(err)
				}
				c, err := cage.New(policy, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.Home(); got != tc.kernel {
					t.Errorf("Home() = %q, want the kernel spelling %q", got, tc.kernel)
				}
				prof := c.SeatbeltPlan().Profile
				k := tc.kernel
				file := func(op, p string) sim.Access { return sim.Access{Op: op, Path: p, VnodeType: "REGULAR-FILE"} }
				dir := func(op, p string) sim.Access { return sim.Access{Op: op, Path: p, VnodeType: "DIRECTORY"} }
				decide := func(a sim.Access) sim.Decision {
					t.Helper()
					d, err := sim.Decide(prof, a)
					if err != nil {
						t.Fatalf("Decide(%s): %v", a, err)
					}
					return d
				}
				// The grant itself reaches the kernel spelling.
				if d := decide(file("file-write-data", k+"/notes.txt")); !d.Allowed {
					t.Fatalf("write %s/notes.txt under the home grant: %s", k, d)
				}
				for _, tt := range []struct {
					class  string
					access sim.Access
				}{
					{"secrets", file("file-read-data", k+"/.ssh/id_rsa")},
					{"secrets", file("file-read-data", k+"/.aws/credentials")},
					{"secrets", file("file-link", k+"/.netrc")},
					{"trust handoff", file("file-write-data", k+"/.zshrc")},
					{"trust handoff", file("file-write-create", k+"/Library/LaunchAgents/x.plist")},
					{"move-blocking", dir("file-write-unlink", k+"/.config")},
					{"move-blocking", dir("file-write-unlink", k)},
					{"container socket", sim.Access{Op: "network-outbound", Addr: sock(k, ".docker/run")}},
					{"container socket", sim.Access{Op: "network-outbound", Addr: sock(k, ".orbstack/run")}},
					{"container socket", sim.Access{Op: "network-outbound", Addr: sock(k, ".colima/default")}},
					{"container socket", file("file-write-data", sock(k, ".docker/run"))},
				} {
					if d := decide(tt.access); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
						t.Errorf("%s: %s, want denied by the %s hard deny in the kernel spelling", tt.access, d, tt.class)
					}
				}
				if tc.spelling == tc.kernel {
					return
				}
				// No hard-deny path rule is left in the caller's spelling.
				for _, r := range prof.Rules {
					if r.Layer != seatbelt.LayerHardDeny {
						continue
					}
					r.MapPaths(func(p string) string {
						if p == tc.spelling || strings.HasPrefix(p, tc.spelling+"/") {
							text, _ := (&sbpl.Profile{Version: 1, Rules: []sbpl.Rule{r}}).Text()
							t.Errorf("hard-deny rule names %s in the caller's spelling:\n%s", p, text)
						}
						return p
					})
				}
			})
		}
	}
}

// TestCompileLimitBoundary: WithCompileLimit(n) accepts a profile of
// exactly n rules and refuses one of n+1 with a *LimitError.
func TestCompileLimitBoundary(t *testing.T) {
	fsys := homeFS(t)
	opts := []cage.Option{
		cage.WithFS(fsys, fsys.Firmlinks()),
		cage.WithHome(macfs.Home),
		cage.WithSandboxCheck(func() (bool, error) { return false, nil }),
		cage.WithCompiler(fixedCompiler{}),
	}
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/Users/me/src"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(policy, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := len(c.SeatbeltPlan().Profile.Rules)
	if _, err := cage.New(policy, append(opts, cage.WithCompileLimit(n))...); err != nil {
		t.Errorf("New with WithCompileLimit(%d) for a %d-rule profile: %v; want it accepted", n, n, err)
	}
	_, err = cage.New(policy, append(opts, cage.WithCompileLimit(n-1))...)
	le, ok := errors.AsType[*seatbelt.LimitError](err)
	if !ok {
		t.Fatalf("New with WithCompileLimit(%d) for a %d-rule profile: %v, want a *LimitError", n-1, n, err)
	}
	if le.Rules != n || le.Limit != n-1 {
		t.Errorf("LimitError = %+v, want {Rules: %d, Limit: %d}", *le, n, n-1)
	}
}
