package seatbelt

import (
	"path"
	"regexp"
	"slices"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// hardDenyRules returns the deny rules of a hard-deny class, before the
// specificity expansion Lower applies. home is the kernel spelling of the
// user's home directory ("" = no home rules). Every rule names wildcards
// (or a complete list of concrete operations), so that Lower can add each
// concrete operation an allow names; docs/threat-model.md lists the escape
// class each rule closes.
//
// The classes:
//
//   - process-access: the argument sysctls (kern.procargs*), the
//     process-listing sysctls (kern.proc.all and the per-uid, per-tty,
//     per-group and per-login-context lists), other processes' information, signals and task ports outside
//     the run, the sysmond service behind ps and pgrep, terminals the spawn
//     did not grant, and creating setuid files. Executing setuid programs is refused by the kernel in any cage
//     (forbidden-exec-sugid) whether or not the class is waived.
//   - secrets: credential stores (~/.ssh, ~/.aws, ~/.gnupg, cloud and
//     package-registry tokens, browser profiles and cookies), the keychains
//     and the Mach services that hand out keychain items, smart-card tokens
//     and the pasteboard.
//   - trust-handoff: writes to files another program later runs or obeys
//     as the user: every .git in any tree (but the data git writes during
//     ordinary commands) and a bare repository's HEAD, shell and zsh
//     startup files, Python's user site, Cargo and Docker CLI
//     configuration, iTerm2 AutoLaunch scripts, ~/.gitconfig,
//     ~/Library/LaunchAgents.
//   - service-manager: Launch Services, Apple events, launchd's job
//     submission and user-domain services, the Dock, WindowServer, TCC,
//     Authorization Services, mounting (and Disk Arbitration, which
//     mounts for the caller), IOKit user clients, new
//     pseudo-terminals, and the Docker, OrbStack and Colima sockets and
//     Mach names: each would act outside the cage.
func hardDenyRules(c profile.Class, home string) []sbpl.Rule {
	return hardDenyRulesEnv(c, profile.Env{Home: home})
}

// hardDenyRulesEnv is hardDenyRules with the rest of env: zsh's $ZDOTDIR
// and $XDG_CONFIG_HOME (kernel spellings, "" = unset), whose files the
// trust-handoff class also protects.
func hardDenyRulesEnv(c profile.Class, env profile.Env) []sbpl.Rule {
	home := env.Home
	var rules []sbpl.Rule
	switch c {
	case profile.ProcessAccess:
		rules = processAccessRules()
	case profile.Secrets:
		rules = secretsRules(env)
	case profile.TrustHandoff:
		rules = trustHandoffRules(env)
	case profile.ServiceManager:
		rules = serviceManagerRules(home)
	}
	return sbpl.FilterDenies(append(rules, linkOpRules(rules)...))
}

// linkOpRules deny, everywhere, the link and clone operations a class's
// rules name: which path Seatbelt checks file-link and file-clone on (the
// new name, the existing file, or both) is unmeasured (the Protonk VFS
// report notes that hard links make a vnode's path ambiguous), so a deny
// on the protected paths alone might not stop linking a secret out, or a
// prepared file in, under an allowed name. procage's layers never allow
// them; only a Seatbelt-layer rule could.
func linkOpRules(rules []sbpl.Rule) []sbpl.Rule {
	var ops []string
	for _, r := range rules {
		for _, op := range r.Ops {
			if (op == "file-link" || op == "file-clone") && !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return []sbpl.Rule{{Effect: sbpl.Deny, Ops: ops, Filters: []*sbpl.Filter{sbpl.Subpath("/")},
		Comment: "no hard links or clones at all while the class is in force: which of their paths Seatbelt checks is unmeasured"}}
}

// notSameSandbox matches a target process outside the run: neither the
// process itself nor one in its sandbox. require-not is how Seatbelt spells
// "except": a later allow would be beaten by a deny naming a more specific
// operation. self is named too because whether same-sandbox covers the
// process itself is not documented [inferred]; Chromium writes (target self).
func notSameSandbox() *sbpl.Filter {
	return sbpl.F("require-all",
		sbpl.F("require-not", sbpl.F("target", sbpl.Sym("self"))),
		sbpl.F("require-not", sbpl.F("target", sbpl.Sym("same-sandbox"))))
}

func processAccessRules() []sbpl.Rule {
	return []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"sysctl-read"}, Filters: []*sbpl.Filter{sbpl.F("sysctl-name-prefix", "kern.procargs")},
			Comment: "R-25: other processes' arguments and environment (KERN_PROCARGS, KERN_PROCARGS2), by prefix as measured on macOS 26.6.2"},
		{Effect: sbpl.Deny, Ops: []string{"sysctl-read"}, Filters: []*sbpl.Filter{
			sbpl.F("sysctl-name", "kern.proc.all"),
			sbpl.F("sysctl-name-prefix", "kern.proc.uid."),
			sbpl.F("sysctl-name-prefix", "kern.proc.ruid."),
			sbpl.F("sysctl-name-prefix", "kern.proc.tty."),
			sbpl.F("sysctl-name-prefix", "kern.proc.pgrp."),
			sbpl.F("sysctl-name-prefix", "kern.proc.lcid."),
		}, Comment: "R-25: lists of every process (KERN_PROC_ALL, _UID, _RUID, _TTY, _PGRP, _LCID in xnu's kern_sysctl.c; sandbox-runtime allowed kern.proc.all, Chromium allows only its own kern.proc.pid)"},
		{Effect: sbpl.Deny, Ops: []string{"process-info*"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: information on processes outside the run (proc_info, proc_pidpath, listing pids); the run's own stay readable"},
		{Effect: sbpl.Deny, Ops: []string{"signal"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: signals to processes outside the run (Codex base policy, sandbox-runtime)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-priv-task-port", "mach-task*"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: task ports of processes outside the run (task_for_pid, task_name_for_pid; Codex base policy)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{sbpl.F("global-name-prefix", "com.apple.sysmond")},
			Comment: "R-25: sysmond lists every process for pgrep and ps (openai/codex#23505)"},
		{Effect: sbpl.Deny, Ops: []string{"file-read*", "file-write*", "file-ioctl"}, Filters: []*sbpl.Filter{sbpl.F("require-all",
			sbpl.F("regex", `^/dev/ttys[0-9]+$`), sbpl.F("require-not", sbpl.F("extension", ExtensionReadWrite)))},
			Comment: "R-40: other terminals (where a password typed into sudo or ssh is read), even under a /dev grant; the spawn grants its own terminal as an extension"},
		{Effect: sbpl.Deny, Ops: []string{"file-write-setugid"},
			Comment: "no setuid or setgid files (Nix sandbox-defaults.sb); executing setuid programs is refused by the kernel in any cage (forbidden-exec-sugid)"},
	}
}

// keychainServices hand out keychain items whatever the file rules say
// (anthropics/claude-code#44195, LeGambiArt/arapuca#52).
var keychainServices = []*sbpl.Filter{
	sbpl.F("global-name", "com.apple.SecurityServer"),
	sbpl.F("global-name-prefix", "com.apple.securityd"),
	sbpl.F("global-name", "com.apple.secd"),
}

func secretsRules(env profile.Env) []sbpl.Rule {
	fileOps := []string{"file-read*", "file-write*", "file-link", "file-clone"}
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: fileOps, Filters: []*sbpl.Filter{sbpl.Subpath("/Library/Keychains")},
			Comment: "secrets: the system keychains"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: keychainServices,
			Comment: "secrets: securityd and secd hand out keychain items (anthropics/claude-code#44195, LeGambiArt/arapuca#52)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name", "com.apple.ctkd.token-client"),
			sbpl.F("global-name-prefix", "com.apple.pasteboard."),
		}, Comment: "secrets: CryptoTokenKit's smart-card keys (ctkd) and the pasteboard, which holds copied passwords (both named in Apple's own profiles' Mach lists, blacktop/ipsw-diffs)"},
	}
	filters, protected := tableTargets(profile.Secrets, env)
	if len(filters) == 0 {
		return rules
	}
	rules = append(rules,
		sbpl.Rule{Effect: sbpl.Deny, Ops: fileOps, Filters: filters,
			Comment: "secrets: SSH, cloud, GnuPG, Kubernetes, Docker, git, GitHub CLI, npm, PyPI and Cargo credentials, .netrc, browser profiles and cookies, the user's keychains (read, write, hard link, clone)"},
	)
	rules = append(rules, moveBlock(protected, "secrets")...)
	return rules
}

