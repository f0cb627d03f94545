package profile

import (
	"path"
	"regexp"
	"strings"
)

// The hard-deny table: what the secrets and trust-handoff classes protect,
// written once and read by both lowerings (Seatbelt rules in
// profile/seatbelt, Landlock checks in profile/linux). What only one OS has (Mach
// names, sysctls, regexes of Apple paths; system calls) stays with its
// backend.

// Protection is the set of accesses a class refuses on a protected path.
type Protection uint8

const (
	// ProtectRead refuses reading a file, listing a tree and executing
	// from it.
	ProtectRead Protection = 1 << iota
	// ProtectWrite refuses writing, creating, removing, renaming and
	// linking.
	ProtectWrite
)

func (p Protection) String() string {
	switch p {
	case ProtectRead:
		return "read"
	case ProtectWrite:
		return "write"
	case ProtectRead | ProtectWrite:
		return "read and write"
	}
	return "none"
}

// Anchor is what a protected entry's Name is relative to.
type Anchor uint8

const (
	// AnchorHome: the caging user's home directory.
	AnchorHome Anchor = iota
	// AnchorXDGConfig: $XDG_CONFIG_HOME, where it is set and is not
	// ~/.config (which AnchorHome entries cover).
	AnchorXDGConfig
	// AnchorZDotDir: zsh's $ZDOTDIR, where it is set and is not the home
	// directory.
	AnchorZDotDir
	// AnchorAnyTree: a git directory anywhere (Name ".git"); see
	// [GitProtected] for the data git may still write there.
	AnchorAnyTree
)

// Protected is one entry of the hard-deny table.
type Protected struct {
	Class  Class
	Anchor Anchor
	// Name is the entry's path relative to its anchor.
	Name string
	// Tree: a directory and everything beneath it; otherwise one file.
	Tree bool
	// Prefix: every name in Name's directory that begins with Name's last
	// element (.gitconfig-work, python3.12) is protected too.
	Prefix bool
	// Protect is what the class refuses there.
	Protect Protection
	// OS restricts the entry to one backend ("linux": a Linux location of
	// what the other entries protect on a Mac); "" means every OS.
	OS string
}

