package profile_test

// Linux simulator canaries for the escape classes of docs/threat-model.md.
// They run the lowered profile through profile/sim, a model of Seatbelt's
// rule selection; they show the lowering says what the threat model
// claims, not that Seatbelt enforces it (the darwin canaries,
// tests/escape_darwin_test.go, do that on the macOS lane).

import (
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sim"
)

const home = "/Users/alice"

// broad grants what a careless caller might over the home directory, with
// wildcard and concrete operations, the network, a Docker socket and the
// keychain service, so each canary is denied by its class and nothing else.
func broad(t testing.TB, opts ...profile.Option) profile.Policy {
	t.Helper()
	all := append([]profile.Option{
		profile.ReadWrite(home), profile.ReadWrite("/private/tmp/y"), profile.Network(profile.NetworkOn), profile.Fork(),
		profile.UnixSocket("/private/var/run/docker.sock"),
		profile.UnixSocket(home + "/.colima/default/docker.sock"),
		profile.MachLookup("com.apple.SecurityServer"),
		profile.MachLookup("com.apple.coreservices.launchservicesd"),
		profile.Seatbelt(`(allow file-read-data file-read-metadata file-write-data file-write-create file-write-unlink (subpath "/Users/alice"))
(allow process-info* signal mach-task-name mach-priv-task-port)
(allow process-info-pidinfo process-info-listpids)
(allow sysctl-read)
(allow mach-lookup (global-name-prefix "com.apple."))
(allow lsopen)`),
	}, opts...)
	p, err := profile.New(profile.BaseV1, all...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// decide decides a under every reading of Seatbelt (sim.Variants) and
// fails unless all give the same verdict: a canary must hold whichever
// one macOS follows. It returns the Default decision.
func decide(t testing.TB, p profile.Policy, a sim.Access) sim.Decision {
	t.Helper()
	plan, err := profile.Lower(p, profile.Env{Home: home})
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	var first sim.Decision
	for i, v := range sim.Variants() {
		d, err := v.Decide(plan.Profile, a)
		if err != nil {
			t.Fatalf("variant %v: Decide(%s): %v", v, a, err)
		}
		if i == 0 {
			first = d
		} else if d.Allowed != first.Allowed {
			t.Errorf("%s: %s under variant %v but %s under the default reading", a, d, v, first)
		}
	}
	return first
}

type canary struct {
	name   string
	access sim.Access
}

// runCanaries checks each access is denied by class c under the broad
// policy, by a hard-deny rule, and allowed once c is waived (so the class,
// not something else, is what stops it).
func runCanaries(t *testing.T, c profile.Class, cases []canary) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, broad(t), tc.access)
			if d.Allowed {
				t.Fatalf("%s: allowed (%s); class %s should deny it", tc.access, d, c)
			}
			if d.Layer != profile.LayerHardDeny {
				t.Errorf("%s: denied by %s, want the %s class (layer %s)", tc.access, d, c, profile.LayerHardDeny)
			}
			if w := decide(t, broad(t, profile.Waive(c)), tc.access); !w.Allowed {
				t.Errorf("%s: still denied with %s waived (%s); the canary does not test the class", tc.access, c, w)
			}
		})
	}
}

func TestCanaryProcessAccess(t *testing.T) {
	runCanaries(t, profile.ProcessAccess, []canary{
		{"procargs2", sim.Access{Op: "sysctl-read", Name: "kern.procargs2"}},
		{"procargs", sim.Access{Op: "sysctl-read", Name: "kern.procargs"}},
		{"pidinfo others", sim.Access{Op: "process-info-pidinfo", Target: "others"}},
		{"listpids", sim.Access{Op: "process-info-listpids", Target: "others"}},
		{"signal others", sim.Access{Op: "signal", Target: "others"}},
		{"signal initproc", sim.Access{Op: "signal", Target: "initproc"}},
		{"task port others", sim.Access{Op: "mach-priv-task-port", Target: "others"}},
		{"task name others", sim.Access{Op: "mach-task-name", Target: "others"}},
		{"sysmond", sim.Access{Op: "mach-lookup", Name: "com.apple.sysmond"}},
		{"setugid", sim.Access{Op: "file-write-setugid", Path: home + "/bin/tool"}},
	})
	// The run's own processes stay reachable, class in force.
	for _, a := range []sim.Access{
		{Op: "signal", Target: "self"},
		{Op: "signal", Target: "children"},
		{Op: "process-info-pidinfo", Target: "self"},
		{Op: "process-info-pidinfo", Target: "same-sandbox"},
	} {
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%s: denied (%s); the run's own processes stay reachable", a, d)
		}
	}
}

