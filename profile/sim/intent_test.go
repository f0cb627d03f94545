package sim_test

// Statements of intent, checked on lowered profiles through the simulator:
// what the header and each hard-deny class must deny, written from
// docs/threat-model.md and the header's documented purpose rather than
// from the rule lists in profile (a class that loses a rule, or a header
// that no longer denies something, fails here and not only in a golden
// file that -update would rewrite).

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// variants are the simulator's readings of unmeasured Seatbelt rules
// (sim.Variants); every intent must hold under each.
var variants = func() []struct {
	name   string
	decide func(*sbpl.Profile, sim.Access) (sim.Decision, error)
} {
	var out []struct {
		name   string
		decide func(*sbpl.Profile, sim.Access) (sim.Decision, error)
	}
	for i, v := range sim.Variants() {
		// The race detector slows the simulator about tenfold: there a
		// sample of every tenth variant runs, Default first.
		if intentRace && i%10 != 0 {
			continue
		}
		out = append(out, struct {
			name   string
			decide func(*sbpl.Profile, sim.Access) (sim.Decision, error)
		}{v.String(), v.Decide})
	}
	return out
}()

const intentHome = "/Users/tm"

func lowerIntent(t testing.TB, opts ...profile.Option) *sbpl.Profile {
	t.Helper()
	return lowerEnv(t, profile.Env{Home: intentHome}, opts...).Profile
}

// lowerEnv builds a Base V1 policy with opts and lowers it with env.
func lowerEnv(t testing.TB, env profile.Env, opts ...profile.Option) *seatbelt.Plan {
	t.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatalf("profile.New: %v", err)
	}
	plan, err := seatbelt.Lower(p, env)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	return plan
}

// TestIntentReadExtension: a path granted per spawn as a read grant
// (a sandbox extension of class seatbelt.ExtensionRead) is readable and
// nothing more: no write of any kind, no link, clone or code mapping. The
// read-write class does allow writing, and without an extension nothing
// here is allowed, so the checks are not vacuous.
func TestIntentReadExtension(t *testing.T) {
	const granted = "/Users/tm/grant/f" // outside every policy path
	read := []string{seatbelt.ExtensionRead}
	readWrite := []string{seatbelt.ExtensionReadWrite}
	for _, policy := range []struct {
		name string
		opts []profile.Option
	}{
		{"base", nil},
		{"read grant elsewhere", []profile.Option{profile.Read("/Users/tm/src")}},
		{"classes waived", []profile.Option{profile.Waive(profile.Classes()...)}},
	} {
		prof := lowerIntent(t, policy.opts...)
		for _, v := range variants {
			t.Run(policy.name+"/"+v.name, func(t *testing.T) {
				check := func(a sim.Access, want bool, why string) {
					t.Helper()
					d, err := v.decide(prof, a)
					if err != nil {
						t.Fatalf("Decide(%s): %v", a, err)
					}
					if d.Allowed != want {
						t.Errorf("%s with extensions %v: %s; %s", a, a.Extensions, d, why)
					}
				}
				file := func(op string, ext []string) sim.Access {
					return sim.Access{Op: op, Path: granted, VnodeType: "REGULAR-FILE", Extensions: ext}
				}
				check(file("file-read-data", read), true, "a read grant must make the file readable")
				check(file("file-read-metadata", read), true, "a read grant must make the file readable")
				check(file("file-read-data", nil), false, "the path is granted only through the extension")
				check(file("file-write-data", readWrite), true, "a read-write grant must make the file writable")
				for _, op := range []string{
					"file-write-data", "file-write-create", "file-write-unlink", "file-write-mode", "file-write-owner",
					"file-write-xattr", "file-write-flags", "file-write-times", "file-write-acl", "file-write-setugid",
					"file-link", "file-clone", "file-map-executable", "process-exec*",
				} {
					check(file(op, read), false, "a read grant must not allow it")
				}
			})
		}
	}
}