// Sources of the entries. Secrets: each store holds a token or key its
// tool documents there: git's credential store (git-credential-store(1)),
// GitHub CLI's hosts.yml and Copilot's token, npm's and PyPI's auth tokens
// (npmrc(5), .pypirc), Cargo's registry token (The Cargo Book,
// credentials), the Azure CLI's tokens; browser profiles hold cookies and
// saved passwords, ~/Library/Cookies the system cookie store; on Linux,
// Firefox keeps profiles in ~/.mozilla, Chromium-based browsers in
// ~/.config/<name> (Chromium docs, user_data_dir.md), GNOME Keyring in
// ~/.local/share/keyrings and pass in ~/.password-store.
//
// Trust handoff: files a shell, git or another tool reads and obeys (runs)
// as the user: the shells' manuals; oh-my-zsh sources $ZSH_CUSTOM
// (~/.oh-my-zsh/custom) at every start; Python runs import lines of *.pth
// files and usercustomize in the user site (Python docs, site module),
// macOS framework builds under ~/Library/Python, others under
// ~/.local/lib/python*; Cargo's config sets runners and wrappers it runs
// (The Cargo Book, configuration); docker runs ~/.docker/cli-plugins as
// subcommands (Docker CLI plugins); iTerm2 runs AutoLaunch scripts at
// start (iTerm2 Python API docs); the terminals' preference files name the
// command a new window runs; Apple's /etc/bashrc_Apple_Terminal sources
// the saved session file in .bash_sessions when Terminal restores a
// window; zsh runs each startup file's compiled .zwc form when newer and
// the saved Terminal sessions (zsh(1), /etc/zshrc_Apple_Terminal), and
// compinit sources its .zcompdump files (zshcompsys(1)); git reads
// $XDG_CONFIG_HOME/git/config and the files ~/.gitconfig commonly includes
// (git-config(1), FILES and INCLUDES); on Linux, systemd starts user units
// from ~/.config/systemd/user (systemd.unit(5)) and desktop sessions run
// ~/.config/autostart entries at login (XDG Autostart Specification),
// systemd's user manager reads ~/.config/environment.d (environment.d(5)),
// Debian's and Ubuntu's default ~/.bashrc sources ~/.bash_aliases; the
// GitHub CLI, gcloud, Copilot and the browsers follow $XDG_CONFIG_HOME.
var protectedTable = []Protected{
	// secrets, in the order the Seatbelt rule lists them.
	home(Secrets, ".aws/"), home(Secrets, ".azure/"), home(Secrets, ".cargo/credentials"), home(Secrets, ".cargo/credentials.toml"),
	home(Secrets, ".config/gcloud/"), home(Secrets, ".config/gh/"),
	home(Secrets, ".docker/config.json"), home(Secrets, ".git-credentials"), home(Secrets, ".gnupg/"), home(Secrets, ".kube/"),
	home(Secrets, ".netrc"), home(Secrets, ".npmrc"), home(Secrets, ".pypirc"), home(Secrets, ".ssh/"),
	home(Secrets, ".config/github-copilot/"),
	home(Secrets, "Library/Application Support/Arc/"), home(Secrets, "Library/Application Support/BraveSoftware/"),
	home(Secrets, "Library/Application Support/Chromium/"), home(Secrets, "Library/Application Support/Firefox/"),
	home(Secrets, "Library/Application Support/Google/Chrome/"), home(Secrets, "Library/Application Support/Microsoft Edge/"),
	home(Secrets, "Library/Application Support/Vivaldi/"),
	home(Secrets, "Library/Cookies/"), home(Secrets, "Library/Keychains/"), home(Secrets, "Library/Safari/"),
	linux(home(Secrets, ".mozilla/")), linux(home(Secrets, ".config/BraveSoftware/")), linux(home(Secrets, ".config/chromium/")),
	linux(home(Secrets, ".config/google-chrome/")), linux(home(Secrets, ".config/microsoft-edge/")),
	linux(home(Secrets, ".config/vivaldi/")), linux(home(Secrets, ".local/share/keyrings/")), linux(home(Secrets, ".password-store/")),

	// trust-handoff: every .git, then the home directory's startup files
	// in the order the Seatbelt rule lists them.
	{Class: TrustHandoff, Anchor: AnchorAnyTree, Name: ".git", Tree: true, Protect: ProtectWrite},
	home(TrustHandoff, ".bash_login"), home(TrustHandoff, ".bash_logout"), home(TrustHandoff, ".bash_profile"),
	home(TrustHandoff, ".bash_sessions/"), home(TrustHandoff, ".bashrc"), home(TrustHandoff, ".cargo/config"),
	home(TrustHandoff, ".cargo/config.toml"), home(TrustHandoff, ".config/fish/"), home(TrustHandoff, ".config/git/"),
	home(TrustHandoff, ".config/zsh/"), home(TrustHandoff, ".cshrc"), home(TrustHandoff, ".docker/cli-plugins/"),
	home(TrustHandoff, ".kshrc"), home(TrustHandoff, ".login"), home(TrustHandoff, ".logout"),
	home(TrustHandoff, ".oh-my-zsh/custom/"), home(TrustHandoff, ".profile"), home(TrustHandoff, ".tcshrc"),
	home(TrustHandoff, ".zlogin"), home(TrustHandoff, ".zlogout"), home(TrustHandoff, ".zprofile"),
	home(TrustHandoff, ".zshenv"), home(TrustHandoff, ".zshrc"),
	home(TrustHandoff, "Library/Application Support/iTerm2/Scripts/AutoLaunch/"),
	home(TrustHandoff, "Library/Application Support/iTerm2/Scripts/AutoLaunch.scpt"),
	home(TrustHandoff, "Library/LaunchAgents/"), home(TrustHandoff, "Library/Python/"),
	home(TrustHandoff, "Library/Preferences/com.apple.Terminal.plist"),
	home(TrustHandoff, "Library/Preferences/com.googlecode.iterm2.plist"),
	home(TrustHandoff, ".zlogin.zwc"), home(TrustHandoff, ".zlogout.zwc"), home(TrustHandoff, ".zprofile.zwc"),
	home(TrustHandoff, ".zsh_sessions/"), home(TrustHandoff, ".zshenv.zwc"), home(TrustHandoff, ".zshrc.zwc"),
	prefix(home(TrustHandoff, ".local/lib/python/")), prefix(home(TrustHandoff, ".zcompdump")), prefix(home(TrustHandoff, ".gitconfig")),
	linux(home(TrustHandoff, ".config/autostart/")), linux(home(TrustHandoff, ".config/systemd/user/")),
	home(TrustHandoff, ".bash_aliases"), home(TrustHandoff, ".config/environment.d/"),
	anchor(AnchorXDGConfig, home(TrustHandoff, "fish/")), anchor(AnchorXDGConfig, home(TrustHandoff, "git/")),
	anchor(AnchorXDGConfig, home(TrustHandoff, "zsh/")),
	anchor(AnchorXDGConfig, home(Secrets, "gcloud/")), anchor(AnchorXDGConfig, home(Secrets, "gh/")),
	anchor(AnchorXDGConfig, home(Secrets, "github-copilot/")),
	linux(anchor(AnchorXDGConfig, home(Secrets, "BraveSoftware/"))), linux(anchor(AnchorXDGConfig, home(Secrets, "chromium/"))),
	linux(anchor(AnchorXDGConfig, home(Secrets, "google-chrome/"))), linux(anchor(AnchorXDGConfig, home(Secrets, "microsoft-edge/"))),
	linux(anchor(AnchorXDGConfig, home(Secrets, "vivaldi/"))),
	linux(anchor(AnchorXDGConfig, home(TrustHandoff, "autostart/"))), linux(anchor(AnchorXDGConfig, home(TrustHandoff, "systemd/user/"))),
	anchor(AnchorXDGConfig, home(TrustHandoff, "environment.d/")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zlogin")), anchor(AnchorZDotDir, home(TrustHandoff, ".zlogout")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zprofile")), anchor(AnchorZDotDir, home(TrustHandoff, ".zshenv")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zshrc")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zlogin.zwc")), anchor(AnchorZDotDir, home(TrustHandoff, ".zlogout.zwc")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zprofile.zwc")), anchor(AnchorZDotDir, home(TrustHandoff, ".zsh_sessions/")),
	anchor(AnchorZDotDir, home(TrustHandoff, ".zshenv.zwc")), anchor(AnchorZDotDir, home(TrustHandoff, ".zshrc.zwc")),
	anchor(AnchorZDotDir, prefix(home(TrustHandoff, ".zcompdump"))),
}

