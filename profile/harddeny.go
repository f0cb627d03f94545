package profile

import (
	"path"
	"regexp"
	"slices"
	"strings"

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
//   - process-access: the argument sysctls (kern.procargs*), other
//     processes' information, signals and task ports outside the run, the
//     sysmond service behind ps and pgrep, and creating setuid files.
//     Executing setuid programs is refused by the kernel in any cage
//     (forbidden-exec-sugid) whether or not the class is waived.
//   - secrets: ~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gcloud, ~/.kube,
//     ~/.docker/config.json, ~/.netrc, the keychains and the Mach services
//     that hand out keychain items.
//   - trust-handoff: writes to files another program later runs as the
//     user: git hooks and config in any tree, shell startup files,
//     ~/.gitconfig, ~/Library/LaunchAgents.
//   - service-manager: Launch Services, Apple events, launchd's job
//     submission services and the Docker, OrbStack and Colima sockets and
//     Mach names, which would start a process outside the cage.
func hardDenyRules(c Class, home string) []sbpl.Rule {
	var rules []sbpl.Rule
	switch c {
	case ProcessAccess:
		rules = processAccessRules()
	case Secrets:
		rules = secretsRules(home)
	case TrustHandoff:
		rules = trustHandoffRules(home)
	case ServiceManager:
		rules = serviceManagerRules(home)
	}
	return filterDenies(append(rules, linkOpRules(rules)...))
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
			Comment: "R-25: other processes' arguments and environment (KERN_PROCARGS, KERN_PROCARGS2), by prefix as the seed measured"},
		{Effect: sbpl.Deny, Ops: []string{"process-info*"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: information on processes outside the run (proc_info, proc_pidpath, listing pids); the run's own stay readable"},
		{Effect: sbpl.Deny, Ops: []string{"signal"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: signals to processes outside the run (Codex base policy, sandbox-runtime)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-priv-task-port", "mach-task*"}, Filters: []*sbpl.Filter{notSameSandbox()},
			Comment: "R-25: task ports of processes outside the run (task_for_pid, task_name_for_pid; Codex base policy)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{sbpl.F("global-name-prefix", "com.apple.sysmond")},
			Comment: "R-25: sysmond lists every process for pgrep and ps (openai/codex#23505)"},
		{Effect: sbpl.Deny, Ops: []string{"file-write-setugid"},
			Comment: "no setuid or setgid files (Nix sandbox-defaults.sb); executing setuid programs is refused by the kernel in any cage (forbidden-exec-sugid)"},
	}
}

// secretPaths are the user's credential stores, relative to home; a
// trailing "/" marks a tree.
var secretPaths = []string{
	".aws/", ".config/gcloud/", ".docker/config.json", ".gnupg/", ".kube/", ".netrc", ".ssh/", "Library/Keychains/",
}

// keychainServices hand out keychain items whatever the file rules say
// (field-reports.md §6: anthropics/claude-code#44195, LeGambiArt/arapuca#52).
var keychainServices = []*sbpl.Filter{
	sbpl.F("global-name", "com.apple.SecurityServer"),
	sbpl.F("global-name-prefix", "com.apple.securityd"),
	sbpl.F("global-name", "com.apple.secd"),
}

func secretsRules(home string) []sbpl.Rule {
	fileOps := []string{"file-read*", "file-write*", "file-link", "file-clone"}
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: fileOps, Filters: []*sbpl.Filter{sbpl.Subpath("/Library/Keychains")},
			Comment: "secrets: the system keychains"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: keychainServices,
			Comment: "secrets: securityd and secd hand out keychain items (anthropics/claude-code#44195, LeGambiArt/arapuca#52)"},
	}
	if home == "" {
		return rules
	}
	filters, protected := homeTargets(home, secretPaths)
	rules = append(rules,
		sbpl.Rule{Effect: sbpl.Deny, Ops: fileOps, Filters: filters,
			Comment: "secrets: SSH, cloud, GnuPG, Kubernetes and Docker credentials, .netrc, the user's keychains (read, write, hard link, clone)"},
	)
	rules = append(rules, moveBlock(protected, "secrets")...)
	return rules
}