// TestIntentHeaderDeniesDefaultOpen: (deny default) does not cover
// process-info*, nvram*, iokit-get-properties and file-map-executable
// (Chromium's renderer.sb denies them "because these operations are
// allowed by default", crbug.com/799149), so the header must deny them
// itself. With every hard-deny class waived only the header stands
// between the child and these operations.
func TestIntentHeaderDeniesDefaultOpen(t *testing.T) {
	denied := []sim.Access{
		{Op: "process-info-pidinfo", Target: "others"},
		{Op: "process-info-listpids", Target: "others"},
		{Op: "process-info-codesignature", Target: "initproc"},
		{Op: "process-info-setcontrol", Target: "others"},
		{Op: "nvram-get", Name: "boot-args"},
		{Op: "nvram-set", Name: "boot-args"},
		{Op: "nvram-delete", Name: "boot-args"},
		{Op: "iokit-get-properties", Name: "IOPlatformExpertDevice"},
		{Op: "file-map-executable", Path: "/Users/tm/src/payload.dylib", VnodeType: "REGULAR-FILE"},
		{Op: "file-map-executable", Path: "/private/tmp/payload.dylib", VnodeType: "REGULAR-FILE"},
	}
	for _, policy := range []struct {
		name string
		opts []profile.Option
	}{
		{"base, classes waived", []profile.Option{profile.Waive(profile.Classes()...)}},
		{"read-write grants, classes waived", []profile.Option{
			profile.ReadWrite("/Users/tm/src"), profile.ReadWrite("/private/tmp"), profile.Waive(profile.Classes()...)}},
		{"read-write grants", []profile.Option{profile.ReadWrite("/Users/tm/src"), profile.ReadWrite("/private/tmp")}},
	} {
		prof := lowerIntent(t, policy.opts...)
		for _, v := range variants {
			t.Run(policy.name+"/"+v.name, func(t *testing.T) {
				for _, a := range denied {
					d, err := v.decide(prof, a)
					if err != nil {
						t.Fatalf("Decide(%s): %v", a, err)
					}
					if d.Allowed {
						t.Errorf("%s: %s; (deny default) leaves it open, so the header must deny it", a, d)
					}
				}
				// What the header must keep working: a system library maps,
				// the run's own processes stay visible.
				for _, a := range []sim.Access{
					{Op: "file-map-executable", Path: "/usr/lib/libSystem.B.dylib", VnodeType: "REGULAR-FILE"},
					{Op: "process-info-pidinfo", Target: "self"},
				} {
					d, err := v.decide(prof, a)
					if err != nil {
						t.Fatalf("Decide(%s): %v", a, err)
					}
					if !d.Allowed {
						t.Errorf("%s: %s; Base V1 needs it", a, d)
					}
				}
			})
		}
	}
}

// intent is one access a hard-deny class must deny. classes lists every
// class the threat model says stops it (move-blocking of the home
// directory belongs to two), each on its own; waiving all of them must let
// a policy that grants the surrounding tree reach it.
type intent struct {
	section string // threat-model section
	access  sim.Access
	classes []profile.Class
}

