package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// The small world random policies and accesses are drawn from: nested
// paths, case and normalization variants, paths the resolver rewrites,
// the home directory's secrets, sockets and Mach names.
var (
	genPaths = []string{
		"/data", "/data/a", "/data/a/b", "/data/A/b", "/Data/a/B/c", "/data/caf\u00e9", "/data/cafe\u0301/x",
		"/tmp/t", "/private/tmp/t", "/private/tmp/t/f", "/Users/me", "/Users/me/.ssh", "/Users/me/.SSH/id_rsa",
		"/Users/me/src", "/usr/lib/libx.dylib", "/System/Library/F", "/etc", "/tmp", "/var", "/private/etc/hosts",
		"/private/etc/ssl/cert.pem", "/var/run/s.sock", "/private/var/run/s.sock", "/private/var/run/mDNSResponder",
		"/", "/Volumes/D/a", "/link", "/Users/me/.zshrc", "/data/a/.git/hooks/pre-commit", "/Users/me/.aws/credentials",
		"/Library/Keychains/System.keychain", "/dev/ttys003", "/dev/tty",
	}
	genResolved = map[string]string{
		"/tmp/t": "/private/tmp/t", "/var/run/s.sock": "/private/var/run/s.sock",
		"/data/a": "/Volumes/D/a", "/link": "/data/a/b",
	}
	genLinks = []string{"/link", "/data/link", "/tmp"}
	genAddrs = []string{
		"localhost:80", "127.0.0.1:8080", "[::1]:80", "127.0.0.2:22", "10.0.0.1:443", "[2001:db8::1]:80",
		"/private/var/run/s.sock", "/var/run/s.sock", "/private/var/run/mDNSResponder", "/private/tmp/t/x.sock",
	}
	genMach = []string{
		"com.example.a", "com.example.b", "com.apple.trustd", "com.apple.dnssd.service",
		"com.apple.coreservices.launchservicesd", "com.apple.secd",
		"procage-r1.run1", "procage-r1.run2", "procage-r1",
	}
	genSysctl  = []string{"kern.procargs2", "kern.procargs", "kern.ostype", "kern.proc.pid.1", "hw.ncpu"}
	genTargets = []string{"self", "pgrp", "others", "children", "same-sandbox", "initproc"}
	genOps     = []string{
		"file-read-data", "file-read-metadata", "file-read-xattr", "file-write-data", "file-write-create",
		"file-write-unlink", "file-write-mode", "file-map-executable", "process-exec*", "process-exec-interpreter",
		"network-outbound", "network-bind", "network-inbound", "mach-lookup", "process-fork", "system-socket",
		"sysctl-read", "sysctl-write", "signal", "process-info-pidinfo", "process-info-listpids",
		"system-mac-syscall", "mach-task-special-port-get", "mach-task-read", "lsopen", "iokit-open-service", "iokit-get-properties", "nvram-get",
		"file-link", "file-clone", "file-write-setugid",
	}
	// Seatbelt-layer fragments a policy may carry.
	genSeatbelt = []string{
		`(allow file-read* (subpath "/data/a"))`,
		`(deny file-write* (literal "/data/a/b"))`,
		`(allow file-read-data (subpath "/Users/me/src"))`,
		`(allow file-write* (require-all (subpath "/tmp/t") (require-not (literal "/tmp/t/f"))))`,
		`(allow mach-lookup (global-name-prefix "com.example."))`,
		`(allow sysctl-read (sysctl-name-prefix "kern."))`,
		`(allow signal (target same-sandbox))`,
		`(deny file-read-metadata (literal "/data"))`,
		`(deny mach-lookup (global-name-prefix "com.example.b"))`,
		`(deny process-exec* (require-any (subpath "/data") (regex #"^/usr/lib/")))`,
		`(allow network-outbound (remote tcp "localhost:22"))`,
		`(allow file-write-data (subpath "/Users/me"))`,
		`(allow default)`,
		`(allow file-link file-clone (subpath "/Users/me"))`,
		`(allow file-write-setugid (subpath "/data"))`,
		`(deny file-write*)`,
	}
)

// seatbeltWildcardDenies are Seatbelt-layer denies naming a wildcard that
// an earlier allow (header, base or policy) names more specifically; Lower
// must expand them as it expands hard-denies (operation specificity: see
// Decide).
var seatbeltWildcardDenies = []string{
	`(deny file* (subpath "/data/a"))`,
	`(deny network*)`,
}