// home is an entry under the home directory: a trailing "/" marks a tree.
// Secrets refuse reads and writes, trust handoff only writes.
func home(c Class, name string) Protected {
	p := Protected{Class: c, Anchor: AnchorHome, Name: strings.TrimSuffix(name, "/"), Tree: strings.HasSuffix(name, "/"), Protect: ProtectWrite}
	if c == Secrets {
		p.Protect |= ProtectRead
	}
	return p
}

func linux(p Protected) Protected            { p.OS = "linux"; return p }
func prefix(p Protected) Protected           { p.Prefix = true; return p }
func anchor(a Anchor, p Protected) Protected { p.Anchor = a; return p }

// ProtectedTable returns the hard-deny table's entries for the OS named as
// runtime.GOOS spells it, in lowering order.
func ProtectedTable(goos string) []Protected {
	var out []Protected
	for _, p := range protectedTable {
		if p.OS == "" || p.OS == goos {
			out = append(out, p)
		}
	}
	return out
}

// ProtectedPath is a table entry placed in one environment.
type ProtectedPath struct {
	Protected
	// Path is the entry's kernel spelling ("" for AnchorAnyTree).
	Path string
}

// Place returns where the entry lies in env, and false where env has no
// such place (no home directory, $XDG_CONFIG_HOME or $ZDOTDIR unset or
// already covered by the home directory's entries).
func (p Protected) Place(env Env) (ProtectedPath, bool) {
	var base string
	switch p.Anchor {
	case AnchorAnyTree:
		return ProtectedPath{Protected: p}, true
	case AnchorHome:
		base = env.Home
	case AnchorXDGConfig:
		if env.XDGConfigHome != "" && env.XDGConfigHome != path.Join(env.Home, ".config") {
			base = env.XDGConfigHome
		}
	case AnchorZDotDir:
		if env.ZDotDir != "" && env.ZDotDir != env.Home {
			base = env.ZDotDir
		}
	}
	if base == "" {
		return ProtectedPath{}, false
	}
	return ProtectedPath{Protected: p, Path: path.Join(base, p.Name)}, true
}

// Places returns where the entry lies in env: Place's path, and where a
// link there leads (env.ProtectedAt), which the entry protects as well.
func (p Protected) Places(env Env) []ProtectedPath {
	pp, ok := p.Place(env)
	if !ok {
		return nil
	}
	out := []ProtectedPath{pp}
	if to, ok := env.ProtectedAt[pp.Path]; ok && pp.Path != "" && to != pp.Path {
		out = append(out, ProtectedPath{Protected: p, Path: to})
	}
	return out
}

// Covers reports whether the protected entry covers path q (kernel
// spelling): q is the entry, lies beneath a tree entry, or (Prefix) is or
// lies beneath a name the entry's prefix begins. ASCII case is folded:
// the check must hold on case-insensitive file systems too.
func (pp ProtectedPath) Covers(q string) bool {
	if pp.Anchor == AnchorAnyTree {
		return GitProtected(q)
	}
	p := pp.Path
	if pp.Prefix {
		dir, base := path.Split(p)
		rest, ok := cutPrefixFold(q, dir)
		if !ok {
			return false
		}
		name, _, _ := strings.Cut(rest, "/")
		if !hasPrefixFold(name, base) {
			return false
		}
		return pp.Tree || !strings.Contains(rest, "/")
	}
	if strings.EqualFold(q, p) {
		return true
	}
	return pp.Tree && hasPrefixFold(q, p+"/")
}

