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
func hardDenyRules(c Class, home string) []sbpl.Rule { return hardDenyRulesEnv(c, Env{Home: home}) }

// hardDenyRulesEnv is hardDenyRules with the rest of env: zsh's $ZDOTDIR
// and $XDG_CONFIG_HOME (kernel spellings, "" = unset), whose files the
// trust-handoff class also protects.
func hardDenyRulesEnv(c Class, env Env) []sbpl.Rule {
	home := env.Home
	var rules []sbpl.Rule
	switch c {
	case ProcessAccess:
		rules = processAccessRules()
	case Secrets:
		rules = secretsRules(home)
	case TrustHandoff:
		rules = trustHandoffRules(home, env.ZDotDir, env.XDGConfigHome)
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

// secretPaths are the user's credential stores, relative to home; a
// trailing "/" marks a tree. Each holds a token or key its tool documents
// there: git's credential store (git-credential-store(1)), GitHub CLI's
// hosts.yml and Copilot's token, npm's and PyPI's auth tokens (npmrc(5), .pypirc), Cargo's
// registry token (The Cargo Book, credentials), the Azure CLI's tokens;
// browser profiles hold cookies and saved passwords, ~/Library/Cookies the
// system cookie store.
var secretPaths = []string{
	".aws/", ".azure/", ".cargo/credentials", ".cargo/credentials.toml", ".config/gcloud/", ".config/gh/",
	".docker/config.json", ".git-credentials", ".gnupg/", ".kube/", ".netrc", ".npmrc", ".pypirc", ".ssh/",
	".config/github-copilot/",
	"Library/Application Support/Arc/", "Library/Application Support/BraveSoftware/", "Library/Application Support/Chromium/",
	"Library/Application Support/Firefox/", "Library/Application Support/Google/Chrome/",
	"Library/Application Support/Microsoft Edge/", "Library/Application Support/Vivaldi/",
	"Library/Cookies/", "Library/Keychains/", "Library/Safari/",
}

// keychainServices hand out keychain items whatever the file rules say
// (anthropics/claude-code#44195, LeGambiArt/arapuca#52).
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
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name", "com.apple.ctkd.token-client"),
			sbpl.F("global-name-prefix", "com.apple.pasteboard."),
		}, Comment: "secrets: CryptoTokenKit's smart-card keys (ctkd) and the pasteboard, which holds copied passwords (both named in Apple's own profiles' Mach lists, blacktop/ipsw-diffs)"},
	}
	if home == "" {
		return rules
	}
	filters, protected := homeTargets(home, secretPaths)
	rules = append(rules,
		sbpl.Rule{Effect: sbpl.Deny, Ops: fileOps, Filters: filters,
			Comment: "secrets: SSH, cloud, GnuPG, Kubernetes, Docker, git, GitHub CLI, npm, PyPI and Cargo credentials, .netrc, browser profiles and cookies, the user's keychains (read, write, hard link, clone)"},
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

// foldCase writes each ASCII letter of a regex as a [Xx] class: Seatbelt's
// regex may not fold case (constellation-works/orbit#494, unmeasured) and
// (?i) does not compile (constellation-works/orbit#495).
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

// Git trust handoff. Everything git obeys lives in a .git
// directory or file: config (core.fsmonitor, core.hooksPath, aliases),
// hooks, commondir (another config), gitdir files, modules/<sub>/config and
// hooks, worktrees/<wt>/commondir, info/attributes, rebase todo lists with
// exec lines. A list of those paths was bypassed each time git grew one,
// so the class follows Codex's approach instead (every .git under a
// writable root read-only, creation included; openai/codex seatbelt.rs)
// with one carve-out: the data git writes during ordinary commands
// (objects, refs, logs, the index, HEAD and the other *_HEAD and message
// files, locks of those, the dumb-HTTP info/refs), none of which git
// executes or reads as configuration. The list is what git 2.x wrote
// under strace for commit, fetch, merge, pull, stash, tag, cherry-pick,
// reset and gc. So those work in a cage; init, clone, config, remote,
// branch -D/-u (they edit config), submodule, worktree and rebase (its
// todo list holds exec lines) do not.
var (
	// gitAnyRegex matches a .git directory or file and everything in it.
	gitAnyRegex = foldCase(`/\.git(/|$)`)
	// gitHeadRegex matches a file named HEAD: every git directory has one
	// (git setup.c, is_git_directory: HEAD, objects/ and refs/), so
	// outside the carve-out it marks a bare repository being planted.
	// Git's discovery takes such a directory for a repository and obeys
	// its config, in a subdirectory before any .git above it, and at a
	// worktree's root once the writable .git/HEAD stops validating.
	gitHeadRegex = foldCase(`/HEAD$`)
	// gitPayloadRegex matches, anywhere inside a .git, the names by which
	// a git directory makes git run a program: its config, config.worktree
	// and commondir (another config) and its hooks. The carve-out lets the
	// child build a git directory inside .git/refs or .git/objects (HEAD,
	// objects/, refs/ are ref-shaped names there) and a link in the
	// worktree to it makes git take it for a bare repository, so these
	// names are refused there too: a branch named config, commondir or
	// with a hooks component cannot be written in a cage.
	gitPayloadRegex = `/` + foldCase(`\.git`) + `/(.*/)?(` + foldCase(`(config|config\.worktree|commondir)$`) + `|` + foldCase(`hooks(/|$)`) + `)`
	// gitDataRegex matches the data carve-out, in the repository's own
	// .git or one level of modules/<name>/ or worktrees/<name>/ (a
	// submodule name with a "/" or a nested submodule fails closed).
	gitDataRegex = `/` + foldCase(`\.git`) + `/(` + foldCase(`(modules|worktrees)`) + `/[^/]+/)?(` +
		foldCase(`(objects|refs|logs|lfs)(/|$)`) + `|` + foldCase(`info/(refs|rev-cache)[^/]*$`) + `|` +
		foldCase(`(index(\.stash\.[0-9]+)?|HEAD|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|MERGE_MSG|MERGE_MODE|MERGE_RR|AUTO_MERGE|SQUASH_MSG|CHERRY_PICK_HEAD|REVERT_HEAD|COMMIT_EDITMSG|TAG_EDITMSG|packed-refs(\.new)?|shallow|gc\.pid|gc\.log)(\.lock)?$`) + `)`
)

// startupFiles are files in the home directory a shell, git or another
// tool reads and obeys (runs) as the user; a trailing "/" marks a tree.
// Sources: the shells' manuals; oh-my-zsh sources $ZSH_CUSTOM
// (~/.oh-my-zsh/custom) at every start; Python runs import lines of *.pth
// files and usercustomize in the user site (Python docs, site module),
// macOS framework builds under ~/Library/Python, others under
// ~/.local/lib/python*; Cargo's config sets runners and wrappers it runs
// (The Cargo Book, configuration); docker runs ~/.docker/cli-plugins as
// subcommands (Docker CLI plugins); iTerm2 runs AutoLaunch scripts at
// start (iTerm2 Python API docs); the terminals' preference files name
// the command a new window runs (terminalDomains); Apple's
// /etc/bashrc_Apple_Terminal sources the saved session file in
// .bash_sessions when Terminal restores a window. zsh's other code files
// are zshCode.
var startupFiles = []string{
	".bash_login", ".bash_logout", ".bash_profile", ".bash_sessions/", ".bashrc", ".cargo/config", ".cargo/config.toml",
	".config/fish/", ".config/git/", ".config/zsh/", ".cshrc", ".docker/cli-plugins/", ".kshrc",
	".login", ".logout", ".oh-my-zsh/custom/", ".profile", ".tcshrc",
	".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc",
	"Library/Application Support/iTerm2/Scripts/AutoLaunch/", "Library/Application Support/iTerm2/Scripts/AutoLaunch.scpt",
	"Library/LaunchAgents/", "Library/Python/",
	"Library/Preferences/com.apple.Terminal.plist", "Library/Preferences/com.googlecode.iterm2.plist",
}

// terminalDomains are the preference domains of terminals whose profiles
// name the command a new window runs (Terminal's Shell setting "Run
// command", Terminal User Guide; iTerm2's profile Command, iTerm2
// documentation, Profiles > General).
var terminalDomains = []string{"com.apple.Terminal", "com.googlecode.iterm2"}

// zshStartup are the files zsh reads from $ZDOTDIR (zsh(1), STARTUP/SHUTDOWN FILES).
var zshStartup = []string{".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc"}

// zshCode are the other files zsh runs from $ZDOTDIR or the home
// directory: each startup file's compiled form, used when newer (zsh(1),
// STARTUP/SHUTDOWN FILES), and the saved Terminal sessions
// (/etc/zshrc_Apple_Terminal); a trailing "/" marks a tree.
var zshCode = []string{".zlogin.zwc", ".zlogout.zwc", ".zprofile.zwc", ".zsh_sessions/", ".zshenv.zwc", ".zshrc.zwc"}

// xdgConfig are the trees under $XDG_CONFIG_HOME (~/.config when unset)
// that startupFiles names: git reads $XDG_CONFIG_HOME/git/config
// (git-config(1), FILES), fish and zsh setups read theirs there.
var xdgConfig = []string{"fish/", "git/", "zsh/"}

// gitconfigRegex matches ~/.gitconfig and the files named like it that a
// user's gitconfig commonly includes (~/.gitconfig.local,
// ~/.gitconfig-work: git-config(1), INCLUDES), each able to set
// core.fsmonitor or core.hooksPath for every repository.
func gitconfigRegex(home string) string {
	return "^" + foldCase(regexp.QuoteMeta(path.Join(home, ".gitconfig"))+`[^/]*$`)
}

// zcompdumpRegex matches compinit's dump files in dir, which compinit
// sources (zshcompsys(1)): .zcompdump, oh-my-zsh's
// .zcompdump-<host>-<version> and their compiled forms.
func zcompdumpRegex(dir string) string {
	return "^" + foldCase(regexp.QuoteMeta(path.Join(dir, ".zcompdump"))+`[^/]*$`)
}

// pythonLocalRegex matches the non-framework Python user site
// (~/.local/lib/pythonX.Y), whose version directory is not known ahead.
func pythonLocalRegex(home string) string {
	return "^" + foldCase(regexp.QuoteMeta(path.Join(home, ".local/lib/python"))+`[^/]*(/|$)`)
}

func trustHandoffRules(home, zdotdir, xdgConfigHome string) []sbpl.Rule {
	ops := []string{"file-write*", "file-link", "file-clone"}
	rules := []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: ops, Filters: []*sbpl.Filter{sbpl.F("require-all",
			sbpl.F("require-any", sbpl.F("regex", gitAnyRegex), sbpl.F("regex", gitHeadRegex)),
			sbpl.F("require-not", sbpl.F("regex", gitDataRegex))),
			sbpl.F("regex", gitPayloadRegex)},
			Comment: "trust-handoff: every .git in any tree is read-only and cannot be created (Codex's approach), nor can a bare repository's HEAD, but for the data git writes in ordinary commands, where a git directory's config, commondir and hooks are still refused; case folded by hand"},
		{Effect: sbpl.Deny, Ops: []string{"file-write-unlink"}, Filters: []*sbpl.Filter{sbpl.F("require-all",
			sbpl.F("vnode-type", sbpl.Sym("DIRECTORY")), sbpl.F("regex", gitAnyRegex))},
			Comment: "trust-handoff: no directory inside a .git is moved or removed, so one built in the carve-out cannot carry a .git or HEAD into the worktree (git tolerates a failed rmdir of an empty directory)"},
	}
	var domains []*sbpl.Filter
	for _, d := range terminalDomains {
		domains = append(domains, sbpl.F("preference-domain", d))
	}
	rules = append(rules, sbpl.Rule{Effect: sbpl.Deny, Ops: []string{"user-preference-write"}, Filters: domains,
		Comment: "trust-handoff: the terminals' preferences, through cfprefsd, name the command a new window runs"})
	if home == "" {
		return rules
	}
	names := append(slices.Clone(startupFiles), zshCode...)
	filters, protected := homeTargets(home, names)
	filters = append(filters, sbpl.F("regex", pythonLocalRegex(home)), sbpl.F("regex", zcompdumpRegex(home)), sbpl.F("regex", gitconfigRegex(home)))
	// The python* directories themselves are the regex's; what lies above
	// them is move-blocked.
	protected = append(protected, path.Join(home, ".local/lib/python"), path.Join(home, ".gitconfig"))
	if xdgConfigHome != "" && xdgConfigHome != path.Join(home, ".config") {
		f, p := homeTargets(xdgConfigHome, xdgConfig)
		filters = append(filters, f...)
		protected = append(protected, p...)
	}
	if zdotdir != "" && zdotdir != home {
		f, p := homeTargets(zdotdir, append(slices.Clone(zshStartup), zshCode...))
		filters = append(append(filters, f...), sbpl.F("regex", zcompdumpRegex(zdotdir)))
		protected = append(protected, p...)
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
	return "^" + foldCase(regexp.QuoteMeta(path.Join(home, ".colima"))+`/[^/]+/docker\.sock$`)
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