// hardDenyIntents is written from docs/threat-model.md's escape classes,
// section by section, for a user whose home is intentHome. Each entry is an
// access the section says is stopped; nothing here is read from profile's
// rule lists.
func hardDenyIntents() []intent {
	var out []intent
	add := func(section string, classes []profile.Class, as ...sim.Access) {
		for _, a := range as {
			cs := classes
			// Linking and cloning are denied everywhere by each class that
			// names them (which of their paths Seatbelt checks is
			// unmeasured), so both file classes claim them.
			if a.Op == "file-link" || a.Op == "file-clone" {
				cs = []profile.Class{profile.Secrets, profile.TrustHandoff}
			}
			out = append(out, intent{section, a, cs})
		}
	}
	file := func(op, path string) sim.Access { return sim.Access{Op: op, Path: path, VnodeType: "REGULAR-FILE"} }
	dir := func(op, path string) sim.Access { return sim.Access{Op: op, Path: path, VnodeType: "DIRECTORY"} }
	mach := func(name string) sim.Access { return sim.Access{Op: "mach-lookup", Name: name} }
	h := func(rel string) string { return intentHome + "/" + rel }
	pa := []profile.Class{profile.ProcessAccess}
	se := []profile.Class{profile.Secrets}
	th := []profile.Class{profile.TrustHandoff}
	sm := []profile.Class{profile.ServiceManager}

	// another process's arguments and environment, its information,
	// the process list through sysmond, signals and task ports outside the run.
	add("R-25", pa,
		sim.Access{Op: "sysctl-read", Name: "kern.procargs2"},
		sim.Access{Op: "sysctl-read", Name: "kern.procargs"},
		sim.Access{Op: "process-info-pidinfo", Target: "others"},
		sim.Access{Op: "process-info-listpids", Target: "others"},
		sim.Access{Op: "process-info-pidinfo", Target: "initproc"},
		sim.Access{Op: "signal", Target: "others"},
		sim.Access{Op: "signal", Target: "initproc"},
		sim.Access{Op: "signal", Target: "pgrp"},
		sim.Access{Op: "mach-priv-task-port", Target: "others"},
		sim.Access{Op: "mach-task-name", Target: "others"},
		mach("com.apple.sysmond"),
		sim.Access{Op: "sysctl-read", Name: "kern.proc.all"},
		sim.Access{Op: "sysctl-read", Name: "kern.proc.uid.501"},
		sim.Access{Op: "sysctl-read", Name: "kern.proc.ruid.501"},
		sim.Access{Op: "sysctl-read", Name: "kern.proc.tty.3"},
	)
	// creating setuid or setgid files.
	add("R-5", pa, file("file-write-setugid", h("bin/tool")), file("file-write-setugid", "/private/tmp/w/tool"))

	// the credential stores at read, write, hard link and clone, a
	// case variant, move-blocking of every directory above them, and the
	// keychain services.
	stores := []string{
		h(".ssh/id_rsa"), h(".ssh"), h(".aws/credentials"), h(".gnupg/private-keys-v1.d/k.key"),
		h(".config/gcloud/credentials.db"), h(".kube/config"), h(".docker/config.json"), h(".netrc"),
		h(".git-credentials"), h(".config/gh/hosts.yml"), h(".config/github-copilot/apps.json"),
		h(".npmrc"), h(".pypirc"), h(".cargo/credentials.toml"), h(".cargo/credentials"),
		h(".azure/msal_token_cache.json"), h("Library/Cookies/Cookies.binarycookies"),
		h("Library/Keychains/login.keychain-db"), "/Library/Keychains/System.keychain",
	}
	for _, s := range stores {
		for _, op := range []string{"file-read-data", "file-read-metadata", "file-write-data", "file-write-create", "file-write-unlink", "file-link", "file-clone"} {
			add("R-30", se, file(op, s))
		}
	}
	add("R-30", se, file("file-read-data", h(".SSH/id_rsa")), file("file-read-data", h(".Aws/Credentials")))
	add("R-30", se,
		dir("file-write-unlink", h(".aws")), dir("file-write-unlink", h(".config/gcloud")), dir("file-write-unlink", h(".azure")))
	both := []profile.Class{profile.Secrets, profile.TrustHandoff}
	add("R-30, R-32", both,
		dir("file-write-unlink", intentHome), dir("file-write-unlink", "/Users"),
		dir("file-write-unlink", h(".config")), dir("file-write-unlink", h("Library")),
		dir("file-write-unlink", h(".docker")), dir("file-write-unlink", h(".cargo")))
	add("R-30", se, mach("com.apple.SecurityServer"), mach("com.apple.securityd.xpc"), mach("com.apple.secd"),
		mach("com.apple.ctkd.token-client"), mach("com.apple.pasteboard.1"))

	// git hooks and config in any writable tree, case folded; renaming
	// .git away or rewriting a gitdir: file.
	for _, repo := range []string{h("src/repo"), "/private/tmp/w/repo"} {
		add("R-31", th,
			file("file-write-create", repo+"/.git/hooks/pre-commit"),
			file("file-write-data", repo+"/.git/hooks/post-checkout"),
			file("file-link", repo+"/.git/hooks/pre-push"),
			dir("file-write-create", repo+"/.git/hooks"),
			file("file-write-create", repo+"/.GIT/Hooks/pre-commit"),
			file("file-write-data", repo+"/.git/config"),
			file("file-write-data", repo+"/.Git/CONFIG"),
			file("file-write-data", repo+"/.git/config.worktree"),
			file("file-write-data", repo+"/.git/worktrees/wt/config"),
			file("file-write-data", repo+"/.git/worktrees/wt/config.worktree"),
			dir("file-write-unlink", repo+"/.git"),
			file("file-write-data", repo+"/.git"),
			file("file-write-create", repo+"/.git/commondir"),
			file("file-write-data", repo+"/.git/modules/sub/config"),
			file("file-write-create", repo+"/.git/modules/sub/hooks/post-checkout"),
			file("file-write-create", repo+"/.git/worktrees/wt/commondir"),
			file("file-write-create", repo+"/.git/worktrees/wt/gitdir"),
			file("file-write-create", repo+"/sub/.git"),
		)
	}
	// shell startup files, git's user config, launch agents; link and
	// rename too.
	for _, f := range []string{
		".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".bashrc", ".bash_profile", ".bash_login",
		".bash_logout", ".profile", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".gitconfig",
		".config/fish/config.fish", ".config/git/config", "Library/LaunchAgents/evil.plist",
		".config/zsh/.zshrc", ".oh-my-zsh/custom/evil.zsh", ".cargo/config.toml", ".cargo/config",
		".docker/cli-plugins/docker-evil", "Library/Python/3.12/lib/python/site-packages/evil.pth",
		".local/lib/python3.12/site-packages/usercustomize.py",
		"Library/Application Support/iTerm2/Scripts/AutoLaunch/evil.py",
	} {
		add("R-32", th, file("file-write-data", h(f)), file("file-write-create", h(f)), file("file-write-unlink", h(f)), file("file-link", h(f)))
	}
	add("R-32", th, dir("file-write-unlink", h("Library/LaunchAgents")), dir("file-write-unlink", h(".config/git")))

	// Launch Services, Apple events, launchd's job submission.
	add("R-6", sm,
		sim.Access{Op: "lsopen"}, sim.Access{Op: "appleevent-send"},
		mach("com.apple.coreservices.launchservicesd"), mach("com.apple.lsd.mapdb"),
		mach("com.apple.coreservices.appleevents"), mach("com.apple.xpc.smd"),
		mach("com.apple.backgroundtaskmanagementagent"),
		mach("com.apple.CoreServices.coreservicesd"), mach("com.apple.xpc.launchd.domain.user.501"),
		mach("com.apple.dock.server"), mach("com.apple.windowserver.active"), mach("com.apple.tccd"),
		mach("com.apple.tccd.system"), mach("com.apple.authd"),
		sim.Access{Op: "job-creation"}, sim.Access{Op: "pseudo-tty"},
		sim.Access{Op: "iokit-open-user-client", Name: "IOHIDLibUserClient"},
		dir("file-mount", "/dev"), dir("file-unmount", intentHome),
	)
	// the container engines' sockets (connect and the socket file)
	// and Docker's Mach names.
	for _, s := range []string{
		"/private/var/run/docker.sock", h(".docker/run/docker.sock"), h(".orbstack/run/docker.sock"),
		h(".colima/default/docker.sock"), h(".colima/work/docker.sock"),
	} {
		add("R-34", sm, sim.Access{Op: "network-outbound", Addr: s}, file("file-write-data", s), file("file-read-data", s))
	}
	add("R-34", sm, mach("com.docker.vmnetd"), mach("com.docker.backend"))
	return out
}