// narrowerWildcardAllows are Seatbelt-layer allows naming a wildcard
// narrower than a hard-deny's (mach-task-special-port* under mach-task*),
// which Lower must add to the deny under the nested-wildcard order.
var narrowerWildcardAllows = []string{
	`(allow mach-task-special-port*)`,
	`(allow process-info-codesignature)`, // concrete: expanded, must agree
}

func init() {
	genSeatbelt = append(genSeatbelt, seatbeltWildcardDenies...)
	genSeatbelt = append(genSeatbelt, narrowerWildcardAllows...)
}

// randomPolicyFrom draws a policy, whose Seatbelt-layer rule (if any) is
// one of seatbelt, and an environment.
func randomPolicyFrom(r *rand.Rand, seatbelt []string) (profile.Policy, profile.Env, error) {
	var opts []profile.Option
	for range r.IntN(5) {
		access := profile.Access(1 + r.IntN(7))
		target := profile.Target(r.IntN(2))
		opts = append(opts, profile.FS(access, target, genPaths[r.IntN(len(genPaths))]))
	}
	var waived []profile.Class
	for _, c := range profile.Classes() {
		if r.IntN(3) == 0 {
			waived = append(waived, c)
		}
	}
	opts = append(opts, profile.Waive(waived...))
	switch mode := profile.NetworkMode(r.IntN(3)); mode {
	case profile.NetworkLoopback:
		ports := []int{profile.AnyPort}
		for _, p := range []int{22, 80, 8080} {
			if r.IntN(3) == 0 {
				ports = append(ports[:0:0], p)
			}
		}
		opts = append(opts, profile.Network(mode, ports...))
	case profile.NetworkOn:
		var ports []int
		if r.IntN(3) == 0 {
			ports = []int{8080}
		}
		opts = append(opts, profile.Network(mode, ports...))
		if r.IntN(3) == 0 {
			opts = append(opts, profile.ListenAnyInterface())
		}
	default:
		opts = append(opts, profile.Network(mode))
	}
	for _, s := range []string{"/var/run/s.sock", "/private/tmp/t/x.sock"} {
		if r.IntN(4) == 0 {
			opts = append(opts, profile.UnixSocket(s))
		}
	}
	for _, m := range genMach[:4] {
		if r.IntN(4) == 0 {
			opts = append(opts, profile.MachLookup(m))
		}
	}
	if r.IntN(2) == 0 {
		opts = append(opts, profile.Fork())
	}
	if r.IntN(3) == 0 {
		opts = append(opts, profile.ExecTargetOnly())
	}
	if r.IntN(3) == 0 {
		// The generator's rules include broad allows; accept them by name.
		opts = append(opts, profile.AcceptBroad(profile.BroadMachLookup, profile.BroadDefault),
			profile.Seatbelt(seatbelt[r.IntN(len(seatbelt))]))
	}
	p, err := profile.New(profile.BaseV1, opts...)
	env := profile.Env{Resolved: map[string]string{}}
	for k, v := range genResolved {
		if r.IntN(2) == 0 {
			env.Resolved[k] = v
		}
	}
	for _, l := range genLinks {
		if r.IntN(3) == 0 {
			env.Links = append(env.Links, l)
		}
	}
	if r.IntN(4) != 0 {
		env.Home = "/Users/me"
	}
	return p, env, err
}

// variant respells a path in random case.
func variant(r *rand.Rand, s string) string {
	if r.IntN(2) == 0 {
		return s
	}
	b := []rune(s)
	for i, c := range b {
		if r.IntN(2) == 0 {
			b[i] = unicode.ToUpper(c)
		}
	}
	return string(b)
}