// Inside reports whether the entry could lie beneath the directory tree
// dir (kernel spelling), so that a rule on dir reaches it. Every tree may
// hold a .git.
func (pp ProtectedPath) Inside(dir string) bool {
	if pp.Anchor == AnchorAnyTree {
		return true
	}
	p := pp.Path
	if pp.Prefix {
		p = path.Dir(p) + "/"
	}
	return dir == "/" || hasPrefixFold(p, dir+"/")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// cutPrefixFold is strings.CutPrefix with ASCII case folded.
func cutPrefixFold(s, prefix string) (after string, ok bool) {
	if !hasPrefixFold(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
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
// todo list holds exec lines) do not. The patterns are written so that
// both Seatbelt's regex and Go's regexp read them alike ([GitRegexes]).
var (
	// gitAnyRegex matches a .git directory or file and everything in it.
	gitAnyRegex = FoldCase(`/\.git(/|$)`)
	// gitHeadRegex matches a file named HEAD: every git directory has one
	// (git setup.c, is_git_directory: HEAD, objects/ and refs/), so
	// outside the carve-out it marks a bare repository being planted.
	// Git's discovery takes such a directory for a repository and obeys
	// its config, in a subdirectory before any .git above it, and at a
	// worktree's root once the writable .git/HEAD stops validating.
	gitHeadRegex = FoldCase(`/HEAD$`)
	// gitPayloadRegex matches, anywhere inside a .git, the names by which
	// a git directory makes git run a program: its config, config.worktree
	// and commondir (another config) and its hooks. The carve-out lets the
	// child build a git directory inside .git/refs or .git/objects (HEAD,
	// objects/, refs/ are ref-shaped names there) and a link in the
	// worktree to it makes git take it for a bare repository, so these
	// names are refused there too: a branch named config, commondir or
	// with a hooks component cannot be written in a cage.
	gitPayloadRegex = `/` + FoldCase(`\.git`) + `/(.*/)?(` + FoldCase(`(config|config\.worktree|commondir)$`) + `|` + FoldCase(`hooks(/|$)`) + `)`
	// gitDataRegex matches the data carve-out, in the repository's own
	// .git or one level of modules/<name>/ or worktrees/<name>/ (a
	// submodule name with a "/" or a nested submodule fails closed).
	gitDataRegex = `/` + FoldCase(`\.git`) + `/(` + FoldCase(`(modules|worktrees)`) + `/[^/]+/)?(` +
		FoldCase(`(objects|refs|logs|lfs)(/|$)`) + `|` + FoldCase(`info/(refs|rev-cache)[^/]*$`) + `|` +
		FoldCase(`(index(\.stash\.[0-9]+)?|HEAD|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|MERGE_MSG|MERGE_MODE|MERGE_RR|AUTO_MERGE|SQUASH_MSG|CHERRY_PICK_HEAD|REVERT_HEAD|COMMIT_EDITMSG|TAG_EDITMSG|packed-refs(\.new)?|shallow|gc\.pid|gc\.log)(\.lock)?$`) + `)`
)

var gitAny, gitHead, gitPayload, gitData = regexp.MustCompile(gitAnyRegex), regexp.MustCompile(gitHeadRegex),
	regexp.MustCompile(gitPayloadRegex), regexp.MustCompile(gitDataRegex)

// GitPatterns are the regular expressions [GitProtected] is made of, ASCII
// case folded by hand ([FoldCase]), for a lowering that matches paths by
// regex: a path is protected where Any or Head matches and Data does not,
// or where Payload matches.
type GitPatterns struct {
	// Any matches a .git directory or file and everything in it.
	Any string
	// Head matches a file named HEAD, which marks a bare repository
	// outside the data carve-out.
	Head string
	// Payload matches, anywhere inside a .git, the names by which a git
	// directory makes git run a program (config, config.worktree,
	// commondir, hooks).
	Payload string
	// Data matches the data git writes in ordinary commands.
	Data string
}

// GitRegexes returns the patterns of [GitProtected].
func GitRegexes() GitPatterns {
	return GitPatterns{Any: gitAnyRegex, Head: gitHeadRegex, Payload: gitPayloadRegex, Data: gitDataRegex}
}

// GitProtected reports whether the trust-handoff class refuses writing
// path p (kernel spelling) as part of a git directory: inside any .git,
// or a file named HEAD, but for the data git writes in ordinary commands;
// and a git directory's config, commondir and hooks everywhere inside a
// .git.
func GitProtected(p string) bool {
	return (gitAny.MatchString(p) || gitHead.MatchString(p)) && !gitData.MatchString(p) || gitPayload.MatchString(p)
}

// FoldCase writes each ASCII letter of a regex as a [Xx] class, so the
// pattern matches in any letter case without relying on the engine:
// Seatbelt's regex may not fold case (constellation-works/orbit#494,
// unmeasured) and (?i) does not compile (constellation-works/orbit#495).
func FoldCase(re string) string {
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
