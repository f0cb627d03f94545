package cage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"

	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// Rewrite records one step from a policy path as written to the spelling
// the kernel matches (a symbolic link followed, a firmlink replaced).
type Rewrite = pathresolve.Rewrite

// Cage is a prepared policy: paths resolved, profile lowered and (on
// macOS, for a non-forking policy) compiled. It is safe for concurrent use
// and can start any number of processes.
type Cage struct {
	policy   profile.Policy
	cfg      config
	resolver *pathresolve.Resolver
	home     string
	zdotdir  string             // zsh's $ZDOTDIR, kernel spelling; "" = unset
	trees    []pathresolve.Tree // the policy's subpath trees, kernel spelling
	rewrites []Rewrite
	plan     *profile.Plan
	text     string
	comp     compiler // nil off darwin (no libsandbox)
	bytecode []byte   // cached compile of a non-forking policy

	// Only during New.
	resolvedMap map[string]string
	links       []string
}

// New prepares a cage for policy:
//
//  1. on macOS it refuses with [ErrAlreadySandboxed] if the caller is
//     sandboxed;
//  2. it resolves every policy path, and the user's home directory, to the
//     spelling the kernel matches and records each rewrite ([Cage.Rewrites]);
//     an allow-type rule on a case-sensitive volume is a
//     [*CaseSensitiveError];
//  3. it lowers the policy to a Seatbelt profile ([Cage.Plan]); more rules
//     than the compile limit is a [*LimitError];
//  4. on macOS it compiles the profile once and caches the bytecode; a
//     profile libsandbox rejects is a [*CompileError]. A forking policy binds
//     a per-run marker as a profile parameter, so it is compiled on each
//     spawn instead (the first compile happens here, to report errors early).
//
// Off macOS, New does steps 2 and 3 only, so a plan can be inspected
// anywhere; spawning there fails with an [*UnsupportedError].
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
		return nil, errors.New("cage: New on a zero profile.Policy; build policies with profile.New")
	}

	sandboxed := cfg.sandboxed
	if sandboxed == nil {
		sandboxed = platformSandboxed
	}
	if is, err := sandboxed(); err != nil {
		return nil, err
	} else if is {
		return nil, ErrAlreadySandboxed
	}

	c := &Cage{policy: policy, cfg: cfg}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	plan, err := profile.Lower(policy, profile.Env{
		Resolved: c.resolvedMap,
		Links:    c.links,
		Home:     c.home,
		ZDotDir:  c.zdotdir,
		Limit:    cfg.effectiveLimit(),
	})
	if err != nil {
		return nil, fmt.Errorf("cage: %w", err)
	}
	c.plan, c.text = plan, plan.Text()
	c.resolvedMap, c.links = nil, nil

	c.comp = cfg.compiler
	if c.comp == nil {
		if c.comp, err = platformCompiler(); err != nil {
			return nil, err
		}
	}
	if c.comp != nil {
		// A profile with per-spawn parameters (a forking or ExecTargetOnly
		// policy) is compiled with placeholder values here only to report a
		// rejected profile from New rather than from each spawn.
		code, err := c.compile(c.spawnParams("/usr/bin/true", "org.procage.check.run"))
		if err != nil {
			return nil, err
		}
		if len(plan.Params) == 0 {
			c.bytecode = code
		}
	}
	return c, nil
}

// spawnParams binds the plan's per-spawn parameters: the run prefix and
// marker of a forking policy, and the target (kernel spelling) of an
// ExecTargetOnly one. A plan without parameters binds none.
func (c *Cage) spawnParams(target, marker string) []libsandbox.Param {
	var ps []libsandbox.Param
	for _, k := range c.plan.Params {
		v := ""
		switch k {
		case profile.ParamRunPrefix:
			v = runPrefix
		case profile.ParamRunMarker:
			v = marker
		case profile.ParamExecTarget:
			v = target
		}
		ps = append(ps, libsandbox.Param{Key: k, Value: v})
	}
	return ps
}

// compile runs the compiler and maps its error to a *CompileError.
func (c *Cage) compile(params []libsandbox.Param) ([]byte, error) {
	code, err := c.comp.Compile(c.text, params)
	if err != nil {
		if ce, ok := errors.AsType[*libsandbox.CompileError](err); ok {
			return nil, &CompileError{Message: ce.Message}
		}
		return nil, fmt.Errorf("cage: compiling the profile: %w", err)
	}
	return code, nil
}

// resolve resolves the policy's paths and the home directory, and refuses
// allow-type rules on case-sensitive volumes.
func (c *Cage) resolve() error {
	if c.cfg.fsSet {
		c.resolver = pathresolve.New(c.cfg.fs, pathresolve.WithFirmlinks(c.cfg.firmlinks))
	} else {
		r, err := pathresolve.NewHost()
		if err != nil {
			return fmt.Errorf("cage: %w", err)
		}
		c.resolver = r
	}
	home := c.cfg.home
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("cage: finding the home directory the hard-deny classes protect (set it with WithHome): %w", err)
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
	refuseCaseSensitive := hostEnforces || c.cfg.fsSet
	c.resolvedMap = map[string]string{}
	links := map[string]bool{}
	results := map[string]pathresolve.Result{}
	inputs := append(c.policy.Paths(), home)
	// zsh reads its startup files from $ZDOTDIR; the user's later shells
	// see the caller's value.
	zdot := os.Getenv("ZDOTDIR")
	if zdot != "" {
		zdot = path.Clean(zdot)
	}
	if pathresolve.CheckAbs(zdot) != nil {
		zdot = ""
	} else {
		inputs = append(inputs, zdot)
	}
	for _, p := range inputs {
		if _, done := c.resolvedMap[p]; done {
			continue
		}
		res, err := c.resolver.Resolve(p)
		if err != nil {
			return fmt.Errorf("cage: resolving policy path: %w", err)
		}
		if res.CaseSensitive && allows[p] && refuseCaseSensitive {
			return &CaseSensitiveError{Path: res.Path, Volume: res.Volume}
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
	}
	for l := range links {
		c.links = append(c.links, l)
	}
	slices.Sort(c.links)
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

// Plan returns the Seatbelt profile text the cage applies. For a forking
// policy the run marker appears as (param "PROCAGE_RUN_MARKER"), bound per
// spawn.
func (c *Cage) Plan() string { return c.text }

// PlanRules returns the lowered profile in structured form: the rules with
// their layers and comments, and the parameters bound per spawn. The result
// is a copy of the rule list; do not modify the filters it points to.
func (c *Cage) PlanRules() *profile.Plan {
	prof := *c.plan.Profile
	prof.Rules = slices.Clone(prof.Rules)
	return &profile.Plan{Profile: &prof, Params: slices.Clone(c.plan.Params)}
}

// Rewrites returns every rewrite made while resolving the policy's paths
// and the home directory, in resolution order (policy paths sorted, then
// home).
func (c *Cage) Rewrites() []Rewrite { return slices.Clone(c.rewrites) }

// Policy returns the policy the cage was built from.
func (c *Cage) Policy() profile.Policy { return c.policy }

// Home returns the kernel spelling of the home directory the hard-deny
// classes protect.
func (c *Cage) Home() string { return c.home }

// String summarises the cage on one line.
func (c *Cage) String() string {
	return fmt.Sprintf("{cage %s; %d rules; tty %s; env %s}", c.policy, c.plan.Rules(), c.cfg.tty, c.cfg.env)
}

// runPrefix is this process's random marker prefix; every run marker
// starts with it (procage-design.md §4: random per parent process).
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
