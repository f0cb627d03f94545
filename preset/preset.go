// Package preset names what coding agents commonly run, as policy rules
// found on this host and private caches a cage sets up for its runs:
//
//	c, err := cage.New(policy, cage.WithPresets(preset.Go, preset.C))
//	if err != nil {
//		return err
//	}
//	defer c.Close() // removes the caches
//	err = c.Command(ctx, "/usr/local/go/bin/go", "test", "./...").Run()
//
// Each preset grants the toolchain's usual locations read+exec (or read),
// only those that exist on this host, and may let the target fork; it
// never grants write to anything of the user's. A tool's cache (GOCACHE,
// the npm and pip caches) becomes a directory of the cage's, named by the
// tool's environment variable, shared by the cage's runs and removed by
// cage.Cage.Close: a caged build cannot poison the user's real caches for
// a later uncaged build, nor another cage's.
//
// What a preset grants is decided by [Preset.Rules] from the home
// directory, the environment (PATH, GOROOT, NVM_DIR, PYENV_ROOT,
// VIRTUAL_ENV, CARGO_HOME, RUSTUP_HOME, SSL_CERT_FILE, SSL_CERT_DIR) and
// which of the candidate paths exist: the same host gives the same rules,
// and the cage's plan shows them as policy rules.
//
// # Limitations
//
//   - Discovery looks at this host's file system even for a cage that only
//     plans for another OS (cage.WithBackend, cage.WithFS).
//   - Caches live as long as one cage: its first run starts cold (go test
//     compiles the standard library again). Modules, crates and packages
//     are not downloaded for the target unless the policy allows the
//     network; Go's module cache is granted read-only, so a module already
//     there is used and a missing one fails to download.
//   - Secrets a toolchain keeps beside its configuration (~/.npmrc tokens,
//     ~/.git-credentials, ~/.cargo/credentials.toml) are never granted:
//     an authenticated fetch fails.
package preset

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/procage-go/procage/profile"
)

// Preset names a toolchain. The zero value is no preset.
type Preset string

// The presets. docs/presets.md lists what each grants.
const (
	// Go: GOROOT (the go on PATH, $GOROOT, /usr/local/go, ~/sdk,
	// ~/go/bin) read+exec, the module cache and go's env file read-only,
	// fork; a private GOCACHE.
	Go Preset = "go"
	// Rust: ~/.cargo/bin and ~/.rustup read+exec, fork; a private
	// CARGO_HOME (registry and git checkouts).
	Rust Preset = "rust"
	// Node: nvm's node versions read+exec (the node on PATH's prefix),
	// OpenSSL's configuration read, fork; a private npm cache.
	Node Preset = "node"
	// Python: pyenv, $VIRTUAL_ENV and the python3 on PATH's prefix
	// read+exec, the user's site-packages and OpenSSL's configuration read,
	// fork; private pip and bytecode caches.
	Python Preset = "python"
	// C: /usr/include and /usr/local/include read, fork (make and gcc are
	// base system programs).
	C Preset = "c"
	// Git: the user's git configuration read-only (~/.gitconfig,
	// ~/.config/git/config, ignore and attributes; never credentials),
	// OpenSSL's configuration read.
	Git Preset = "git"
)

// All returns every preset, in documentation order.
func All() []Preset { return []Preset{Go, Rust, Node, Python, C, Git} }

// Parse returns the preset named s.
func Parse(s string) (Preset, error) {
	if slices.Contains(All(), Preset(s)) {
		return Preset(s), nil
	}
	names := make([]string, 0, len(All()))
	for _, p := range All() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("unknown preset %q (one of %s)", s, strings.Join(names, ", "))
}

// Rule is one filesystem rule a preset found on this host.
type Rule struct {
	Access profile.Access
	Target profile.Target
	Path   string // absolute, cleaned
	Why    string
}

// Cache is a directory a preset's tool writes, private to one cage: Env
// names it to the tool, Dir is its name in the cage's cache directory.
type Cache struct {
	Env string
	Dir string
}

// Caches returns the preset's private caches.
func (p Preset) Caches() []Cache {
	switch p {
	case Go:
		return []Cache{{"GOCACHE", "go-build"}}
	case Rust:
		return []Cache{{"CARGO_HOME", "cargo"}}
	case Node:
		return []Cache{{"npm_config_cache", "npm"}}
	case Python:
		return []Cache{{"PIP_CACHE_DIR", "pip"}, {"PYTHONPYCACHEPREFIX", "pycache"}}
	}
	return nil
}

// Forks reports whether the preset lets the target create processes: go,
// cargo, npm and make run compilers and scripts, and pyenv's shims are
// shell scripts. Git's preset is configuration only.
func (p Preset) Forks() bool { return p != Git && p != "" }

