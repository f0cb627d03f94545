package cage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"slices"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// Cage is a prepared policy: paths resolved and lowered for one backend
// ([WithBackend]; by default the host's), and, on the OS that enforces
// that backend, made ready to spawn. It is safe for concurrent use and can
// start any number of processes. [Cage.Close] removes what its runs share
// (the preset caches, [WithPresets]); a cage without presets holds
// nothing that needs it.
type Cage struct {
	policy    profile.Policy
	cfg       config
	resolver  *pathresolve.Resolver
	home      string
	zdotdir   string // zsh's $ZDOTDIR, kernel spelling; "" = unset
	xdgConfig string // $XDG_CONFIG_HOME, kernel spelling; "" = unset
	// protectedAt maps a hard-deny table path that is a link to its
	// kernel spelling.
	protectedAt map[string]string
	trees       []pathresolve.Tree // the policy's subpath trees, kernel spelling
	rewrites    []pathresolve.Rewrite
	planned     planned
	be          backend
	runs        runs // counted for Close, with the preset caches

	// Only during New.
	resolvedMap map[string]string
	links       []string
}

// New prepares a cage for policy:
//
//  1. for the host's backend, it refuses with [ErrAlreadySandboxed] if the
//     caller is already confined in a way a cage cannot nest in (macOS: any
//     Seatbelt profile);
//  2. it resolves every policy path, and the user's home directory, to the
//     spelling the kernel matches and records each rewrite ([Cage.Rewrites]);
//     for the macOS backend an allow-type rule on a case-sensitive volume
//     is refused ([ErrCaseSensitive]);
//  3. it lowers the policy for its backend ([Cage.Plan]); for macOS, more
//     rules than the compile limit is refused ([ErrTooManyRules]);
//  4. for the host's backend it prepares what every spawn reuses: on macOS
//     it compiles the profile once and caches the bytecode (a profile
//     libsandbox rejects is refused, [ErrProfileRejected]); a forking or
//     ExecTargetOnly policy, or a private temporary directory, binds
//     per-spawn parameters, and a proxy-mode policy names its run's proxy
//     port, so it is compiled on each spawn instead (the first compile
//     happens here, with placeholders, to report errors early).
//
// A cage for another OS's backend does steps 2 and 3 only, so a plan can
// be inspected anywhere; spawning from it fails with an [*UnsupportedError].
// So does a cage made with [PlanOnly], whose plan may also list gaps it
// refuses.
func New(policy profile.Policy, opts ...Option) (*Cage, error) {
	var cfg config
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&cfg); err != nil {
			return nil, err
		}
	}
	if policy.Base() == 0 {
		return nil, errors.New("cage: zero profile.Policy")
	}
	policy, err := cfg.withPresets(policy)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.backend != 0:
	case cfg.compiler != nil:
		// A test's Seatbelt compiler (export_test.go) means a macOS plan.
		cfg.backend = BackendMacOS
	default:
		cfg.backend = hostBackend
	}
	host := hostHasBackend && cfg.backend == hostBackend && !cfg.planOnly

	sandboxed := cfg.sandboxed
	if sandboxed == nil && host {
		sandboxed = hostSandboxed
	}
	if sandboxed != nil {
		if is, err := sandboxed(); err != nil {
			return nil, err
		} else if is {
			return nil, ErrAlreadySandboxed
		}
	}

	c := &Cage{policy: policy, cfg: cfg}
	if err := c.resolve(); err != nil {
		return nil, policyError(err)
	}
	env := profile.Env{
		Resolved:      c.resolvedMap,
		Links:         c.links,
		Home:          c.home,
		ZDotDir:       c.zdotdir,
		XDGConfigHome: c.xdgConfig,
		ProtectedAt:   c.protectedAt,
		PrivateTemp:   cfg.privateTemp,
	}
	c.resolvedMap, c.links = nil, nil
	switch cfg.backend {
	case BackendMacOS:
		comp := cfg.compiler
		if comp == nil && host {
			var err error
			if comp, err = seatbeltCompiler(); err != nil {
				return nil, err
			}
		}
		p, err := planSeatbelt(policy, env, cfg.limit, comp)
		if err != nil {
			return nil, policyError(err)
		}
		c.planned = p
	case BackendLinux:
		abi := 0
		onHost := hostHasBackend && cfg.backend == hostBackend && hostBackend == BackendLinux
		if cfg.planOnly && onHost {
			abi = hostLandlockABI()
		}
		tier, noProc, err := cfg.pickTier(onHost && (host || cfg.planOnly))
		if err != nil {
			return nil, err
		}
		p, err := planLinux(policy, env, cfg.accept, abi, tier, noProc)
		if _, gap := errors.AsType[*profile.GapError](err); gap && cfg.planOnly {
			c.planned = p
			c.be = planOnly{b: cfg.backend, refused: policyError(err)}
			return c, nil
		}
		if err != nil {
			return nil, policyError(err)
		}
		c.planned = p
	}

	switch {
	case cfg.planOnly:
		c.be = planOnly{b: cfg.backend}
	case cfg.enforce != nil:
		be, err := cfg.enforce(c, c.planned)
		if err != nil {
			return nil, err
		}
		c.be = be
	case host:
		be, err := hostEnforce(c, c.planned)
		if err != nil {
			return nil, policyError(err)
		}
		c.be = be
	default:
		c.be = planOnly{b: cfg.backend}
	}
	return c, nil
}

