package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// prepare builds the cage the policy flags describe for backend b: the same
// path resolution and lowering a caller of package cage gets. Warnings go
// to stderr.
func prepare(pf *policyFlags, fs *flagSet, b *backend, stderr io.Writer, opts ...cage.Option) (*cage.Cage, error) {
	set := setFlags(fs)
	p, err := pf.policy(set)
	if err != nil {
		return nil, err
	}
	var gaps []profile.Gap
	for _, name := range pf.acceptGaps {
		g, err := profile.ParseGap(name)
		if err != nil {
			return nil, badValuef("--accept-gap %q: not a gap (%s)", name, gapNames())
		}
		gaps = append(gaps, g)
	}
	opts = append([]cage.Option{cage.WithCompileLimit(pf.limit), cage.AcceptGaps(gaps...)}, opts...)
	for _, l := range pf.acceptLinks {
		abs, err := absFlag("--accept-link", l)
		if err != nil {
			return nil, err
		}
		opts = append(opts, cage.AcceptLink(kernelLink(b, abs)))
	}
	opts = append(opts, b.opts...)
	if pf.home != "" {
		// After the backend's options: the simulated Mac names its own.
		abs, err := absFlag("--home", pf.home)
		if err != nil {
			return nil, err
		}
		opts = append(opts, cage.WithHome(abs))
	}
	if len(pf.presets) > 0 {
		opts = append(opts, cage.WithPresets(pf.presets...))
	}
	c, err := cage.New(p, opts...)
	if errors.Is(err, cage.ErrTooManyRules) && set["limit"] {
		return nil, &inputError{where: fmt.Sprintf("--limit %d", pf.limit), err: err}
	}
	if err != nil {
		return nil, err
	}
	warn(c, b, fs.Name(), stderr)
	if fs.Name() == "plan" {
		notePresets(stderr, fs.Name(), pf.presets, c.Home())
	}
	return c, nil
}

// kernelLink is the kernel spelling of the symbolic link at p, which
// cage.AcceptLink matches: p's directory resolved, its last element kept
// (resolving that would follow the link itself).
func kernelLink(b *backend, p string) string {
	if b.resolver == nil || p == "/" || !strings.HasPrefix(p, "/") {
		return p
	}
	res, err := b.resolver.Resolve(path.Dir(p))
	if err != nil {
		return p
	}
	return path.Join(res.Path, path.Base(p))
}

// warn prints one line for each policy rule the hard-deny classes override
// entirely, and for write access to the home directory or to /.
func warn(c *cage.Cage, b *backend, cmd string, stderr io.Writer) {
	var prof *sbpl.Profile
	if pr := c.SeatbeltPlan(); pr != nil { // nil: not a Seatbelt plan
		prof = pr.Profile
	}
	home := c.Home()
	for _, r := range c.Policy().FSRules() {
		kernel := r.Path
		if b.resolver != nil {
			if res, err := b.resolver.Resolve(r.Path); err == nil {
				kernel = res.Path
			}
		}
		if r.Access&profile.AccessWrite != 0 && (kernel == "/" || kernel == home) {
			what := "/"
			if kernel == home {
				what = "the home directory " + home
			}
			fmt.Fprintf(stderr, "procage %s: warning: write access to %s: the target may change everything there the hard-deny classes do not protect\n", cmd, what)
		}
		for _, op := range accessOps(r.Access) {
			probes := []string{kernel}
			if r.Target == profile.Subpath {
				probes = append(probes, path.Join(kernel, "procage-probe"))
			}
			if prof != nil && overridden(prof, op, probes) {
				fmt.Fprintf(stderr, "procage %s: warning: the hard-deny classes override the rule %s entirely (procage explain %s %s says which; --waive lifts a class)\n", cmd, r, op, kernel)
				break
			}
		}
	}
}

// accessOps are the concrete operations an access grants, one per access
// bit.
func accessOps(a profile.Access) []string {
	var ops []string
	if a&profile.AccessRead != 0 {
		ops = append(ops, "file-read-data")
	}
	if a&profile.AccessWrite != 0 {
		ops = append(ops, "file-write-data")
	}
	if a&profile.AccessExec != 0 {
		ops = append(ops, "process-exec")
	}
	return ops
}

// overridden reports whether a hard-deny rule decides op on every path.
func overridden(prof *sbpl.Profile, op string, paths []string) bool {
	for _, p := range paths {
		d, err := sim.Decide(prof, sim.Access{Op: op, Path: p, VnodeType: "REGULAR-FILE"})
		if err != nil || d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			return false
		}
	}
	return true
}

func cmdPlan(args []string, stdout, stderr io.Writer) error {
	var pf policyFlags
	fs := newFlagSet("plan", "plan [policy flags] [--backend macos|linux] [--json]", stdout)
	pf.register(fs)
	backendName := registerBackend(fs)
	asJSON := fs.Bool("json", false, "print a JSON object (policy, rewrites, params, rules, profile) instead of SBPL text")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (paths go after --read, --write or --exec)", fs.Arg(0))
	}
	b, err := newBackend(*backendName)
	if err != nil {
		return err
	}
	c, err := prepare(&pf, fs, b, stderr)
	if err != nil {
		return err
	}
	plan := c.SeatbeltPlan()
	isSeatbelt := plan != nil // else another backend's plan, whose text says what it is
	if !isSeatbelt {
		plan = &seatbelt.Plan{Profile: &sbpl.Profile{}}
	}
	if *asJSON {
		type rewrite struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Reason string `json:"reason"`
			Via    string `json:"via,omitempty"`
		}
		out := struct {
			Backend  string    `json:"backend"`
			Home     string    `json:"home"`
			Policy   any       `json:"policy"`
			Rewrites []rewrite `json:"rewrites"`
			Params   []string  `json:"params"`
			Rules    int       `json:"rules"`
			Profile  string    `json:"profile"`
		}{Backend: b.name, Home: c.Home(), Policy: c.Policy(), Rewrites: []rewrite{}, Params: append([]string{}, plan.Params...), Rules: plan.NumRules(), Profile: c.Plan()}
		for _, r := range c.Rewrites() {
			out.Rewrites = append(out.Rewrites, rewrite{From: r.From, To: r.To, Reason: r.Reason.String(), Via: r.Via})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	// Rewrites are SBPL comments, so the whole output is a valid profile.
	if isSeatbelt {
		fmt.Fprintf(stdout, "; procage plan: %d rules\n", plan.NumRules())
	}
	if b.simulated {
		fmt.Fprintf(stdout, "; paths resolved against a simulated macOS file system (home %s)\n", c.Home())
	}
	for _, r := range c.Rewrites() {
		fmt.Fprintf(stdout, "; rewrite: %s -> %s (%s %s)\n", r.From, r.To, r.Reason, r.Via)
	}
	for _, p := range plan.Params {
		fmt.Fprintf(stdout, "; parameter bound per spawn: %s\n", p)
	}
	_, err = io.WriteString(stdout, c.Plan())
	return err
}

// gapNames lists the gaps --accept-gap takes.
func gapNames() string {
	var names []string
	for _, g := range profile.Gaps() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}