// homeTargets turns names relative to home ("dir/" for a tree, otherwise
// one file) into filters and the paths they protect.
func homeTargets(home string, names []string) (filters []*sbpl.Filter, protected []string) {
	for _, n := range names {
		p := path.Join(home, strings.TrimSuffix(n, "/"))
		if strings.HasSuffix(n, "/") {
			filters = append(filters, sbpl.Subpath(p))
		} else {
			filters = append(filters, sbpl.Literal(p))
		}
		protected = append(protected, p)
	}
	return filters, protected
}

// moveBlock denies renaming or removing each directory between "/" and a
// protected path: renaming ~/.config away would carry ~/.config/gcloud out
// from under its rule (sandbox-runtime's move-blocking, sbpl.md §13).
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
	r := sbpl.Rule{Effect: sbpl.Deny, Ops: []string{"file-write-unlink"},
		Comment: class + ": no rename or removal of the directories above these paths (move-blocking, sandbox-runtime)"}
	for _, d := range slices.Compact(dirs) {
		r.Filters = append(r.Filters, sbpl.Literal(d))
	}
	return []sbpl.Rule{r}
}

// foldCase writes each ASCII letter of a regex as a [Xx] class: Seatbelt's
// regex may not fold case and (?i) does not compile (sbpl.md §3).
func foldCase(re string) string {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c >= 'a' && c <= 'z':
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
		case c >= 'A' && c <= 'Z':
			b.WriteString("[" + string(c) + string(c-'A'+'a') + "]")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Regexes of the git files another git process runs or obeys, in any tree.
var (
	gitHooksRegex  = foldCase(`/\.git/hooks(/|$)`)
	gitConfigRegex = foldCase(`/\.git/(worktrees/[^/]+/)?config(\.worktree)?$`)
	gitDirRegex    = foldCase(`/\.git$`)
)

// startupFiles are files in the home directory a shell or git reads and
// obeys as the user; a trailing "/" marks a tree.
var startupFiles = []string{
	".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".config/fish/", ".config/git/",
	".cshrc", ".gitconfig", ".kshrc", ".login", ".logout", ".profile", ".tcshrc",
	".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc",
	"Library/LaunchAgents/",
}

func trustHandoffRules(home string) []sbpl.Rule {
	ops := []string{"file-write*", "file-link"}
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: ops, Filters: []*sbpl.Filter{sbpl.F("regex", gitHooksRegex), sbpl.F("regex", gitConfigRegex)},
			Comment: "trust-handoff: git hooks and config in any tree (core.hooksPath, core.fsmonitor run programs); case folded by hand"},
		{Effect: sbpl.Deny, Ops: []string{"file-write-unlink", "file-write-data"}, Filters: []*sbpl.Filter{sbpl.F("regex", gitDirRegex)},
			Comment: "trust-handoff: no removing, renaming or rewriting .git (a gitdir: file or a prepared directory moved into place)"},
	}
	if home == "" {
		return rules
	}
	filters, protected := homeTargets(home, startupFiles)
	rules = append(rules,
		sbpl.Rule{Effect: sbpl.Deny, Ops: ops, Filters: filters,
			Comment: "trust-handoff: shell startup files, git's user config, launch agents (run at the next login or shell)"},
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
	return "^" + foldCase(regexp.QuoteMeta(path.Join(home, ".colima"))+`/[^/]+/docker\.sock$`)
}

func serviceManagerRules(home string) []sbpl.Rule {
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"lsopen", "appleevent-send"},
			Comment: "service-manager: Launch Services open and Apple events start programs outside the sandbox (agent-safehouse#181, gemini-cli#28423)"},
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name", "com.apple.coreservices.launchservicesd"),
			sbpl.F("global-name-prefix", "com.apple.lsd."),
			sbpl.F("global-name", "com.apple.coreservices.appleevents"),
			sbpl.F("global-name", "com.apple.xpc.smd"),
			sbpl.F("global-name", "com.apple.backgroundtaskmanagementagent"),
			sbpl.F("global-name-prefix", "com.docker."),
		}, Comment: "service-manager: launchservicesd (open, open -a), Apple events, launchd's job submission (smd, background task management) and Docker's Mach names (Gemini profiles)"},
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