// tableTargets turns the hard-deny table's entries of class c, placed in
// env, into filters and the paths they protect: a tree is a subpath, a
// file a literal, a prefix entry a regex (case folded by hand).
// AnchorAnyTree entries have rules of their own.
func tableTargets(c profile.Class, env profile.Env) (filters []*sbpl.Filter, protected []string) {
	for _, e := range profile.ProtectedTable("darwin") {
		if e.Class != c || e.Anchor == profile.AnchorAnyTree {
			continue
		}
		for _, pp := range e.Places(env) {
			switch {
			case e.Prefix:
				filters = append(filters, sbpl.F("regex", prefixRegex(pp.Path, e.Tree)))
			case e.Tree:
				filters = append(filters, sbpl.Subpath(pp.Path))
			default:
				filters = append(filters, sbpl.Literal(pp.Path))
			}
			protected = append(protected, pp.Path)
		}
	}
	return filters, protected
}

// prefixRegex matches every name that begins with p's last element in p's
// directory (a tree: and everything beneath it), case folded by hand.
func prefixRegex(p string, tree bool) string {
	end := `[^/]*$`
	if tree {
		end = `[^/]*(/|$)`
	}
	return "^" + profile.FoldCase(regexp.QuoteMeta(p)) + end
}

// moveBlock denies renaming or removing each directory between "/" and a
// protected path: renaming ~/.config away would carry ~/.config/gcloud out
// from under its rule (sandbox-runtime's move-blocking). It also denies
// creating one: where ~/.config does not exist, a directory built
// elsewhere and renamed to ~/.config would carry ~/.config/git/config in
// (a rename is checked on its source and destination only).
func moveBlock(protected []string, class string) []sbpl.Rule {
	var dirs []string
	for _, p := range protected {
		for _, a := range ancestorsOf(p) {
			if a != "/" {
				dirs = append(dirs, a)
			}
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	slices.Sort(dirs)
	r := sbpl.Rule{Effect: sbpl.Deny, Ops: []string{"file-write-create", "file-write-unlink"},
		Comment: class + ": no rename, removal or creation of the directories above these paths (move-blocking, sandbox-runtime; a directory renamed into place carries the path in)"}
	for _, d := range slices.Compact(dirs) {
		r.Filters = append(r.Filters, sbpl.Literal(d))
	}
	return []sbpl.Rule{r}
}

// terminalDomains are the preference domains of terminals whose profiles
// name the command a new window runs (Terminal's Shell setting "Run
// command", Terminal User Guide; iTerm2's profile Command, iTerm2
// documentation, Profiles > General).
var terminalDomains = []string{"com.apple.Terminal", "com.googlecode.iterm2"}

func trustHandoffRules(env profile.Env) []sbpl.Rule {
	ops := []string{"file-write*", "file-link", "file-clone"}
	git := profile.GitRegexes()
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: ops, Filters: []*sbpl.Filter{sbpl.F("require-all",
			sbpl.F("require-any", sbpl.F("regex", git.Any), sbpl.F("regex", git.Head)),
			sbpl.F("require-not", sbpl.F("regex", git.Data))),
			sbpl.F("regex", git.Payload)},
			Comment: "trust-handoff: every .git in any tree is read-only and cannot be created (Codex's approach), nor can a bare repository's HEAD, but for the data git writes in ordinary commands, where a git directory's config, commondir and hooks are still refused; case folded by hand"},
		{Effect: sbpl.Deny, Ops: []string{"file-write-unlink"}, Filters: []*sbpl.Filter{sbpl.F("require-all",
			sbpl.F("vnode-type", sbpl.Sym("DIRECTORY")), sbpl.F("regex", git.Any))},
			Comment: "trust-handoff: no directory inside a .git is moved or removed, so one built in the carve-out cannot carry a .git or HEAD into the worktree (git tolerates a failed rmdir of an empty directory)"},
	}
	var domains []*sbpl.Filter
	for _, d := range terminalDomains {
		domains = append(domains, sbpl.F("preference-domain", d))
	}
	rules = append(rules, sbpl.Rule{Effect: sbpl.Deny, Ops: []string{"user-preference-write"}, Filters: domains,
		Comment: "trust-handoff: the terminals' preferences, through cfprefsd, name the command a new window runs"})
	filters, protected := tableTargets(profile.TrustHandoff, env)
	if len(filters) == 0 {
		return rules
	}
	rules = append(rules,
		sbpl.Rule{Effect: sbpl.Deny, Ops: ops, Filters: filters,
			Comment: "trust-handoff: shell and zsh ($ZDOTDIR, oh-my-zsh) startup files, git's user config, Python's user site, Cargo and Docker CLI configuration, iTerm2 AutoLaunch, launch agents (run at the next shell, login or tool start)"},
	)
	rules = append(rules, moveBlock(protected, "trust-handoff")...)
	return rules
}