func TestCanarySecrets(t *testing.T) {
	runCanaries(t, profile.Secrets, []canary{
		{"ssh key", sim.Access{Op: "file-read-data", Path: home + "/.ssh/id_rsa"}},
		{"ssh key case variant", sim.Access{Op: "file-read-data", Path: home + "/.SSH/id_rsa"}},
		{"ssh metadata", sim.Access{Op: "file-read-metadata", Path: home + "/.ssh/id_ed25519"}},
		{"ssh write", sim.Access{Op: "file-write-data", Path: home + "/.ssh/authorized_keys"}},
		{"aws", sim.Access{Op: "file-read-data", Path: home + "/.aws/credentials"}},
		{"gnupg", sim.Access{Op: "file-read-data", Path: home + "/.gnupg/private-keys-v1.d/x.key"}},
		{"gcloud", sim.Access{Op: "file-read-data", Path: home + "/.config/gcloud/credentials.db"}},
		{"kube", sim.Access{Op: "file-read-data", Path: home + "/.kube/config"}},
		{"docker config", sim.Access{Op: "file-read-data", Path: home + "/.docker/config.json"}},
		{"netrc", sim.Access{Op: "file-read-data", Path: home + "/.netrc"}},
		{"login keychain", sim.Access{Op: "file-read-data", Path: home + "/Library/Keychains/login.keychain-db"}},
		{"rename .docker away", sim.Access{Op: "file-write-unlink", Path: home + "/.docker"}},
		{"SecurityServer", sim.Access{Op: "mach-lookup", Name: "com.apple.SecurityServer"}},
		{"securityd.xpc", sim.Access{Op: "mach-lookup", Name: "com.apple.securityd.xpc"}},
	})
}

func TestCanaryTrustHandoff(t *testing.T) {
	runCanaries(t, profile.TrustHandoff, []canary{
		{"zshrc", sim.Access{Op: "file-write-data", Path: home + "/.zshrc"}},
		{"zshrc unlink", sim.Access{Op: "file-write-unlink", Path: home + "/.zshrc"}},
		{"bash_profile", sim.Access{Op: "file-write-create", Path: home + "/.bash_profile"}},
		{"gitconfig", sim.Access{Op: "file-write-data", Path: home + "/.gitconfig"}},
		{"xdg git config", sim.Access{Op: "file-write-data", Path: home + "/.config/git/config"}},
		{"launch agent", sim.Access{Op: "file-write-create", Path: home + "/Library/LaunchAgents/evil.plist"}},
		{"git hook", sim.Access{Op: "file-write-create", Path: home + "/src/repo/.git/hooks/pre-commit"}},
		{"git hook case variant", sim.Access{Op: "file-write-data", Path: home + "/src/repo/.GIT/HOOKS/pre-commit"}},
		{"git config", sim.Access{Op: "file-write-data", Path: home + "/src/repo/.git/config"}},
		{"rename .git", sim.Access{Op: "file-write-unlink", Path: home + "/src/repo/.git"}},
	})
	// Reading them, and ordinary git objects, stay allowed.
	for _, a := range []sim.Access{
		{Op: "file-read-data", Path: home + "/.zshrc"},
		{Op: "file-read-data", Path: home + "/src/repo/.git/config"},
		{Op: "file-write-create", Path: home + "/src/repo/.git/objects/ab/cdef"},
	} {
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%s: denied (%s); trust-handoff denies writes to the handoff files only", a, d)
		}
	}
}

