package cage

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
)

// compiler is the part of libsandbox a cage compiles with; tests replace it
// with a counting fake.
type compiler interface {
	Compile(text string, params []libsandbox.Param) ([]byte, error)
}

// seatbeltPlan is the macOS backend's plan: the lowered profile and, where
// a compiler exists (libsandbox on macOS, a test's fake elsewhere), the
// compiled bytecode of a profile without per-spawn parameters.
//
// A proxy-mode policy's profile names the run's proxy port, chosen when
// the run starts: plan is then lowered with seatbelt.PlaceholderProxyPort,
// for Plan to show and New to check, and each spawn lowers the policy
// again with its run's port (lowerFor) and compiles that.
type seatbeltPlan struct {
	plan     *seatbelt.Plan
	txt      string
	comp     compiler // nil: plan only
	bytecode []byte   // cached compile of a profile without parameters

	// proxy mode only: what each spawn lowers again.
	proxy  bool
	policy profile.Policy
	env    profile.Env
	limit  int
}

func (p *seatbeltPlan) kind() Backend { return BackendMacOS }
func (p *seatbeltPlan) text() string  { return p.txt }
func (p *seatbeltPlan) rules() int    { return p.plan.NumRules() }

// planSeatbelt lowers the policy to a Seatbelt profile and, with a
// compiler, compiles it once: a profile with per-spawn parameters (a
// forking or ExecTargetOnly policy, a private temporary directory) or a
// proxy port is compiled here with placeholder values only to report a
// rejected profile from New rather than from each spawn.
func planSeatbelt(policy profile.Policy, env profile.Env, limit int, comp compiler) (*seatbeltPlan, error) {
	proxy := false
	if mode, _ := policy.Network(); mode == profile.NetworkProxy {
		proxy = true
		env.ProxyPort = seatbelt.PlaceholderProxyPort
	}
	plan, err := lowerSeatbelt(policy, env, limit)
	if err != nil {
		return nil, err
	}
	p := &seatbeltPlan{plan: plan, txt: plan.Text(), comp: comp, proxy: proxy}
	if proxy {
		p.policy, p.env, p.limit = policy, env, limit
	}
	if comp == nil {
		return p, nil
	}
	code, err := p.compile(p.txt, p.spawnParams("/usr/bin/true", "org.procage.check.run", "/private/tmp/procage-run-check"))
	if err != nil {
		return nil, err
	}
	if len(plan.Params) == 0 && !proxy {
		p.bytecode = code
	}
	return p, nil
}

func lowerSeatbelt(policy profile.Policy, env profile.Env, limit int) (*seatbelt.Plan, error) {
	plan, err := seatbelt.LowerLimit(policy, env, limit)
	if le, ok := errors.AsType[*seatbelt.LimitError](err); ok {
		return nil, &PolicyError{Kind: ErrTooManyRules, Err: le}
	}
	return plan, err
}

// lowerFor returns the profile text of one spawn: the plan's, or for a
// proxy-mode policy the policy lowered again with the run's proxy port.
// A proxy-mode spawn without a port is refused: the placeholder profile
// is never applied.
func (p *seatbeltPlan) lowerFor(proxyPort int) (string, error) {
	if !p.proxy {
		return p.txt, nil
	}
	if proxyPort == 0 {
		return "", errors.New("cage: BUG: a proxy-mode spawn without its run's proxy")
	}
	env := p.env
	env.ProxyPort = proxyPort
	plan, err := lowerSeatbelt(p.policy, env, p.limit)
	if err != nil {
		return "", err
	}
	return plan.Text(), nil
}

