package seatbelt_test

// Linux simulator canaries for the escape classes of docs/threat-model.md.
// They run the lowered profile through profile/sim, a model of Seatbelt's
// rule selection; they show the lowering says what the threat model
// claims, not that Seatbelt enforces it (the darwin canaries,
// tests/escape_darwin_test.go, do that on the macOS lane).

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

const home = "/Users/alice"

// broad grants what a careless caller might over the home directory, with
// wildcard and concrete operations, the network, a Docker socket and the
// keychain service, so each canary is denied by its class and nothing else.
func broad(t testing.TB, opts ...profile.Option) profile.Policy {
	t.Helper()
	all := append([]profile.Option{
		profile.ReadWrite(home), profile.ReadWrite("/private/tmp/y"), profile.ReadWrite("/dev"), profile.Network(profile.NetworkOn), profile.Fork(),
		profile.UnixSocket("/private/var/run/docker.sock"),
		profile.UnixSocket(home + "/.colima/default/docker.sock"),
		profile.MachLookup("com.apple.SecurityServer"),
		profile.MachLookup("com.apple.coreservices.launchservicesd"),
		profile.AcceptBroad(profile.BroadMachLookup),
		profile.Seatbelt(`(allow file-read-data file-read-metadata file-write-data file-write-create file-write-unlink (subpath "/Users/alice"))
(allow process-info* signal mach-task-name mach-priv-task-port)
(allow process-info-pidinfo process-info-listpids)
(allow sysctl-read)
(allow mach-lookup (global-name-prefix "com.apple."))
(allow lsopen job-creation iokit-open-user-client pseudo-tty file-mount file-unmount)
(allow file-ioctl (subpath "/dev"))
(allow user-preference-write)`),
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
	plan, err := seatbelt.Lower(p, profile.Env{Home: home})
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
			if d.Layer != seatbelt.LayerHardDeny {
				t.Errorf("%s: denied by %s, want the %s class (layer %s)", tc.access, d, c, seatbelt.LayerHardDeny)
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
		{"rename a browser profile's parent away", sim.Access{Op: "file-write-unlink", Path: home + "/Library/Application Support/Google"}},
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
		{Op: "file-ioctl", Path: "/dev/tty"},
		{Op: "file-ioctl", Path: "/dev/ttys003", Extensions: []string{seatbelt.ExtensionReadWrite}},
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
		{Op: "file-read-data", Path: "/dev/ttys004"},
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

// Issue 12 canaries: escapes a red-team review found open.

func TestCanaryGitHandoff(t *testing.T) {
	repo := home + "/src/repo"
	runCanaries(t, profile.TrustHandoff, []canary{
		{"commondir", sim.Access{Op: "file-write-create", Path: repo + "/.git/commondir"}},
		{"submodule config", sim.Access{Op: "file-write-create", Path: repo + "/.git/modules/sub/config"}},
		{"submodule hook", sim.Access{Op: "file-write-create", Path: repo + "/.git/modules/sub/hooks/post-checkout"}},
		{"worktree commondir", sim.Access{Op: "file-write-create", Path: repo + "/.git/worktrees/wt/commondir"}},
		{"worktree gitdir", sim.Access{Op: "file-write-data", Path: repo + "/.git/worktrees/wt/gitdir"}},
		{"worktree config", sim.Access{Op: "file-write-create", Path: repo + "/.git/worktrees/wt/config.worktree"}},
		{"new gitdir file", sim.Access{Op: "file-write-create", Path: home + "/src/other/.git"}},
		{"new gitdir file case variant", sim.Access{Op: "file-write-create", Path: home + "/src/other/.GIT"}},
		{"info attributes", sim.Access{Op: "file-write-create", Path: repo + "/.git/info/attributes"}},
		{"rebase todo", sim.Access{Op: "file-write-create", Path: repo + "/.git/rebase-merge/git-rebase-todo"}},
		{"config lock", sim.Access{Op: "file-write-create", Path: repo + "/.git/config.lock"}},
		{"hook via data name", sim.Access{Op: "file-write-create", Path: repo + "/.git/modules/objects/config"}},
	})
	// The data git writes in ordinary commands stays writable.
	for _, p := range []string{
		repo + "/.git/objects/ab/cdef", repo + "/.git/index.lock", repo + "/.git/index", repo + "/.git/HEAD",
		repo + "/.git/refs/heads/main.lock", repo + "/.git/logs/HEAD", repo + "/.git/COMMIT_EDITMSG",
		repo + "/.git/FETCH_HEAD", repo + "/.git/packed-refs", repo + "/.git/modules/sub/objects/pack/p.pack",
		repo + "/.git/worktrees/wt/HEAD", repo + "/.git/worktrees/wt/index",
	} {
		a := sim.Access{Op: "file-write-create", Path: p}
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%s: denied (%s); git's data stays writable", a, d)
		}
	}
}

func TestCanaryMoreSecrets(t *testing.T) {
	runCanaries(t, profile.Secrets, []canary{
		{"git-credentials", sim.Access{Op: "file-read-data", Path: home + "/.git-credentials"}},
		{"gh", sim.Access{Op: "file-read-data", Path: home + "/.config/gh/hosts.yml"}},
		{"npmrc", sim.Access{Op: "file-read-data", Path: home + "/.npmrc"}},
		{"pypirc", sim.Access{Op: "file-read-data", Path: home + "/.pypirc"}},
		{"cargo credentials", sim.Access{Op: "file-read-data", Path: home + "/.cargo/credentials.toml"}},
		{"azure", sim.Access{Op: "file-read-data", Path: home + "/.azure/msal_token_cache.json"}},
		{"chrome cookies", sim.Access{Op: "file-read-data", Path: home + "/Library/Application Support/Google/Chrome/Default/Cookies"}},
		{"firefox", sim.Access{Op: "file-read-data", Path: home + "/Library/Application Support/Firefox/Profiles/x/logins.json"}},
		{"system cookies", sim.Access{Op: "file-read-data", Path: home + "/Library/Cookies/Cookies.binarycookies"}},
		{"pasteboard", sim.Access{Op: "mach-lookup", Name: "com.apple.pasteboard.1"}},
		{"smart-card tokens", sim.Access{Op: "mach-lookup", Name: "com.apple.ctkd.token-client"}},
	})
}

func TestCanaryMoreTrustHandoff(t *testing.T) {
	runCanaries(t, profile.TrustHandoff, []canary{
		{"oh-my-zsh custom", sim.Access{Op: "file-write-create", Path: home + "/.oh-my-zsh/custom/evil.zsh"}},
		{"xdg zsh", sim.Access{Op: "file-write-create", Path: home + "/.config/zsh/.zshrc"}},
		{"framework user site pth", sim.Access{Op: "file-write-create", Path: home + "/Library/Python/3.9/lib/python/site-packages/evil.pth"}},
		{"framework usercustomize", sim.Access{Op: "file-write-create", Path: home + "/Library/Python/3.12/lib/python/site-packages/usercustomize.py"}},
		{"local user site pth", sim.Access{Op: "file-write-create", Path: home + "/.local/lib/python3.12/site-packages/evil.pth"}},
		{"local user site rename", sim.Access{Op: "file-write-unlink", Path: home + "/.local/lib/python3.12"}},
		{"cargo config", sim.Access{Op: "file-write-data", Path: home + "/.cargo/config.toml"}},
		{"docker cli plugin", sim.Access{Op: "file-write-create", Path: home + "/.docker/cli-plugins/docker-compose"}},
		{"iterm2 autolaunch", sim.Access{Op: "file-write-create", Path: home + "/Library/Application Support/iTerm2/Scripts/AutoLaunch/x.py"}},
	})
}

func TestCanaryMoreServiceManager(t *testing.T) {
	runCanaries(t, profile.ServiceManager, []canary{
		{"coreservicesd", sim.Access{Op: "mach-lookup", Name: "com.apple.CoreServices.coreservicesd"}},
		{"dock", sim.Access{Op: "mach-lookup", Name: "com.apple.dock.server"}},
		{"windowserver", sim.Access{Op: "mach-lookup", Name: "com.apple.windowserver.active"}},
		{"tccd", sim.Access{Op: "mach-lookup", Name: "com.apple.tccd"}},
		{"authd", sim.Access{Op: "mach-lookup", Name: "com.apple.authd"}},
		{"launchd user domain", sim.Access{Op: "mach-lookup", Name: "com.apple.xpc.launchd.domain.user"}},
		{"mount over dev", sim.Access{Op: "file-mount", Path: "/dev"}},
		{"unmount", sim.Access{Op: "file-unmount", Path: "/Volumes/x"}},
		{"job creation", sim.Access{Op: "job-creation"}},
		{"iokit user client", sim.Access{Op: "iokit-open-user-client", Name: "IOHIDParamUserClient"}},
		{"pseudo-tty", sim.Access{Op: "pseudo-tty"}},
		// Red team of issue 12: Disk Arbitration mounts for the child
		// (hdiutil attach -mountpoint over ~/Library/LaunchAgents): the
		// class's file-mount deny covers only the child's own mount(2).
		{"disk arbitration", sim.Access{Op: "mach-lookup", Name: "com.apple.DiskArbitration.diskarbitrationd"}},
	})
}

func TestCanaryProcessList(t *testing.T) {
	runCanaries(t, profile.ProcessAccess, []canary{
		{"kern.proc.all", sim.Access{Op: "sysctl-read", Name: "kern.proc.all"}},
		{"kern.proc.uid", sim.Access{Op: "sysctl-read", Name: "kern.proc.uid.501"}},
		// Red team of issue 12: xnu's kern.proc node also lists by process
		// group and login context (bsd/kern/kern_sysctl.c, KERN_PROC_PGRP,
		// KERN_PROC_LCID); walking the group ids lists every process.
		{"kern.proc.pgrp", sim.Access{Op: "sysctl-read", Name: "kern.proc.pgrp.1"}},
		{"kern.proc.lcid", sim.Access{Op: "sysctl-read", Name: "kern.proc.lcid.0"}},
	})
	// Open: kern.proc.pid.N for another pid gives that process's
	// kinfo_proc, and a walk over pids lists them all. A sysctl name carries
	// no target, and denying the prefix would also deny a process's query of
	// itself (the common debugger check), so it stays allowed.
	if d := decide(t, broad(t), sim.Access{Op: "sysctl-read", Name: "kern.proc.pid.1"}); !d.Allowed {
		t.Errorf("kern.proc.pid.1: %s; the open item is closed, update R-25 and this test", d)
	}
}

// An accepted (allow default) reopens nothing the classes close (issue 12
// item 5): the class rules come after it and are filtered, so they win
// whichever way Seatbelt ranks unfiltered rules.
func TestCanaryAllowDefault(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.AcceptBroad(profile.BroadDefault), profile.Seatbelt(`(allow default)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []sim.Access{
		{Op: "mach-lookup", Name: "com.apple.coreservices.launchservicesd"},
		{Op: "mach-lookup", Name: "com.apple.tccd"},
		{Op: "mach-lookup", Name: "com.apple.pasteboard.1"},
		{Op: "file-mount", Path: "/dev"},
		{Op: "sysctl-read", Name: "kern.proc.all"},
		{Op: "file-read-data", Path: home + "/.npmrc"},
		{Op: "file-write-create", Path: home + "/src/r/.git/commondir"},
		{Op: "job-creation"},
		{Op: "pseudo-tty"},
	} {
		d := decide(t, p, a)
		if d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("%s under an accepted (allow default): %s, want denied by the hard-deny layer", a, d)
		}
	}
}

// MAC system calls a target makes at start-up (issue 12 item 12): Sandbox
// call 67 (sandbox_get_container_expected, which Foundation programs call)
// and the vnguard policy are allowed by the header; the Sandbox calls that
// would change the sandbox stay denied.
func TestMacSyscallsAtStartup(t *testing.T) {
	p, err := profile.New(profile.BaseV1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy string
		call   int
		allow  bool
	}{
		{"Sandbox", 2, true}, {"Sandbox", 6, true}, {"Sandbox", 67, true}, {"vnguard", 0, true}, {"vnguard", 3, true},
		{"Sandbox", 0, false}, {"Sandbox", 1, false}, {"Sandbox", 5, false}, {"Sandbox", 13, false}, {"Sandbox", 30, false},
		{"Sandbox", 66, false}, {"Quarantine", 0, false},
	} {
		a := sim.Access{Op: "system-mac-syscall", Name: tc.policy, MacSyscall: tc.call}
		d := decide(t, p, a)
		if d.Allowed != tc.allow {
			t.Errorf("%s call %d: %s, want allowed %v", tc.policy, tc.call, d, tc.allow)
		}
		if tc.allow && d.Layer != seatbelt.LayerHeader {
			t.Errorf("%s call %d: decided by %s, want the header", tc.policy, tc.call, d)
		}
	}
}

// zsh reads its startup files from $ZDOTDIR when set (zsh(1)); the cage
// passes its kernel spelling to Lower.
func TestCanaryZDotDir(t *testing.T) {
	const zdot = home + "/dotfiles/zsh"
	p := broad(t)
	for _, waive := range []bool{false, true} {
		q := p
		if waive {
			q = broad(t, profile.Waive(profile.TrustHandoff))
		}
		plan, err := seatbelt.Lower(q, profile.Env{Home: home, ZDotDir: zdot})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []sim.Access{
			{Op: "file-write-data", Path: zdot + "/.zshrc"},
			{Op: "file-write-create", Path: zdot + "/.zprofile"},
			{Op: "file-write-unlink", Path: zdot},
		} {
			d, err := sim.Decide(plan.Profile, a)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed == !waive || (!waive && d.Layer != seatbelt.LayerHardDeny) {
				t.Errorf("waived %v: %s: %s", waive, a, d)
			}
		}
	}
}

// App-sandbox extension tokens (issue 12 item 7): the header honours the
// public com.apple.app-sandbox classes, so any such token that reaches the
// child widens its access (the residual risk docs/threat-model.md
// records); the hard-deny classes still win over it.
func TestCanaryStrayExtension(t *testing.T) {
	p, err := profile.New(profile.BaseV1)
	if err != nil {
		t.Fatal(err)
	}
	rw := []string{seatbelt.ExtensionReadWrite}
	for _, a := range []sim.Access{
		{Op: "file-read-data", Path: home + "/.ssh/id_ed25519", Extensions: rw},
		{Op: "file-write-data", Path: home + "/.zshrc", Extensions: rw},
		{Op: "file-write-create", Path: home + "/src/r/.git/hooks/pre-commit", Extensions: rw},
		{Op: "file-read-data", Path: home + "/.npmrc", Extensions: []string{seatbelt.ExtensionRead}},
	} {
		if d := decide(t, p, a); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("%s with a stray token: %s, want denied by the hard-deny layer", a, d)
		}
	}
	// The residual: elsewhere a stray token grants what it names.
	a := sim.Access{Op: "file-write-data", Path: home + "/Documents/x", Extensions: rw}
	if d := decide(t, p, a); !d.Allowed || d.Layer != seatbelt.LayerHeader {
		t.Errorf("%s: %s; the threat model records that a stray token is honoured by the header", a, d)
	}
	// Red team of issue 12: so does a stray read-write token on another
	// terminal, since the class's terminal exception is the spawn's own
	// grant, an extension of the same public class.
	a = sim.Access{Op: "file-read-data", Path: "/dev/ttys004", Extensions: rw}
	if d := decide(t, p, a); !d.Allowed {
		t.Errorf("%s: %s; the open item is closed, update R-44 and this test", a, d)
	}
}

// Local services (issue 12 item 4): debugger inspectors (9229), Docker
// over TCP (2375), Jupyter and IDE servers listen on localhost and run
// code outside the cage. Loopback mode names its ports (or opts in to all
// with AnyPort); network on reaches remote hosts, localhost only on named
// ports, and listens on localhost unless ListenAnyInterface.
func TestCanaryLocalServices(t *testing.T) {
	newP := func(opts ...profile.Option) profile.Policy {
		t.Helper()
		p, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := func(addr string) sim.Access { return sim.Access{Op: "network-outbound", Addr: addr} }
	bind := func(addr string) sim.Access { return sim.Access{Op: "network-bind", Addr: addr} }
	cases := []struct {
		name   string
		p      profile.Policy
		access sim.Access
		allow  bool
	}{
		{"loopback port", newP(profile.Network(profile.NetworkLoopback, 8080)), out("localhost:8080"), true},
		{"loopback inspector", newP(profile.Network(profile.NetworkLoopback, 8080)), out("127.0.0.1:9229"), false},
		{"loopback docker", newP(profile.Network(profile.NetworkLoopback, 8080)), out("[::1]:2375"), false},
		{"loopback any port", newP(profile.Network(profile.NetworkLoopback, profile.AnyPort)), out("127.0.0.1:9229"), true},
		{"loopback remote", newP(profile.Network(profile.NetworkLoopback, profile.AnyPort)), out("93.184.216.34:443"), false},
		{"on remote", newP(profile.Network(profile.NetworkOn)), out("93.184.216.34:443"), true},
		{"on inspector", newP(profile.Network(profile.NetworkOn)), out("127.0.0.1:9229"), false},
		{"on docker", newP(profile.Network(profile.NetworkOn)), out("localhost:2375"), false},
		{"on docker v6", newP(profile.Network(profile.NetworkOn)), out("[::1]:2375"), false},
		{"on named local port", newP(profile.Network(profile.NetworkOn, 8080)), out("127.0.0.1:8080"), true},
		{"on other local port", newP(profile.Network(profile.NetworkOn, 8080)), out("127.0.0.1:8081"), false},
		{"on any local port", newP(profile.Network(profile.NetworkOn, profile.AnyPort)), out("127.0.0.1:9229"), true},
		{"on bind localhost", newP(profile.Network(profile.NetworkOn)), bind("127.0.0.1:8080"), true},
		{"on bind all interfaces", newP(profile.Network(profile.NetworkOn)), bind("0.0.0.0:8080"), false},
		{"on bind all interfaces asked", newP(profile.Network(profile.NetworkOn), profile.ListenAnyInterface()), bind("0.0.0.0:8080"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.p, tc.access)
			if d.Allowed != tc.allow {
				t.Errorf("%s under %s: %s, want allowed %v", tc.access, tc.p, d, tc.allow)
			}
			if !tc.allow && !d.Default && d.Layer != seatbelt.LayerPolicy {
				t.Errorf("%s: denied by %s, want the policy layer or the default", tc.access, d)
			}
		})
	}
	if _, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkLoopback)); !errors.Is(err, profile.ErrNoPorts) {
		t.Errorf("loopback without ports = %v, want ErrNoPorts", err)
	}
	if _, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkLoopback), profile.ListenAnyInterface()); err == nil {
		t.Error("ListenAnyInterface without network on was accepted")
	}
}

// Terminals (issue 12 item 2): the child may use only its own terminal,
// which the cage grants per spawn as a read-write extension; every other
// pty (another terminal's input: passwords typed into sudo or ssh) is
// refused. /dev/tty is the child's controlling terminal, whatever it is.
func TestCanaryOtherTerminals(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(home))
	if err != nil {
		t.Fatal(err)
	}
	own := []string{seatbelt.ExtensionReadWrite}
	cases := []struct {
		access sim.Access
		allow  bool
	}{
		{sim.Access{Op: "file-read-data", Path: "/dev/ttys004"}, false},
		{sim.Access{Op: "file-write-data", Path: "/dev/ttys004"}, false},
		{sim.Access{Op: "file-ioctl", Path: "/dev/ttys004"}, false},
		{sim.Access{Op: "file-ioctl", Path: "/dev/ttys003", Extensions: own}, true},
		{sim.Access{Op: "file-read-data", Path: "/dev/ttys003", Extensions: own}, true},
		{sim.Access{Op: "file-write-data", Path: "/dev/ttys003", Extensions: own}, true},
		{sim.Access{Op: "file-ioctl", Path: "/dev/tty"}, true},
		{sim.Access{Op: "file-read-data", Path: "/dev/ptmx"}, false},
		{sim.Access{Op: "pseudo-tty"}, false},
		// The ioctl grant is for terminals only, not every granted file.
		{sim.Access{Op: "file-ioctl", Path: "/private/tmp/granted/f", Extensions: own}, false},
	}
	for _, tc := range cases {
		if d := decide(t, p, tc.access); d.Allowed != tc.allow {
			t.Errorf("%s (extensions %v): %s, want allowed %v", tc.access, tc.access.Extensions, d, tc.allow)
		}
	}
}

// Even a policy that grants /dev does not reach other terminals: the
// process-access class denies every pty the spawn did not grant.
func TestCanaryOtherTerminalsUnderDevGrant(t *testing.T) {
	runCanaries(t, profile.ProcessAccess, []canary{
		{"read another terminal", sim.Access{Op: "file-read-data", Path: "/dev/ttys004"}},
		{"write another terminal", sim.Access{Op: "file-write-data", Path: "/dev/ttys004"}},
		{"ioctl another terminal", sim.Access{Op: "file-ioctl", Path: "/dev/ttys004"}},
	})
	p := broad(t)
	own := sim.Access{Op: "file-ioctl", Path: "/dev/ttys003", Extensions: []string{seatbelt.ExtensionReadWrite}}
	if d := decide(t, p, own); !d.Allowed {
		t.Errorf("%s with the spawn's grant: %s", own, d)
	}
}

// Red team of issue 12: a planted bare repository. Git's discovery takes a
// directory holding HEAD, objects/ and refs/ for a bare repository and obeys
// its config (git setup.c, is_git_directory); in a subdirectory that happens
// before the worktree's .git is looked at, and at the worktree root once the
// (carved-out, writable) .git/HEAD no longer validates, so the child need
// not touch a protected file to hijack every git command in the project.
// HEAD is the one name every git directory has, so it may only be written
// where the .git carve-out allows it. TestGitRoutesRunPayloads runs it.
func TestCanaryBareRepository(t *testing.T) {
	repo := home + "/src/repo"
	runCanaries(t, profile.TrustHandoff, []canary{
		{"HEAD at the worktree root", sim.Access{Op: "file-write-create", Path: repo + "/HEAD"}},
		{"HEAD in a subdirectory", sim.Access{Op: "file-write-create", Path: repo + "/sub/HEAD"}},
		{"HEAD case variant", sim.Access{Op: "file-write-create", Path: repo + "/head"}},
		{"HEAD of a repo named x.git", sim.Access{Op: "file-write-create", Path: repo + "/x.git/HEAD"}},
		{"HEAD in a nested .git", sim.Access{Op: "file-write-create", Path: repo + "/.git/hooks/HEAD"}},
	})
	// Git's own HEADs stay writable, and so do names that merely end in HEAD.
	for _, p := range []string{
		repo + "/.git/HEAD", repo + "/.git/HEAD.lock", repo + "/.git/refs/remotes/origin/HEAD",
		repo + "/.git/logs/refs/remotes/origin/HEAD", repo + "/.git/modules/sub/HEAD", repo + "/.git/worktrees/wt/HEAD",
		repo + "/AHEAD", repo + "/HEAD.md", repo + "/headers/x.h",
	} {
		a := sim.Access{Op: "file-write-create", Path: p}
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%s: denied (%s); only a bare repository's HEAD is refused", a, d)
		}
	}
}

// Red team of issue 12, open item: HFS+ (Mac OS Extended, not APFS)
// ignores zero-width code points in names, so .g<U+200C>it names the same
// directory as .git there (git's own checks fold them: git utf8.c,
// is_hfs_dotgit). The class's regex sees only the name as spelled; whether
// Seatbelt checks the typed or the on-disk name is unmeasured. This asserts
// the gap as it stands: the spelled variant is not denied.
func TestCanaryHFSIgnorable(t *testing.T) {
	repo := home + "/src/repo"
	for _, p := range []string{repo + "/.g\u200cit/config", repo + "/.git\u200d/hooks/pre-commit", repo + "/\ufeff.git/config"} {
		a := sim.Access{Op: "file-write-data", Path: p}
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%+q: %s; the open item is closed, update R-31 and this test", p, d)
		}
	}
}

// Red team of issue 12: a filtered Seatbelt-layer allow of an operation a
// class denies without a filter. The class wins in the simulator (the
// later rule), but on the kernel only if Seatbelt does not rank a filtered
// allow above an unfiltered deny, which is unmeasured; no rule may depend
// on that, so such an allow is refused unless the class is waived.
func TestCanaryFilteredAllowOfClassOp(t *testing.T) {
	cases := []struct {
		rule  string
		class profile.Class
	}{
		{`(allow pseudo-tty (literal "/dev/ptmx"))`, profile.ServiceManager},
		{`(allow appleevent-send (appleevent-destination "com.apple.Terminal"))`, profile.ServiceManager},
		{`(allow lsopen (require-not (literal "/x")))`, profile.ServiceManager},
		{`(allow job-creation (literal "/x"))`, profile.ServiceManager},
	}
	for _, tc := range cases {
		_, err := profile.New(profile.BaseV1, profile.Seatbelt(tc.rule))
		if !errors.Is(err, profile.ErrClassAllow) {
			t.Errorf("New(Seatbelt(%s)) = %v, want ErrClassAllow", tc.rule, err)
		}
		if _, err := profile.New(profile.BaseV1, profile.Seatbelt(tc.rule), profile.Waive(tc.class)); err != nil {
			t.Errorf("New(Seatbelt(%s), Waive(%s)) = %v, want the allow accepted", tc.rule, tc.class, err)
		}
	}
	// Unfiltered allows stay accepted: the class's deny has the same shape
	// and comes later, so it wins (broad's rules include them).
	for _, op := range []string{"pseudo-tty", "lsopen", "job-creation", "iokit-open-user-client", "appleevent-send", "file-write-setugid"} {
		a := sim.Access{Op: op}
		if op == "file-write-setugid" {
			a.Path = home + "/bin/tool"
		}
		if d := decide(t, broad(t, profile.Seatbelt("(allow "+op+")")), a); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("%s after (allow %s): %s, want denied by a class", op, op, d)
		}
	}
	// A class's file deny is lowered with (subpath "/") (filterDenies), so
	// it beats a filtered allow of the same operation under every reading
	// of Seatbelt: accepted, and still denied.
	p, err := profile.New(profile.BaseV1, profile.Seatbelt(`(allow (with report) file-write-setugid file-write-data (subpath "/Users/alice"))`))
	if err != nil {
		t.Fatalf("a filtered setugid allow: %v", err)
	}
	if d := decide(t, p, sim.Access{Op: "file-write-setugid", Path: home + "/bin/tool"}); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
		t.Errorf("setugid after a filtered allow: %s, want denied by the process-access class", d)
	}
}

// Red team of issue 12, open item: with the network on, connect()
// to the unspecified address reaches the local host: xnu replaces a
// destination of INADDR_ANY with the primary local address, the loopback
// one (bsd/netinet/in_pcb.c, in_pcbladdr), and the IPv6 unspecified address
// likewise [inferred]. A remote filter names only * or localhost, so the
// profile cannot name 0.0.0.0 or ::; whether Seatbelt's localhost covers
// them is unmeasured. This asserts the gap as the simulator sees it: the
// debugger port is refused on localhost and reachable through 0.0.0.0.
func TestCanaryUnspecifiedAddress(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkOn))
	if err != nil {
		t.Fatal(err)
	}
	if d := decide(t, p, sim.Access{Op: "network-outbound", Addr: "127.0.0.1:9229"}); d.Allowed {
		t.Errorf("127.0.0.1:9229: %s, want denied (R-42)", d)
	}
	for _, addr := range []string{"0.0.0.0:9229", "[::]:9229"} {
		if d := decide(t, p, sim.Access{Op: "network-outbound", Addr: addr}); !d.Allowed {
			t.Errorf("%s: %s; the open item is closed, update R-42 and this test", addr, d)
		}
	}
}

// Red team of issue 12: zsh files that run code besides the startup files
// themselves. zsh uses a startup file's compiled form, file.zwc, when it is
// newer (zsh(1), STARTUP/SHUTDOWN FILES); compinit sources its dump file,
// .zcompdump (oh-my-zsh: .zcompdump-<host>-<version>), from $ZDOTDIR or
// the home directory (zshcompsys(1)); Apple's /etc/zshrc_Apple_Terminal and
// /etc/bashrc_Apple_Terminal source the saved session file from
// .zsh_sessions and .bash_sessions when Terminal restores a window.
func TestCanaryShellCompiledAndSessions(t *testing.T) {
	const zdot = home + "/dotfiles/zsh"
	files := []string{
		home + "/.zshrc.zwc", home + "/.zshenv.zwc", home + "/.ZPROFILE.zwc",
		home + "/.zcompdump", home + "/.zcompdump-mac-5.9", home + "/.zcompdump.zwc",
		home + "/.zsh_sessions/ABC.session", home + "/.bash_sessions/ABC.session",
		zdot + "/.zshrc.zwc", zdot + "/.zcompdump", zdot + "/.zsh_sessions/ABC.session",
	}
	for _, waive := range []bool{false, true} {
		q := broad(t)
		if waive {
			q = broad(t, profile.Waive(profile.TrustHandoff))
		}
		plan, err := seatbelt.Lower(q, profile.Env{Home: home, ZDotDir: zdot})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			a := sim.Access{Op: "file-write-create", Path: f}
			d, err := sim.Decide(plan.Profile, a)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed == !waive || (!waive && d.Layer != seatbelt.LayerHardDeny) {
				t.Errorf("trust-handoff waived %v: %s: %s", waive, a, d)
			}
		}
	}
	// Names that merely start alike stay writable.
	for _, f := range []string{home + "/.zshrc.bak", home + "/.zcompdumpster/x", home + "/.zsh_history"} {
		if d := decide(t, broad(t), sim.Access{Op: "file-write-create", Path: f}); !d.Allowed {
			t.Errorf("%s: %s, want allowed", f, d)
		}
	}
}

// Red team of issue 12: clonefile(2) creates its destination, and which
// operation Seatbelt checks there (file-clone, a create, or both) is
// unmeasured; the secrets class denies file-clone, the trust-handoff class
// must too, or a caller's file-clone allow reopens .git and the startup
// files.
func TestCanaryCloneOntoHandoff(t *testing.T) {
	p := broad(t, profile.Seatbelt(`(allow file-clone (subpath "`+home+`"))`))
	for _, f := range []string{home + "/src/repo/.git/hooks/pre-commit", home + "/src/repo/HEAD", home + "/.zshenv", home + "/Library/LaunchAgents/x.plist"} {
		a := sim.Access{Op: "file-clone", Path: f}
		if d := decide(t, p, a); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("%s: %s, want denied by the trust-handoff class", a, d)
		}
	}
	// Which path Seatbelt checks file-clone on is unmeasured (a check of
	// the source alone would let a clone land on a handoff file), so while
	// a class that names it is in force every clone is denied, git's data
	// included; with those classes waived the caller's allow stands.
	data := sim.Access{Op: "file-clone", Path: home + "/src/repo/.git/objects/ab/cd", Source: "/private/tmp/y/x"}
	if d := decide(t, p, data); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
		t.Errorf("clone into git's data: %s, want denied by the total clone deny", d)
	}
	w := broad(t, profile.Seatbelt(`(allow file-clone (subpath "`+home+`") (subpath "/private/tmp/y"))`), profile.Waive(profile.TrustHandoff, profile.Secrets))
	if d := decide(t, w, data); !d.Allowed {
		t.Errorf("clone into git's data with the classes waived: %s, want allowed", d)
	}
}

// Red team of issue 12, open item: a Unix socket the policy allows
// inside a tree the child writes can be replaced, after the cage resolved
// it, by a link to a container engine's socket. The class denies connect()
// to the engines' socket paths and their files; whether Seatbelt matches
// connect() against the path as given or the socket it resolves to is
// unmeasured. This asserts what the profile says: the allowed path is
// reachable, the engine's path is not.
func TestCanarySocketSwap(t *testing.T) {
	const sock = home + "/proj/run/app.sock"
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(home+"/proj"), profile.UnixSocket(sock))
	if err != nil {
		t.Fatal(err)
	}
	if d := decide(t, p, sim.Access{Op: "network-outbound", Addr: sock}); !d.Allowed {
		t.Errorf("connect %s: %s, want allowed", sock, d)
	}
	if d := decide(t, p, sim.Access{Op: "file-write-create", Path: sock}); !d.Allowed {
		t.Errorf("replace %s: %s; the open item is closed, update R-34 and this test", sock, d)
	}
	if d := decide(t, p, sim.Access{Op: "network-outbound", Addr: home + "/.docker/run/docker.sock"}); d.Allowed {
		t.Errorf("connect to Docker's socket: %s, want denied", d)
	}
}

// Red team of issue 12: git configuration outside the listed files. A
// user's ~/.gitconfig commonly includes ~/.gitconfig.local or
// ~/.gitconfig-work (include.path, includeIf; git-config(1), INCLUDES), and
// with $XDG_CONFIG_HOME set git reads $XDG_CONFIG_HOME/git/config instead
// of ~/.config/git/config (git-config(1), FILES); either can set
// core.fsmonitor or core.hooksPath for every repository.
func TestCanaryGitUserConfig(t *testing.T) {
	const xdg = home + "/dotfiles/config"
	files := []string{
		home + "/.gitconfig.local", home + "/.gitconfig-work", home + "/.GITCONFIG.inc",
		xdg + "/git/config", xdg + "/git/attributes", xdg + "/fish/config.fish", xdg + "/zsh/.zshrc",
	}
	for _, waive := range []bool{false, true} {
		q := broad(t)
		if waive {
			q = broad(t, profile.Waive(profile.TrustHandoff))
		}
		plan, err := seatbelt.Lower(q, profile.Env{Home: home, XDGConfigHome: xdg})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			a := sim.Access{Op: "file-write-create", Path: f}
			d, err := sim.Decide(plan.Profile, a)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed == !waive || (!waive && d.Layer != seatbelt.LayerHardDeny) {
				t.Errorf("trust-handoff waived %v: %s: %s", waive, a, d)
			}
		}
	}
	for _, f := range []string{home + "/.gitconfig.d/x", home + "/gitconfig", xdg + "/nvim/init.lua"} {
		if d := decide(t, broad(t), sim.Access{Op: "file-write-create", Path: f}); !d.Allowed {
			t.Errorf("%s: %s, want allowed", f, d)
		}
	}
}

// Red team of issue 12: the carve-out lets the child build, inside
// .git/objects (or refs, logs, lfs), a directory holding a .git or a bare
// repository's HEAD (the names the class refuses everywhere else), then
// rename that directory into the worktree (mv .git/objects/t src): a
// rename is checked on its source and destination, not on what the
// directory carries. No directory inside a .git may be moved or removed.
// TestGitRoutesRunPayloads runs the route with real git.
func TestCanaryGitDirCarriedOut(t *testing.T) {
	repo := home + "/src/repo"
	for _, p := range []string{repo + "/.git/objects/t", repo + "/.git/refs/x", repo + "/.git/logs/refs", repo + "/.git/modules/sub/objects/t", repo + "/.GIT/LFS/t"} {
		a := sim.Access{Op: "file-write-unlink", Path: p, VnodeType: "DIRECTORY"}
		if d := decide(t, broad(t), a); d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("move directory %s out: %s, want denied by the trust-handoff class", p, d)
		}
		if w := decide(t, broad(t, profile.Waive(profile.TrustHandoff)), a); !w.Allowed {
			t.Errorf("%s: denied with trust-handoff waived (%s)", a, w)
		}
	}
	// Git's files there stay removable and renamable (lock to final,
	// packing loose objects), and directories outside .git movable.
	for _, a := range []sim.Access{
		{Op: "file-write-unlink", Path: repo + "/.git/objects/ab/cdef", VnodeType: "REGULAR-FILE"},
		{Op: "file-write-unlink", Path: repo + "/.git/refs/heads/main.lock", VnodeType: "REGULAR-FILE"},
		{Op: "file-write-create", Path: repo + "/.git/objects/t/.git/HEAD"},
		{Op: "file-write-unlink", Path: repo + "/src", VnodeType: "DIRECTORY"},
	} {
		if d := decide(t, broad(t), a); !d.Allowed {
			t.Errorf("%s: %s, want allowed", a, d)
		}
	}
}

// Red team of issue 12: where a directory above a protected path does not
// exist (no ~/.config, ~/.local, ~/.docker on this machine), the child
// builds it elsewhere with the protected file inside and renames it into
// place (mv ~/tmp/cfg ~/.config brings ~/.config/git/config): the rename
// is checked on its source and destination only. The directories above
// protected paths may not be created, as they may not be removed.
func TestCanaryAncestorRenamedIn(t *testing.T) {
	const zdot = home + "/dotfiles/zsh"
	dirs := []string{
		home + "/.config", home + "/.local", home + "/.local/lib", home + "/.cargo", home + "/.docker",
		home + "/.oh-my-zsh", home + "/Library/Application Support/iTerm2", home + "/Library/Application Support/iTerm2/Scripts",
		home + "/dotfiles", zdot, home + "/Library/Application Support/Google",
	}
	for _, waive := range []bool{false, true} {
		q := broad(t)
		if waive {
			q = broad(t, profile.Waive(profile.TrustHandoff, profile.Secrets))
		}
		plan, err := seatbelt.Lower(q, profile.Env{Home: home, ZDotDir: zdot})
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range dirs {
			a := sim.Access{Op: "file-write-create", Path: dir}
			d, err := sim.Decide(plan.Profile, a)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed == !waive || (!waive && d.Layer != seatbelt.LayerHardDeny) {
				t.Errorf("classes waived %v: %s: %s", waive, a, d)
			}
		}
	}
	for _, dir := range []string{home + "/.config/nvim", home + "/.local/bin", home + "/proj"} {
		if d := decide(t, broad(t), sim.Access{Op: "file-write-create", Path: dir}); !d.Allowed {
			t.Errorf("create %s: %s, want allowed", dir, d)
		}
	}
}

// Red team of issue 12, open item: other programs' configuration
// that runs code as the user is not in the class: Gradle's init scripts
// (~/.gradle/init.d, run at every build), IPython's startup directory,
// lldb's and tmux's startup files (script, run-shell), Yarn's yarnPath,
// R's profile, the editors' startup files. This asserts the gap as it
// stands under a home grant.
func TestCanaryOtherToolConfig(t *testing.T) {
	for _, f := range []string{
		"/.gradle/init.d/x.gradle", "/.ipython/profile_default/startup/00.py", "/.lldbinit", "/.tmux.conf",
		"/.yarnrc.yml", "/.Rprofile", "/.vimrc", "/.config/nvim/init.lua",
	} {
		if d := decide(t, broad(t), sim.Access{Op: "file-write-create", Path: home + f}); !d.Allowed {
			t.Errorf("~%s: %s; the open item is (partly) closed, update R-32 and this test", f, d)
		}
	}
}

// Red team of issue 12: a git directory built inside the carve-out needs
// no move: a symbolic link in the worktree to .git/refs/x (src ->
// .git/refs/x) makes git, run in src, take .git/refs/x for a bare
// repository (HEAD, objects/ and refs/ are ref-shaped names there) and
// obey its config (core.worktree, core.fsmonitor), its commondir (another
// config) or its hooks (reference-transaction runs on any ref update).
// Those names are refused inside every .git, carve-out included.
// TestGitRoutesRunPayloads runs the route with real git.
func TestCanaryGitPayloadInCarveOut(t *testing.T) {
	repo := home + "/src/repo"
	runCanaries(t, profile.TrustHandoff, []canary{
		{"config in refs", sim.Access{Op: "file-write-create", Path: repo + "/.git/refs/x/config"}},
		{"commondir in refs", sim.Access{Op: "file-write-create", Path: repo + "/.git/refs/x/commondir"}},
		{"config.worktree in logs", sim.Access{Op: "file-write-create", Path: repo + "/.git/logs/x/config.worktree"}},
		{"hook in objects", sim.Access{Op: "file-write-create", Path: repo + "/.git/objects/t/hooks/pre-commit"}},
		{"hooks directory in refs", sim.Access{Op: "file-write-create", Path: repo + "/.git/refs/x/hooks"}},
		{"hook made executable", sim.Access{Op: "file-write-mode", Path: repo + "/.git/refs/x/hooks/reference-transaction"}},
		{"config case variant in a submodule's refs", sim.Access{Op: "file-write-create", Path: repo + "/.git/modules/s/refs/x/CONFIG"}},
	})
	for _, p := range []string{repo + "/.git/refs/heads/configure", repo + "/.git/refs/heads/hook", repo + "/.git/objects/ab/cdef"} {
		if d := decide(t, broad(t), sim.Access{Op: "file-write-create", Path: p}); !d.Allowed {
			t.Errorf("%s: %s, want allowed", p, d)
		}
	}
}

// Red team of issue 12: a terminal's preferences name the command a new
// window runs (Terminal's profile "Run command", iTerm2's profile
// "Command"), so writing them under a home grant, or through cfprefsd's
// user-preference-write, runs a program as the user at the next window.
func TestCanaryTerminalPreferences(t *testing.T) {
	runCanaries(t, profile.TrustHandoff, []canary{
		{"Terminal plist", sim.Access{Op: "file-write-data", Path: home + "/Library/Preferences/com.apple.Terminal.plist"}},
		{"iTerm2 plist", sim.Access{Op: "file-write-create", Path: home + "/Library/Preferences/com.googlecode.iterm2.plist"}},
		{"Terminal via cfprefsd", sim.Access{Op: "user-preference-write", Name: "com.apple.Terminal"}},
		{"iTerm2 via cfprefsd", sim.Access{Op: "user-preference-write", Name: "com.googlecode.iterm2"}},
	})
}