// resolve resolves the policy's paths and the home directory, and refuses
// allow-type rules on case-sensitive volumes.
func (c *Cage) resolve() error {
	if c.cfg.fsSet {
		c.resolver = pathresolve.New(c.cfg.fs, pathresolve.WithFirmlinks(c.cfg.firmlinks))
	} else {
		r, err := pathresolve.NewHost()
		if err != nil {
			return err // names its package and path
		}
		c.resolver = r
	}
	home := c.cfg.home
	if home == "" {
		home = c.policy.Home()
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("cage: home directory: %w", err)
		}
		home = h
	}
	allows := map[string]bool{}
	for _, p := range c.policy.AllowPaths() {
		allows[p] = true
	}
	// The refusal protects a cage Seatbelt will enforce: the host's own
	// volumes on macOS, or a simulated macOS view a caller injected. On
	// another OS the host's volumes are not the ones a macOS cage would
	// see, and nothing will be enforced there, so the plan is built anyway.
	// Landlock matches what the kernel opens, so case is no concern there.
	refuseCaseSensitive := c.cfg.backend == BackendMacOS &&
		((hostHasBackend && hostBackend == BackendMacOS) || c.cfg.fsSet)
	c.resolvedMap = map[string]string{}
	links := map[string]bool{}
	results := map[string]pathresolve.Result{}
	inputs := append(c.policy.Paths(), home)
	// zsh reads its startup files from $ZDOTDIR; the user's later shells
	// see the caller's value.
	// Likewise git reads $XDG_CONFIG_HOME/git/config.
	zdot, xdg := envDir("ZDOTDIR"), envDir("XDG_CONFIG_HOME")
	for _, d := range []string{zdot, xdg} {
		if d != "" {
			inputs = append(inputs, d)
		}
	}
	for _, p := range inputs {
		if _, done := c.resolvedMap[p]; done {
			continue
		}
		res, err := c.resolver.Resolve(p)
		if err != nil {
			return err // a *pathresolve.PathError naming the path
		}
		if res.CaseSensitive && allows[p] && refuseCaseSensitive {
			return &pathresolve.CaseSensitiveError{Path: res.Path, Volume: res.Volume}
		}
		c.resolvedMap[p] = res.Path
		results[p] = res
		c.rewrites = append(c.rewrites, res.Rewrites...)
		for _, l := range res.Links {
			links[l] = true
		}
		if p == home {
			c.home = res.Path
		}
		if p == zdot {
			c.zdotdir = res.Path
		}
		if p == xdg {
			c.xdgConfig = res.Path
		}
	}
	for l := range links {
		c.links = append(c.links, l)
	}
	slices.Sort(c.links)
	// A protected store may itself be a link (a dotfile manager's ~/.aws
	// -> ~/dotfiles/aws): its target is protected too.
	placed := profile.Env{Home: c.home, ZDotDir: c.zdotdir, XDGConfigHome: c.xdgConfig}
	for _, e := range profile.ProtectedTable(runtime.GOOS) {
		pp, ok := e.Place(placed)
		if !ok || pp.Path == "" {
			continue
		}
		if res, err := c.resolver.Resolve(pp.Path); err == nil && res.Path != pp.Path {
			if c.protectedAt == nil {
				c.protectedAt = map[string]string{}
			}
			c.protectedAt[pp.Path] = res.Path
		}
	}
	// A link that could redirect a policy path is refused unless accepted
	// (pathresolve.CheckLinks); the home directory is the caller's own.
	written := map[string]bool{}
	for _, r := range c.policy.FSRules() {
		write := r.Access&profile.AccessWrite != 0
		written[r.Path] = written[r.Path] || write
		if r.Target == profile.Subpath {
			c.trees = append(c.trees, pathresolve.Tree{Path: c.resolvedMap[r.Path], Writable: write})
		}
	}
	c.trees = append(c.trees, seatbeltTrees(c.policy.SeatbeltRules(), c.resolvedMap, written)...)
	for _, p := range c.policy.UnixSockets() {
		written[p] = true // bound and connected to
	}
	for _, p := range c.policy.Paths() {
		if err := pathresolve.CheckLinks(results[p], written[p], c.trees, c.cfg.acceptedLink); err != nil {
			return err
		}
	}
	return nil
}