// randomAccess draws an access.
func randomAccess(r *rand.Rand) Access {
	a := Access{Op: genOps[r.IntN(len(genOps))]}
	switch {
	case strings.HasPrefix(a.Op, "file-") || strings.HasPrefix(a.Op, "process-exec"):
		p := genPaths[r.IntN(len(genPaths))]
		if r.IntN(3) == 0 {
			p = strings.TrimSuffix(p, "/") + "/f"
		}
		a.Path = variant(r, p)
		a.VnodeType = []string{"REGULAR-FILE", "DIRECTORY", "SOCKET"}[r.IntN(3)]
		if a.Op == "file-link" || a.Op == "file-clone" {
			a.Source = variant(r, genPaths[r.IntN(len(genPaths))])
		}
	case strings.HasPrefix(a.Op, "network-"):
		a.Addr = genAddrs[r.IntN(len(genAddrs))]
		a.Proto = []string{"", "tcp", "udp"}[r.IntN(3)]
	case a.Op == "mach-lookup":
		a.Name = genMach[r.IntN(len(genMach))]
	case strings.HasPrefix(a.Op, "sysctl-"):
		a.Name = genSysctl[r.IntN(len(genSysctl))]
	case a.Op == "signal" || strings.HasPrefix(a.Op, "process-info") || strings.HasPrefix(a.Op, "mach-task"):
		a.Target = genTargets[r.IntN(len(genTargets))]
	case a.Op == "system-socket":
		a.SocketDomain = []int{1, 2, 30, 32}[r.IntN(4)]
	case a.Op == "system-mac-syscall":
		a.Name = []string{"Sandbox", "Quarantine"}[r.IntN(2)]
		a.MacSyscall = r.IntN(8)
	}
	if r.IntN(3) == 0 {
		a.Extensions = []string{seatbelt.ExtensionRead}
	}
	if r.IntN(2) == 0 {
		a.Params = map[string]string{seatbelt.ParamRunPrefix: "procage-r1.", seatbelt.ParamRunMarker: "procage-r1.run1"}
	}
	if r.IntN(2) == 0 {
		if a.Params == nil {
			a.Params = map[string]string{}
		}
		// The bound target: sometimes the accessed path (in any case),
		// sometimes another one.
		target := a.Path
		if target == "" || r.IntN(3) == 0 {
			target = genPaths[r.IntN(len(genPaths))]
		}
		a.Params[seatbelt.ParamExecTarget] = target
	}
	return a
}

// checkCase compares Decide on the lowered plan with Reference for one
// access; it returns a description of a disagreement or an error.
// under every variant.
func checkCase(p profile.Policy, env profile.Env, plan *seatbelt.Plan, a Access) error {
	if _, err := checkCaseWhy(p, env, plan, a); err != nil {
		return err
	}
	for _, v := range Variants()[1:] {
		if _, err := checkCaseVariant(v, p, env, plan, a); err != nil {
			return err
		}
	}
	return nil
}

// checkCaseWhy is checkCase under the Default reading, also returning the
// reference's reason.
func checkCaseWhy(p profile.Policy, env profile.Env, plan *seatbelt.Plan, a Access) (string, error) {
	return checkCaseVariant(Default, p, env, plan, a)
}

// checkCaseVariant is checkCaseWhy under variant v.
func checkCaseVariant(v Variant, p profile.Policy, env profile.Env, plan *seatbelt.Plan, a Access) (string, error) {
	d, err := v.Decide(plan.Profile, a)
	if err != nil {
		return "", fmt.Errorf("variant %v: Decide(%v): %v", v, a, err)
	}
	want, why, err := v.reference(p, env, a)
	if err != nil {
		return "", fmt.Errorf("variant %v: Reference(%v): %v", v, a, err)
	}
	if d.Allowed != want {
		return why, fmt.Errorf("variant %v\npolicy %v\nenv %+v\naccess %+v\nlowered profile says allowed=%v: %v\nreference says allowed=%v: %s\nprofile:\n%s",
			v, p, env, a, d.Allowed, d, want, why, plan.Text())
	}
	return fmt.Sprintf("%s %v", strings.SplitN(why, ":", 2)[0], want), nil // e.g. "hard-deny class secrets false"
}

func runSeed(tb testing.TB, seed1, seed2 uint64, policies, accesses int) map[string]int {
	tb.Helper()
	return runSeedFrom(tb, Default, seed1, seed2, policies, accesses, genSeatbelt)
}

// runSeedFrom checks policies x accesses random cases under variant v and
// counts the reference's reasons (first word and verdict).
func runSeedFrom(tb testing.TB, v Variant, seed1, seed2 uint64, policies, accesses int, sbRules []string) map[string]int {
	tb.Helper()
	reasons := map[string]int{}
	r := rand.New(rand.NewPCG(seed1, seed2))
	for range policies {
		p, env, err := randomPolicyFrom(r, sbRules)
		if err != nil {
			tb.Fatalf("random policy: %v", err)
		}
		plan, err := seatbelt.Lower(p, env)
		if err != nil {
			tb.Fatalf("Lower(%v): %v", p, err)
		}
		for range accesses {
			why, err := checkCaseVariant(v, p, env, plan, randomAccess(r))
			if err != nil {
				tb.Fatal(err)
			}
			reasons[why]++
		}
	}
	return reasons
}