// code returns the bytecode for one spawn: the cached compile, or a
// compile binding this spawn's parameters (the compiler consumes them)
// and, in proxy mode, naming its run's proxy port.
func (p *seatbeltPlan) code(target, marker, temp string, proxyPort int) ([]byte, error) {
	if len(p.plan.Params) == 0 && !p.proxy {
		if len(p.bytecode) == 0 {
			return nil, errors.New("cage: no compiled profile")
		}
		return p.bytecode, nil
	}
	txt, err := p.lowerFor(proxyPort)
	if err != nil {
		return nil, err
	}
	return p.compile(txt, p.spawnParams(target, marker, temp))
}

// spawnParams binds the plan's per-spawn parameters: the run prefix and
// marker of a forking policy, the target (kernel spelling) of an
// ExecTargetOnly one, and the private temporary directory. A plan without
// parameters binds none.
func (p *seatbeltPlan) spawnParams(target, marker, temp string) []libsandbox.Param {
	var ps []libsandbox.Param
	for _, k := range p.plan.Params {
		v := ""
		switch k {
		case seatbelt.ParamRunPrefix:
			v = runPrefix
		case seatbelt.ParamRunMarker:
			v = marker
		case seatbelt.ParamExecTarget:
			v = target
		case seatbelt.ParamPrivateTemp:
			v = temp
		}
		ps = append(ps, libsandbox.Param{Key: k, Value: v})
	}
	return ps
}

// compile runs the compiler and maps a rejection to a *PolicyError (ErrProfileRejected).
func (p *seatbeltPlan) compile(txt string, params []libsandbox.Param) ([]byte, error) {
	code, err := p.comp.Compile(txt, params)
	if err != nil {
		if ce, ok := errors.AsType[*libsandbox.CompileError](err); ok {
			return nil, &PolicyError{Kind: ErrProfileRejected, Err: errors.New("libsandbox rejected the profile: " + ce.Message)}
		}
		return nil, fmt.Errorf("cage: compiling the profile: %w", err)
	}
	return code, nil
}

// SeatbeltPlan returns, for a macOS-backend cage, the lowered Seatbelt
// profile in structured form: the rules with their layers and comments,
// and the parameters bound per spawn. It returns nil for another backend.
// The result is a copy of the rule list; do not modify the filters it
// points to.
func (c *Cage) SeatbeltPlan() *seatbelt.Plan {
	sp, ok := c.planned.(*seatbeltPlan)
	if !ok {
		return nil
	}
	prof := *sp.plan.Profile
	prof.Rules = slices.Clone(prof.Rules)
	return &seatbelt.Plan{Profile: &prof, Params: slices.Clone(sp.plan.Params)}
}

// seatbeltTrees returns the trees the Seatbelt layer's allows grant, and
// marks in written each path an allow lets the child write: a child plants
// a link in such a tree as in a policy tree. A prefix counts as the tree of
// its directory (it also matches siblings sharing the prefix); a regex names
// no tree and is not counted.
func seatbeltTrees(rules []sbpl.Rule, resolved map[string]string, written map[string]bool) []pathresolve.Tree {
	var trees []pathresolve.Tree
	for _, r := range rules {
		if r.Effect != sbpl.Allow {
			continue
		}
		write := slices.ContainsFunc(r.Ops, func(op string) bool { return op != "default" && sbpl.Covers(op, "file-write-create") })
		var walk func(f *sbpl.Filter)
		walk = func(f *sbpl.Filter) {
			for _, a := range f.Args {
				switch v := a.(type) {
				case *sbpl.Filter:
					walk(v)
				case sbpl.Str:
					if !sbpl.IsPathFilter(f.Name) {
						continue
					}
					arg := string(v)
					written[arg] = written[arg] || write
					res, ok := resolved[arg]
					switch {
					case !ok:
					case f.Name == "subpath":
						trees = append(trees, pathresolve.Tree{Path: res, Writable: write})
					case f.Name == "prefix" || f.Name == "path-prefix":
						trees = append(trees, pathresolve.Tree{Path: path.Dir(res), Writable: write})
					}
				}
			}
		}
		for _, f := range r.Filters {
			walk(f)
		}
	}
	return trees
}