// Rules returns what the preset grants on this host: the candidate paths,
// from home and getenv (nil: os.Getenv), that exist, in a fixed order
// without duplicates. A relative or unset variable is ignored.
func (p Preset) Rules(home string, getenv func(string) string) []Rule {
	if getenv == nil {
		getenv = os.Getenv
	}
	f := &finder{home: home, getenv: getenv}
	switch p {
	case Go:
		f.prefixOf("go", "the go command's GOROOT")
		f.tree(exe, getenv("GOROOT"), "$GOROOT")
		f.tree(exe, "/usr/local/go", "the Go distribution's usual place")
		f.tree(exe, f.home1("sdk"), "toolchains go install golang.org/dl put there")
		f.tree(exe, f.home1("go", "bin"), "programs go install put there")
		mod := getenv("GOMODCACHE")
		if mod == "" {
			if gp := firstList(getenv("GOPATH")); gp != "" {
				mod = filepath.Join(gp, "pkg", "mod")
			} else {
				mod = f.home1("go", "pkg", "mod")
			}
		}
		f.tree(read, mod, "the module cache, read-only: modules already downloaded")
		f.file(read, f.config("go", "env"), "go env -w settings")
	case Rust:
		f.tree(exe, orHome(getenv("CARGO_HOME"), f.home1(".cargo"), "bin"), "cargo, rustc and rustup's proxies")
		f.tree(exe, orHome(getenv("RUSTUP_HOME"), f.home1(".rustup"), ""), "rustup's toolchains and settings")
	case Node:
		nvm := getenv("NVM_DIR")
		if nvm == "" {
			nvm = f.home1(".nvm")
		}
		f.tree(exe, joinIf(nvm, "versions", "node"), "node versions nvm installed")
		f.prefixOf("node", "the node on PATH")
		f.tls()
	case Python:
		root := getenv("PYENV_ROOT")
		if root == "" {
			root = f.home1(".pyenv")
		}
		f.tree(exe, root, "pyenv, its shims and Python versions")
		f.tree(exe, getenv("VIRTUAL_ENV"), "the active virtual environment")
		f.prefixOf("python3", "the python3 on PATH")
		if lib := f.home1(".local", "lib"); lib != "" {
			matches, _ := filepath.Glob(filepath.Join(lib, "python3*"))
			slices.Sort(matches)
			for _, m := range matches {
				f.tree(read, m, "the user's site-packages (pip install --user)")
			}
		}
		f.tls()
	case C:
		f.tree(read, "/usr/include", "C headers")
		f.tree(read, "/usr/local/include", "locally installed C headers")
	case Git:
		f.file(read, f.home1(".gitconfig"), "the user's git configuration, read-only")
		for _, name := range []string{"config", "ignore", "attributes"} {
			f.file(read, f.config("git", name), "the user's git "+name+", read-only")
		}
		f.tls()
	}
	return f.rules
}

// Options returns the policy options for the rules Rules finds, and Fork
// if the preset forks.
func (p Preset) Options(home string, getenv func(string) string) []profile.Option {
	var opts []profile.Option
	for _, r := range p.Rules(home, getenv) {
		opts = append(opts, profile.FS(r.Access, r.Target, r.Path))
	}
	if p.Forks() {
		opts = append(opts, profile.Fork())
	}
	return opts
}

const (
	read = profile.AccessRead
	exe  = profile.AccessRead | profile.AccessExec
)

type finder struct {
	home   string
	getenv func(string) string
	rules  []Rule
}

// home1 joins elem to the home directory; "" without one.
func (f *finder) home1(elem ...string) string {
	if !filepath.IsAbs(f.home) {
		return ""
	}
	return filepath.Join(append([]string{f.home}, elem...)...)
}

// config joins elem to $XDG_CONFIG_HOME, by default ~/.config.
func (f *finder) config(elem ...string) string {
	dir := f.getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		dir = f.home1(".config")
	}
	return joinIf(dir, elem...)
}

func (f *finder) add(a profile.Access, t profile.Target, path, why string, dir bool) {
	if !filepath.IsAbs(path) {
		return
	}
	path = filepath.Clean(path)
	if fi, err := os.Stat(path); err != nil || fi.IsDir() != dir {
		return
	}
	if slices.ContainsFunc(f.rules, func(r Rule) bool { return r.Path == path }) {
		return
	}
	f.rules = append(f.rules, Rule{Access: a, Target: t, Path: path, Why: why})
}

func (f *finder) tree(a profile.Access, path, why string) { f.add(a, profile.Subpath, path, why, true) }
func (f *finder) file(a profile.Access, path, why string) {
	f.add(a, profile.Literal, path, why, false)
}

// prefixOf grants the installation prefix of the program name found on
// PATH (the directory above its real bin directory), unless that is a
// system prefix the base already covers or would open wide (/, /usr,
// /usr/local).
func (f *finder) prefixOf(name, why string) {
	path, err := lookPath(name, f.getenv("PATH"))
	if err != nil {
		return
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	prefix := filepath.Dir(filepath.Dir(real))
	switch prefix {
	case "/", "/usr", "/usr/local", "/opt", filepath.Clean(f.home):
		return
	}
	f.tree(exe, prefix, why)
}

// tls grants what TLS clients read beyond the base's CA certificates:
// OpenSSL's configuration and the files SSL_CERT_FILE and SSL_CERT_DIR
// name.
func (f *finder) tls() {
	f.file(read, "/etc/ssl/openssl.cnf", "OpenSSL's configuration (node, curl, Python's ssl)")
	f.file(read, f.getenv("SSL_CERT_FILE"), "$SSL_CERT_FILE")
	f.tree(read, f.getenv("SSL_CERT_DIR"), "$SSL_CERT_DIR")
}

// lookPath finds name in the directory list path, as exec.LookPath does
// with $PATH, but from the given list, so Rules depends only on getenv.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func firstList(list string) string {
	for _, d := range filepath.SplitList(list) {
		if filepath.IsAbs(d) {
			return d
		}
	}
	return ""
}

// orHome is env if absolute, else def, joined with sub.
func orHome(env, def, sub string) string {
	dir := def
	if filepath.IsAbs(env) {
		dir = env
	}
	return joinIf(dir, sub)
}

func joinIf(dir string, elem ...string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}