// socketRules deny connecting to the sockets (paths, and re if not "")
// and their files.
func socketRules(paths []string, re string) []sbpl.Rule {
	var files, sockets []*sbpl.Filter
	for _, p := range paths {
		files = append(files, sbpl.Literal(p))
		sockets = append(sockets, sbpl.F("remote", sbpl.Sym("unix-socket"), sbpl.F("path-literal", p)))
	}
	if re != "" {
		files = append(files, sbpl.F("regex", re))
		sockets = append(sockets, sbpl.F("remote", sbpl.Sym("unix-socket"), sbpl.F("path-regex", re)))
	}
	return []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"network-outbound"}, Filters: sockets,
			Comment: "R-34: connect() to a container engine's socket is network-outbound; file rules alone do not stop it (Nix, nono, Codex seatbelt.rs)"},
		{Effect: sbpl.Deny, Ops: []string{"file-read*", "file-write*"}, Filters: files,
			Comment: "R-34: the container engines' socket files themselves, at the operations a socket grant names"},
	}
}

// Container-engine sockets outside the home directory.
var engineSockets = []string{"/private/var/run/docker.sock"}

// homeEngineSockets are container-engine sockets in the home directory.
var homeEngineSockets = []string{".docker/run/docker.sock", ".orbstack/run/docker.sock"}

