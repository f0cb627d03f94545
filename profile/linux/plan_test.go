package linux

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/profile"
)

// TestGapsRefused: each part Linux cannot enforce is refused by name, and
// accepted by name it is listed in the plan.
func TestGapsRefused(t *testing.T) {
	tests := []struct {
		name string
		opts []profile.Option
		want []profile.Gap
	}{
		{"home readable covers secrets", []profile.Option{profile.Read("/home/u")}, []profile.Gap{profile.GapSecrets}},
		{"home writable: secrets and startup files", []profile.Option{profile.ReadWrite("/home/u")}, []profile.Gap{profile.GapSecrets, profile.GapTrustHandoff}},
		{"root readable", []profile.Option{profile.Read("/")}, []profile.Gap{profile.GapSecrets}},
		{"writable project: git hooks", []profile.Option{profile.ReadWrite("/work/p")}, []profile.Gap{profile.GapTrustHandoff}},
		{"home's parent readable", []profile.Option{profile.Read("/home")}, []profile.Gap{profile.GapSecrets}},
		{"readable ~/.config holds gh and gcloud", []profile.Option{profile.Read("/home/u/.config")}, []profile.Gap{profile.GapSecrets}},
		{"writable ~/.local holds the Python user site", []profile.Option{profile.ReadWrite("/home/u/.local"), profile.Waive(profile.Secrets)}, []profile.Gap{profile.GapTrustHandoff}},
		{"Unix socket of gpg-agent", []profile.Option{profile.UnixSocket("/home/u/.gnupg/S.gpg-agent")}, []profile.Gap{profile.GapSecrets, profile.GapUnixSocketPath}},
		{"loopback", []profile.Option{profile.Network(profile.NetworkLoopback, profile.AnyPort)}, []profile.Gap{profile.GapLoopback}},
		{"network on", []profile.Option{profile.Network(profile.NetworkOn)}, []profile.Gap{profile.GapLocalServices}},
		{"network on, named localhost port", []profile.Option{profile.Network(profile.NetworkOn, 8080)}, []profile.Gap{profile.GapLocalServices}},
		{"network on, any port, localhost listening", []profile.Option{profile.Network(profile.NetworkOn, profile.AnyPort)}, []profile.Gap{profile.GapLocalServices}},
		{"loopback ports", []profile.Option{profile.Network(profile.NetworkLoopback, 80, 443)}, []profile.Gap{profile.GapLoopback}},
		{"unix socket", []profile.Option{profile.UnixSocket("/run/x.sock")}, []profile.Gap{profile.GapUnixSocketPath}},
		{"mach", []profile.Option{profile.MachLookup("com.example.x")}, []profile.Gap{profile.GapMach}},
		{"seatbelt", []profile.Option{profile.Seatbelt(`(allow file-read* (literal "/x"))`)}, []profile.Gap{profile.GapSeatbelt}},
		{"exec target only", []profile.Option{profile.ExecTargetOnly()}, []profile.Gap{profile.GapExecTargetOnly}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, err := profile.New(profile.BaseV1, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Lower(pol, Env{Env: profile.Env{Home: "/home/u"}})
			ge, ok := errors.AsType[*profile.GapError](err)
			if !ok {
				t.Fatalf("Lower = %v, want *profile.GapError", err)
			}
			var got []profile.Gap
			for _, p := range ge.Parts {
				if !slices.Contains(got, p.Gap) {
					got = append(got, p.Gap)
				}
				if p.Detail == "" {
					t.Errorf("gap %s has no detail", p.Gap)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("gaps (-want +got):\n%s", diff)
			}
			for _, g := range tt.want {
				if !ge.Has(g) || !strings.Contains(ge.Error(), string(g)) {
					t.Errorf("error %q does not name %s", ge, g)
				}
			}
			pl, err := Lower(pol, Env{Env: profile.Env{Home: "/home/u"}, Accept: tt.want})
			if err != nil {
				t.Fatalf("Lower with the gaps accepted: %v", err)
			}
			for _, g := range tt.want {
				if !slices.ContainsFunc(pl.Accepted, func(p profile.GapPart) bool { return p.Gap == g }) {
					t.Errorf("accepted gap %s not in the plan", g)
				}
				if !strings.Contains(pl.String(), "ACCEPTED GAP (not enforced) "+string(g)) {
					t.Errorf("plan text does not show accepted gap %s", g)
				}
			}
		})
	}
}

// TestWaivedClassIsNoGap: waiving a class removes its gap; an unrelated
// tree is no gap.
func TestWaivedClassIsNoGap(t *testing.T) {
	for _, opts := range [][]profile.Option{
		{profile.Read("/home/u"), profile.Waive(profile.Secrets)},
		{profile.ReadWrite("/work/p"), profile.Waive(profile.TrustHandoff)},
		{profile.Read("/work/p"), profile.Read("/home/u/src")},
		{profile.Read("/home/u/.sshx")},                                                     // a sibling name, not ~/.ssh
		{profile.Network(profile.NetworkOn, profile.AnyPort), profile.ListenAnyInterface()}, // all of localhost, asked for
	} {
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Lower(pol, Env{Env: profile.Env{Home: "/home/u"}}); err != nil {
			t.Errorf("Lower(%s) = %v, want a plan", pol, err)
		}
	}
}

func TestGrantCoveringSecrets(t *testing.T) {
	pl := mustPlan(t, nil)
	if _, err := pl.WithSpawn([]SpawnGrant{{Path: "/home/u", Dir: true}}, ""); !isGap(err, profile.GapSecrets) {
		t.Errorf("grant of home: %v, want a secrets gap", err)
	}
	if _, err := pl.WithSpawn([]SpawnGrant{{Path: "/work/out", Write: true, Dir: true}}, ""); !isGap(err, profile.GapTrustHandoff) {
		t.Errorf("write grant: %v, want a trust-handoff gap", err)
	}
	if _, err := pl.WithSpawn(nil, "/tmp/procage-run-1"); err != nil {
		t.Errorf("private temp: %v, want no gap", err)
	}
	// procage's own cache directory may hold a .git like the private
	// temporary directory; as a plain write grant it is a gap.
	caches := SpawnGrant{Path: "/tmp/procage-cache-1", Write: true, Dir: true, Own: true}
	if _, err := pl.WithSpawn([]SpawnGrant{caches}, ""); err != nil {
		t.Errorf("the cage's caches: %v, want no gap", err)
	}
	if _, err := pl.WithSpawn([]SpawnGrant{{Path: "/home/u/.ssh/c", Write: true, Dir: true, Own: true}}, ""); !isGap(err, profile.GapSecrets) {
		t.Errorf("an own directory inside ~/.ssh: %v, want a secrets gap", err)
	}
	pl = mustPlan(t, []profile.Option{profile.Waive(profile.TrustHandoff)})
	rules, err := pl.WithSpawn([]SpawnGrant{{Path: "/home/u/src", Dir: true}, {Path: "/work/out", Write: true, Dir: true}, caches}, "/tmp/procage-run-1")
	if err != nil {
		t.Fatal(err)
	}
	got := rules[len(pl.Rules):]
	want := []PathRule{
		{Path: "/home/u/src", Access: fsRead, Layer: LayerGrant},
		{Path: "/work/out", Access: fsRead | fsWrite, Layer: LayerGrant},
		{Path: "/tmp/procage-cache-1", Access: fsRead | fsWrite, Layer: LayerGrant},
		// Execute too: a build runs what it linked there, as on macOS.
		{Path: "/tmp/procage-run-1", Access: fsRead | fsWrite | FSExecute, Layer: LayerTemp},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spawn rules (-want +got):\n%s", diff)
	}
	accepted := mustPlan(t, nil, profile.GapSecrets)
	if _, err := accepted.WithSpawn([]SpawnGrant{{Path: "/home/u", Dir: true}}, ""); err != nil {
		t.Errorf("grant of home with the gap accepted: %v", err)
	}
}

func isGap(err error, g profile.Gap) bool {
	ge, ok := errors.AsType[*profile.GapError](err)
	return ok && ge.Has(g)
}

func TestMinABI(t *testing.T) {
	tests := []struct {
		name string
		opts []profile.Option
		want int
	}{
		{"default: scopes", nil, 6},
		{"process access waived: truncate", []profile.Option{profile.Waive(profile.ProcessAccess)}, 3},
		{"waived, loopback ports", []profile.Option{profile.Waive(profile.ProcessAccess), profile.Network(profile.NetworkLoopback, 80)}, 4},
		{"waived, network on: truncate", []profile.Option{profile.Waive(profile.ProcessAccess), profile.Network(profile.NetworkOn, profile.AnyPort), profile.ListenAnyInterface()}, 3},
		{"waived, loopback any port", []profile.Option{profile.Waive(profile.ProcessAccess), profile.Network(profile.NetworkLoopback, profile.AnyPort)}, 3},
	}
	for _, tt := range tests {
		pl := mustPlan(t, tt.opts, profile.GapLoopback)
		if pl.MinABI != tt.want {
			t.Errorf("%s: MinABI = %d, want %d", tt.name, pl.MinABI, tt.want)
		}
	}
}

// TestPlanAtOlderABI: rights a kernel does not know are not handled (so
// landlock_create_ruleset accepts the ruleset), and rules carry only
// handled rights.
func TestPlanAtOlderABI(t *testing.T) {
	pol, err := profile.New(profile.BaseV1, profile.ReadWrite("/work/p"), profile.Waive(profile.TrustHandoff))
	if err != nil {
		t.Fatal(err)
	}
	for abi := 1; abi <= MaxABI+1; abi++ {
		pl, err := Lower(pol, Env{ABI: abi})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pl.Rules {
			if r.Access&^pl.HandledFS != 0 {
				t.Errorf("ABI %d: rule %s has unhandled rights %s", abi, r.Path, r.Access&^pl.HandledFS)
			}
		}
		if abi < 5 && pl.HandledFS&FSIoctlDev != 0 || abi >= 5 && pl.HandledFS&FSIoctlDev == 0 {
			t.Errorf("ABI %d: handled %s", abi, pl.HandledFS)
		}
		if abi < 6 && pl.Scopes != 0 || abi < 4 && pl.HandledNet != 0 {
			t.Errorf("ABI %d: scopes %s, net %s", abi, pl.Scopes, pl.HandledNet)
		}
	}
}

func TestPlanRules(t *testing.T) {
	pl := mustPlan(t, []profile.Option{
		profile.Read("/data"), profile.Exec("/opt/tool"), profile.FS(profile.AccessWrite, profile.Literal, "/work/log.txt"),
	})
	var got []PathRule
	for _, r := range pl.Rules {
		if r.Layer == LayerPolicy {
			got = append(got, r)
		}
	}
	want := []PathRule{
		{Path: "/data", Access: FSReadFile | FSReadDir, Layer: LayerPolicy},
		{Path: "/opt/tool", Access: FSReadFile | FSReadDir | FSExecute, Layer: LayerPolicy},
		{Path: "/work/log.txt", Access: FSReadFile | FSWriteFile | FSTruncate, Layer: LayerPolicy},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policy rules (-want +got):\n%s", diff)
	}
	for _, r := range pl.Rules {
		if r.Layer == LayerBase && (within("/home/u", r.Path) || within("/tmp", r.Path) || within("/proc", r.Path) || within("/dev/pts/0", r.Path)) {
			t.Errorf("base rule %s covers home, /tmp, /proc or other terminals (/dev/pts)", r.Path)
		}
	}
	if pl.Scopes != ScopeSignal|ScopeAbstractUnixSocket {
		t.Errorf("scopes = %s", pl.Scopes)
	}
}

func TestPlanTextAndJSON(t *testing.T) {
	pl := mustPlan(t, []profile.Option{profile.Read("/data"), profile.Network(profile.NetworkLoopback, 8080)}, profile.GapLoopback)
	text := pl.String()
	for _, want := range []string{
		"Landlock ABI 7 planned, at least 6 needed",
		"needs ABI 6: signal and abstract Unix socket scoping (process-access)",
		"needs ABI 4: TCP port rules",
		"path policy   /data: read_file|read_dir",
		"path base     /usr/bin: execute|read_file|read_dir",
		"tcp port 8080: bind_tcp|connect_tcp",
		"seccomp clone3 -> ENOSYS",
		"seccomp ptrace -> EPERM",
		"seccomp sendto if arg3&0x20000000 != 0 -> EPERM  # ports restricted: no TCP Fast Open",
		"seccomp file_setattr -> ENOSYS",
		"numbers above the reviewed table (amd64 471, arm64 471; golang.org/x/sys v0.50.0) answer ENOSYS",
		"ACCEPTED GAP (not enforced) network-loopback:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
	b, err := json.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		MinABI int `json:"min_abi"`
		Rules  []struct {
			Path   string   `json:"path"`
			Access []string `json:"access"`
			Layer  string   `json:"layer"`
		} `json:"rules"`
		NetRules []struct {
			Port int `json:"port"`
		} `json:"net_rules"`
		Seccomp []struct {
			Syscall, If, Errno string
		} `json:"seccomp"`
		Accepted []struct {
			Gap string `json:"gap"`
		} `json:"accepted_gaps"`
		Lengths  map[string]int `json:"seccomp_program_length"`
		Ceilings map[string]int `json:"seccomp_enosys_above"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.MinABI != 6 || len(j.NetRules) != 1 || j.NetRules[0].Port != 8080 || len(j.Accepted) != 1 || j.Accepted[0].Gap != string(profile.GapLoopback) {
		t.Errorf("JSON: %s", b)
	}
	if !slices.ContainsFunc(j.Rules, func(r struct {
		Path   string   `json:"path"`
		Access []string `json:"access"`
		Layer  string   `json:"layer"`
	}) bool {
		return r.Path == "/data" && r.Layer == "policy" && slices.Equal(r.Access, []string{"read_file", "read_dir"})
	}) {
		t.Errorf("JSON rules lack /data: %s", b)
	}
	if j.Lengths["amd64"] < 50 || j.Lengths["arm64"] < 50 {
		t.Errorf("program lengths %v", j.Lengths)
	}
	if j.Ceilings["amd64"] != int(ArchAMD64.ceiling) || j.Ceilings["arm64"] != int(ArchARM64.ceiling) {
		t.Errorf("ceilings %v", j.Ceilings)
	}
	if !slices.ContainsFunc(j.Seccomp, func(s struct{ Syscall, If, Errno string }) bool {
		return s.Syscall == "socket" && strings.Contains(s.If, "arg1&0xf != 0x1") && s.Errno == "EPERM"
	}) {
		t.Errorf("JSON seccomp lacks the loopback UDP rule: %s", b)
	}
}

// TestHardDenyStrips: a rule or grant at or beneath a protected path loses
// the rights its class refuses there (the plan records each), the rest
// of the rule stays, and a waived class strips nothing.
func TestHardDenyStrips(t *testing.T) {
	lit := func(a profile.Access, p string) profile.Option { return profile.FS(a, profile.Literal, p) }
	rw := profile.AccessRead | profile.AccessWrite
	tests := []struct {
		name   string
		opt    profile.Option
		path   string
		access FSAccess // what stays; 0: the rule is gone
		class  profile.Class
	}{
		{"a secret file", lit(profile.AccessRead, "/home/u/.netrc"), "/home/u/.netrc", 0, profile.Secrets},
		{"beneath ~/.ssh", profile.Read("/home/u/.ssh/keys"), "/home/u/.ssh/keys", 0, profile.Secrets},
		{"exec beneath ~/.aws", profile.Exec("/home/u/.aws/bin"), "/home/u/.aws/bin", 0, profile.Secrets},
		{"~/.bashrc written", lit(rw, "/home/u/.bashrc"), "/home/u/.bashrc", FSReadFile, profile.TrustHandoff},
		{"git config written", lit(rw, "/w/p/.git/config"), "/w/p/.git/config", FSReadFile, profile.TrustHandoff},
		{"a git hook written", lit(rw, "/w/p/.git/hooks/pre-commit"), "/w/p/.git/hooks/pre-commit", FSReadFile, profile.TrustHandoff},
		{"a gitconfig include", lit(rw, "/home/u/.gitconfig-work"), "/home/u/.gitconfig-work", FSReadFile, profile.TrustHandoff},
		{"git's user config tree", profile.ReadWrite("/home/u/.config/git"), "/home/u/.config/git", fsRead, profile.TrustHandoff},
	}
	for _, tt := range tests {
		pl := mustPlan(t, []profile.Option{tt.opt})
		i := slices.IndexFunc(pl.Rules, func(r PathRule) bool { return r.Path == tt.path })
		switch {
		case tt.access == 0 && i >= 0:
			t.Errorf("%s: rule kept: %v", tt.name, pl.Rules[i])
		case tt.access != 0 && (i < 0 || pl.Rules[i].Access != tt.access):
			t.Errorf("%s: rules %v, want %s with %s", tt.name, pl.Rules, tt.path, tt.access)
		}
		if len(pl.Denied) != 1 || pl.Denied[0].Class != tt.class || pl.Denied[0].Path != tt.path {
			t.Errorf("%s: denied %v, want one %s denial of %s", tt.name, pl.Denied, tt.class, tt.path)
		}
		if !strings.Contains(pl.String(), "hard-deny "+string(tt.class)+": policy "+tt.path) {
			t.Errorf("%s: the plan does not show the denial:\n%s", tt.name, pl.String())
		}
		waived := mustPlan(t, []profile.Option{tt.opt, profile.Waive(tt.class)}, profile.GapTrustHandoff)
		if len(waived.Denied) != 0 {
			t.Errorf("%s, class waived: denied %v", tt.name, waived.Denied)
		}
	}
	// The same for a spawn's grants; the data git writes stays writable.
	pl := mustPlan(t, nil)
	rules, err := pl.WithSpawn([]SpawnGrant{{Path: "/home/u/.ssh/id_rsa"}, {Path: "/w/p/.git/config", Write: true},
		{Path: "/w/p/.git/index", Write: true}, {Path: "/dev/pts/3", Write: true}}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []PathRule{
		{Path: "/w/p/.git/config", Access: FSReadFile, Layer: LayerGrant},
		{Path: "/w/p/.git/index", Access: (fsRead | fsWrite) & FSFileRights, Layer: LayerGrant},
		{Path: "/dev/pts/3", Access: (fsRead | fsWrite) & FSFileRights, Layer: LayerGrant},
	}
	if diff := cmp.Diff(want, rules[len(pl.Rules):]); diff != "" {
		t.Errorf("spawn rules (-want +got):\n%s", diff)
	}
	if _, err := pl.WithSpawn(nil, "/home/u/.ssh/tmp"); !isGap(err, profile.GapSecrets) {
		t.Errorf("a private temporary directory inside ~/.ssh: %v, want a secrets gap", err)
	}
}