// stillAllowed are accesses the threat model says the classes leave
// alone; with the classes in force a policy that grants them gets them.
var stillAllowed = []sim.Access{
	{Op: "signal", Target: "same-sandbox"},
	{Op: "process-info-pidinfo", Target: "self"},
	{Op: "file-read-data", Path: intentHome + "/.zshrc", VnodeType: "REGULAR-FILE"},
	{Op: "file-write-data", Path: intentHome + "/src/main.go", VnodeType: "REGULAR-FILE"},
}

// intentPolicies are typical policies, from a home grant to grants that
// open everything around the protected paths with wildcard and concrete
// operations (a specific allow beats a wildcard deny, R-38).
func intentPolicies() []struct {
	name string
	opts []profile.Option
} {
	sockets := []profile.Option{
		profile.UnixSocket("/private/var/run/docker.sock"),
		profile.UnixSocket(intentHome + "/.docker/run/docker.sock"),
		profile.UnixSocket(intentHome + "/.orbstack/run/docker.sock"),
		profile.UnixSocket(intentHome + "/.colima/default/docker.sock"),
		profile.UnixSocket(intentHome + "/.colima/work/docker.sock"),
	}
	var machs []profile.Option
	for _, n := range []string{
		"com.apple.sysmond", "com.apple.SecurityServer", "com.apple.securityd.xpc", "com.apple.secd",
		"com.apple.ctkd.token-client", "com.apple.pasteboard.1",
		"com.apple.coreservices.launchservicesd", "com.apple.lsd.mapdb", "com.apple.coreservices.appleevents",
		"com.apple.xpc.smd", "com.apple.backgroundtaskmanagementagent", "com.docker.vmnetd", "com.docker.backend",
		"com.apple.CoreServices.coreservicesd", "com.apple.xpc.launchd.domain.user.501", "com.apple.dock.server",
		"com.apple.windowserver.active", "com.apple.tccd", "com.apple.tccd.system", "com.apple.authd",
	} {
		machs = append(machs, profile.MachLookup(n))
	}
	seatbelt := profile.Seatbelt(`(allow file-read-data file-read-metadata file-write-data file-write-create file-write-unlink file-link file-clone (subpath "/"))
(allow process-info* signal mach-task* mach-priv-task-port)
(allow process-info-pidinfo process-info-listpids mach-task-name)
(allow sysctl-read (sysctl-name-prefix "kern."))
(allow lsopen appleevent-send job-creation pseudo-tty iokit-open-user-client file-mount file-unmount)`)
	join := func(parts ...[]profile.Option) []profile.Option { return slices.Concat(parts...) }
	return []struct {
		name string
		opts []profile.Option
	}{
		{"home read-write", join([]profile.Option{profile.ReadWrite(intentHome), profile.ReadWrite("/private/tmp/w"), profile.Network(profile.NetworkOn)}, sockets)},
		{"home read-write, concrete allows", join([]profile.Option{profile.ReadWrite(intentHome), profile.ReadWrite("/private/tmp/w"), profile.Network(profile.NetworkOn), profile.Fork(), seatbelt}, sockets, machs)},
		{"root read-write", join([]profile.Option{profile.ReadWrite("/"), profile.Exec(intentHome + "/bin"), profile.Network(profile.NetworkOn), profile.Fork(), seatbelt}, sockets, machs)},
	}
}