// colimaSocketRegex matches Colima's per-profile Docker sockets.
func colimaSocketRegex(home string) string {
	return "^" + profile.FoldCase(regexp.QuoteMeta(path.Join(home, ".colima"))+`/[^/]+/docker\.sock$`)
}

func serviceManagerRules(home string) []sbpl.Rule {
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"lsopen", "appleevent-send"},
			Comment: "service-manager: Launch Services open and Apple events start programs outside the sandbox (agent-safehouse#181, gemini-cli#28423)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name", "com.apple.coreservices.launchservicesd"),
			sbpl.F("global-name", "com.apple.CoreServices.coreservicesd"),
			sbpl.F("global-name-prefix", "com.apple.lsd."),
			sbpl.F("global-name", "com.apple.coreservices.appleevents"),
			sbpl.F("global-name", "com.apple.xpc.smd"),
			sbpl.F("global-name", "com.apple.backgroundtaskmanagementagent"),
			sbpl.F("global-name-prefix", "com.docker."),
		}, Comment: "service-manager: launchservicesd and its older name coreservicesd (open, open -a), Apple events, launchd's job submission (smd, background task management) and Docker's Mach names (Gemini profiles)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name-prefix", "com.apple.xpc.launchd.domain."),
			sbpl.F("global-name", "com.apple.dock.server"),
			sbpl.F("global-name-prefix", "com.apple.windowserver"),
			sbpl.F("global-name-prefix", "com.apple.tccd"),
			sbpl.F("global-name", "com.apple.authd"),
			sbpl.F("global-name", "com.apple.DiskArbitration.diskarbitrationd"),
		}, Comment: "service-manager: launchd's user domain (jobs), the Dock (launches apps), WindowServer (posts events to other apps), tccd (privacy grants attributed to the terminal), authd (Authorization Services) and Disk Arbitration (mounts for the caller, over a path it names: DiskArbitration's _kDAServiceName): each acts outside the cage"},
		{Effect: sbpl.Deny, Ops: []string{"file-mount", "file-unmount"}, Filters: []*sbpl.Filter{sbpl.Subpath("/")},
			Comment: "service-manager: mounting over a path (devfs over /dev, CVE-2023-32364) changes what every path rule means; filtered so it also beats filtered allows"},
		{Effect: sbpl.Deny, Ops: []string{"job-creation", "iokit-open-user-client", "pseudo-tty"},
			Comment: "service-manager: launchd job creation, IOKit user clients (drivers, HID event injection) and new pseudo-terminals, which (allow default) leaves open (CVE-2023-32364 class); no filter is known to match every instance"},
	}
	rules = append(rules, socketRules(engineSockets, "")...)
	if home != "" {
		var paths []string
		for _, p := range homeEngineSockets {
			paths = append(paths, path.Join(home, p))
		}
		rules = append(rules, socketRules(paths, colimaSocketRegex(home))...)
	}
	return rules
}