// Plan returns the plan text of the cage's backend. For macOS it is the
// Seatbelt profile the child applies; for a forking policy the run marker
// appears there as (param "PROCAGE_RUN_MARKER"), bound per spawn, and for
// a proxy-mode policy the proxy's address as "localhost:1"
// (seatbelt.PlaceholderProxyPort), which each spawn's profile replaces
// with its run's port. For
// Linux it is the Landlock ruleset and seccomp rules.
func (c *Cage) Plan() string { return c.planned.text() }

// Backend returns the backend the cage plans for.
func (c *Cage) Backend() Backend { return c.planned.kind() }

// Rewrites returns every rewrite (a symbolic link followed, a firmlink
// replaced on the way to the spelling the kernel matches) made while
// resolving the policy's paths and the home directory, in resolution order
// (policy paths sorted, then home).
func (c *Cage) Rewrites() []pathresolve.Rewrite { return slices.Clone(c.rewrites) }

// Policy returns the policy the cage was built from.
func (c *Cage) Policy() profile.Policy { return c.policy }

// Home returns the kernel spelling of the home directory the hard-deny
// classes protect.
func (c *Cage) Home() string { return c.home }

// String summarises the cage on one line.
func (c *Cage) String() string {
	return fmt.Sprintf("{cage %s; %s %d rules; tty %s; env %s}", c.policy, c.planned.kind(), c.planned.rules(), c.cfg.tty, c.cfg.env)
}

// runPrefix is this process's random marker prefix; every run marker
// starts with it (random per parent process, as in the Rust procage
// crate, https://docs.rs/crate/procage/0.3.1/source/src/macos/lifetime.rs).
var runPrefix = "org.procage.run." + randomHex(8) + "."

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// newMarker returns a fresh run marker: the prefix, this process's pid and
// a random part, so markers are never reused.
func newMarker() string {
	return fmt.Sprintf("%s%d.%s", runPrefix, os.Getpid(), randomHex(12))
}

// siblingName shares the prefix but is no run's marker: a run's processes
// deny it while allowing their marker.
func siblingName() string { return runPrefix + "sibling" }

// envDir returns the caller's environment variable name as a clean
// absolute path, or "" when it is unset or not absolute (the user's later
// shells and git see the caller's value).
func envDir(name string) string {
	d := os.Getenv(name)
	if d == "" {
		return ""
	}
	d = path.Clean(d)
	if pathresolve.CheckAbs(d) != nil {
		return ""
	}
	return d
}