// TestLowerMatchesReference: for random policies and accesses, the lowered
// profile decides what the policy states. 1,000 policies x 24 accesses.
func TestLowerMatchesReference(t *testing.T) {
	reasons := runSeed(t, 1, 2, 1000, 24)
	// The comparison means something only if every step of the reference
	// decided some cases, both ways where it can.
	for _, want := range []string{
		"the run's marker true", "another run's marker prefix false",
		"hard-deny class process-access false", "hard-deny class secrets false",
		"hard-deny class trust-handoff false", "hard-deny class service-manager false",
		"seatbelt layer true", "seatbelt layer false", "policy true", "links true", "base true", "base false",
		"exec target only false",
	} {
		if reasons[want] < 5 {
			t.Errorf("only %d random cases decided by %q; the generator no longer exercises it (all: %v)", reasons[want], want, reasons)
		}
	}

	// Every other reading of Seatbelt, on fewer policies each: a lowering
	// must be right whichever one macOS follows.
	for i, v := range Variants()[1:] {
		t.Run("variant="+v.String(), func(t *testing.T) {
			runSeedFrom(t, v, 11, uint64(i), perVariant(16), 24, genSeatbelt)
		})
	}

	// Found under DefaultCoversStragglers: a Seatbelt-layer (allow
	// default) would cover the operations the header denies by name, but
	// a named rule outranks it, so they stay denied.
	t.Run("SeatbeltAllowDefaultStragglers", func(t *testing.T) {
		p, err := profile.New(profile.BaseV1, profile.AcceptBroad(profile.BroadDefault), profile.Seatbelt(`(allow default)`))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := seatbelt.Lower(p, profile.Env{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []Access{{Op: "nvram-get"}, {Op: "process-info-pidinfo", Target: "others"}, {Op: "file-map-executable", Path: "/opt/x"}} {
			if err := checkCase(p, profile.Env{}, plan, a); err != nil {
				t.Error(err)
			}
			if d, _ := (Variant{DefaultCoversStragglers: true}).Decide(plan.Profile, a); d.Allowed {
				t.Errorf("%s allowed under a Seatbelt-layer (allow default): %s", a, d)
			}
		}
	})

	t.Run("SeatbeltWildcardDeny", func(t *testing.T) {
		p, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkLoopback, profile.AnyPort), profile.Seatbelt(`(deny network*)`))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := seatbelt.Lower(p, profile.Env{})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCase(p, profile.Env{}, plan, Access{Op: "network-outbound", Addr: "localhost:80"}); err != nil {
			t.Error(err)
		}
		for i, v := range Variants() {
			runSeedFrom(t, v, 3, uint64(4+i), max(200*(1-min(i, 1)), perVariant(4)), 24, append(slices.Clone(genSeatbelt), seatbeltWildcardDenies...))
		}
	})

	t.Run("HardDenyNarrowerWildcard", func(t *testing.T) {
		p, err := profile.New(profile.BaseV1, profile.Seatbelt(`(allow mach-task-special-port*)`))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := seatbelt.Lower(p, profile.Env{})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCase(p, profile.Env{}, plan, Access{Op: "mach-task-special-port-get", Target: "others"}); err != nil {
			t.Error(err)
		}
		for i, v := range Variants() {
			runSeedFrom(t, v, 5, uint64(6+i), max(200*(1-min(i, 1)), perVariant(4)), 24, append(slices.Clone(genSeatbelt), narrowerWildcardAllows...))
		}
	})
}

// perVariant is how many random policies each non-default variant
// checks: a quarter under the race detector.
func perVariant(n int) int {
	if raceEnabled {
		return max(1, n/4)
	}
	return n
}

func FuzzLowerMatchesReference(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(42), uint64(7))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		vs := Variants()
		runSeedFrom(t, vs[s1%uint64(len(vs))], s1, s2, 1, 16, genSeatbelt)
	})
}