func TestCanaryServiceManager(t *testing.T) {
	runCanaries(t, profile.ServiceManager, []canary{
		{"docker socket connect", sim.Access{Op: "network-outbound", Addr: "/private/var/run/docker.sock"}},
		{"docker socket file", sim.Access{Op: "file-write-data", Path: "/private/var/run/docker.sock"}},
		{"colima socket connect", sim.Access{Op: "network-outbound", Addr: home + "/.colima/default/docker.sock"}},
		{"launchservicesd", sim.Access{Op: "mach-lookup", Name: "com.apple.coreservices.launchservicesd"}},
		{"lsopen", sim.Access{Op: "lsopen"}},
	})
}

// a rule on one kernel path grants nothing under another; /tmp/x
// reaches the kernel as /private/tmp/x.
func TestCanaryPathSpelling(t *testing.T) {
	p := broad(t)
	if d := decide(t, p, sim.Access{Op: "file-write-data", Path: "/private/tmp/x"}); d.Allowed {
		t.Errorf("write /tmp/x (kernel /private/tmp/x) allowed with only /private/tmp/y granted: %s", d)
	}
	if d := decide(t, p, sim.Access{Op: "file-write-data", Path: "/private/tmp/y/f"}); !d.Allowed {
		t.Errorf("write /private/tmp/y/f denied although granted: %s", d)
	}
	// A policy path left in the caller's spelling matches nothing.
	q, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/z"))
	if err != nil {
		t.Fatal(err)
	}
	if d := decide(t, q, sim.Access{Op: "file-write-data", Path: "/private/tmp/z/f"}); d.Allowed {
		t.Errorf("an unresolved /tmp/z rule allowed /private/tmp/z/f: %s", d)
	}
}

// Base V1 alone lets ordinary programs start and keeps the home directory,
// temporary files and the network refused.
func TestBaseV1Necessities(t *testing.T) {
	p, err := profile.New(profile.BaseV1)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []sim.Access{
		{Op: "file-read-data", Path: "/usr/lib/libSystem.B.dylib"},
		{Op: "file-map-executable", Path: "/usr/lib/libSystem.B.dylib"},
		{Op: "file-read-data", Path: "/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld/dyld_shared_cache_arm64e"},
		{Op: "file-map-executable", Path: "/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld/dyld_shared_cache_arm64e"},
		{Op: "process-exec", Path: "/bin/sh"},
		{Op: "process-exec", Path: "/usr/bin/perl"},
		{Op: "process-exec-interpreter", Path: "/bin/sh"},
		{Op: "file-read-data", Path: "/private/var/select/sh"},
		{Op: "file-read-data", Path: "/dev/null"},
		{Op: "file-write-data", Path: "/dev/null"},
		{Op: "file-ioctl", Path: "/dev/ttys003"},
		{Op: "file-read-data", Path: "/private/var/db/timezone/zoneinfo/Europe/Berlin"},
		{Op: "file-read-metadata", Path: "/private/var"},
		{Op: "sysctl-read", Name: "kern.osrelease"},
		{Op: "sysctl-read", Name: "hw.optional.arm.FEAT_LSE"},
		{Op: "mach-lookup", Name: "com.apple.system.opendirectoryd.libinfo"},
		{Op: "signal", Target: "self"},
	}
	denied := []sim.Access{
		{Op: "file-read-data", Path: home + "/notes.txt"},
		{Op: "file-read-metadata", Path: home + "/.ssh"},
		{Op: "file-write-data", Path: "/private/tmp/x"},
		{Op: "file-read-data", Path: "/private/var/folders/ab/T/x"},
		{Op: "network-outbound", Addr: "93.184.216.34:443"},
		{Op: "network-outbound", Addr: "localhost:8080"},
		{Op: "sysctl-read", Name: "kern.procargs2"},
		{Op: "sysctl-read", Name: "kern.proc.all"},
		{Op: "process-fork"},
		{Op: "process-info-pidinfo", Target: "others"},
		{Op: "mach-lookup", Name: "com.apple.SecurityServer"},
		{Op: "file-write-data", Path: "/usr/lib/libSystem.B.dylib"},
	}
	for _, a := range allowed {
		if d := decide(t, p, a); !d.Allowed {
			t.Errorf("Base V1: %s denied (%s)", a, d)
		}
	}
	for _, a := range denied {
		if d := decide(t, p, a); d.Allowed {
			t.Errorf("Base V1: %s allowed (%s)", a, d)
		}
	}
}