// TestIntentHardDenyClasses checks every access of hardDenyIntents is
// denied under every typical policy and variant by each of its classes
// alone (the others claiming it waived), by the hard-deny layer wherever
// the policy would otherwise allow it, and that for each access
// some policy does allow it once its classes are waived: otherwise the
// entry could not notice its rule going missing.
func TestIntentHardDenyClasses(t *testing.T) {
	intents := hardDenyIntents()
	type key struct{ policy, waived string }
	profiles := map[key]*sbpl.Profile{}
	lowered := func(t testing.TB, i int, opts []profile.Option, waive []profile.Class) *sbpl.Profile {
		t.Helper()
		var names []string
		for _, c := range waive {
			names = append(names, string(c))
		}
		k := key{fmt.Sprint(i), strings.Join(names, ",")}
		if p, ok := profiles[k]; ok {
			return p
		}
		all := slices.Clone(opts)
		if len(waive) > 0 {
			all = append(all, profile.Waive(waive...))
		}
		p := lowerIntent(t, all...)
		profiles[k] = p
		return p
	}
	policies := intentPolicies()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			decide := func(prof *sbpl.Profile, a sim.Access) sim.Decision {
				t.Helper()
				d, err := v.decide(prof, a)
				if err != nil {
					t.Fatalf("Decide(%s): %v", a, err)
				}
				return d
			}
			opened := make([]bool, len(intents))
			for pi, pol := range policies {
				full := lowered(t, pi, pol.opts, nil)
				for ii, in := range intents {
					w := decide(lowered(t, pi, pol.opts, in.classes), in.access)
					opened[ii] = opened[ii] || w.Allowed
					// Each class stops the access on its own: waive the
					// others that also claim it.
					for _, c := range in.classes {
						others := slices.DeleteFunc(slices.Clone(in.classes), func(o profile.Class) bool { return o == c })
						d := decide(lowered(t, pi, pol.opts, others), in.access)
						if d.Allowed {
							t.Errorf("%s, policy %q: %s allowed (%s) with %v waived; %s must deny it", in.section, pol.name, in.access, d, others, c)
						} else if w.Allowed && d.Layer != seatbelt.LayerHardDeny {
							t.Errorf("%s, policy %q: %s denied by %s, want the hard-deny layer (%s)", in.section, pol.name, in.access, d, c)
						}
					}
				}
				for _, a := range stillAllowed {
					if d := decide(full, a); !d.Allowed {
						t.Errorf("policy %q: %s denied (%s); the classes leave it alone", pol.name, a, d)
					}
				}
			}
			for ii, in := range intents {
				if !opened[ii] {
					t.Errorf("%s: no typical policy allows %s with %v waived; the entry cannot catch a lost rule", in.section, in.access, in.classes)
				}
			}
		})
	}
}
