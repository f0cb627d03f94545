package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/plantext"
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
	// Accepted gaps and the home directory go into the policy, so the one
	// plan --json prints replays as it was made.
	var more []profile.Option
	for _, name := range pf.acceptGaps {
		g, err := profile.ParseGap(name)
		if err != nil {
			return nil, badValuef("--accept-gap %q: not a gap (%s)", name, gapNames())
		}
		more = append(more, profile.AcceptGaps(g))
	}
	if pf.home != "" {
		abs, err := absFlag("--home", trimSlash(pf.home))
		if err != nil {
			return nil, err
		}
		more = append(more, flagged("--home "+shellQuote(abs), profile.Home(abs)))
	}
	if p, err = p.With(more...); err != nil {
		return nil, err
	}
	tier, err := pf.linuxTier()
	if err != nil {
		return nil, err
	}
	opts = append([]cage.Option{cage.WithCompileLimit(pf.limit), cage.WithLinuxTier(tier)}, opts...)
	for _, l := range pf.acceptLinks {
		abs, err := absFlag("--accept-link", l)
		if err != nil {
			return nil, err
		}
		opts = append(opts, cage.AcceptLink(kernelLink(b, abs)))
	}
	opts = append(opts, b.opts...)
	if h := p.Home(); h != "" {
		// After the backend's options: the simulated Mac names its own.
		opts = append(opts, cage.WithHome(h))
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
	var refused []profile.GapPart
	if pe, ok := errors.AsType[*cage.PolicyError](err); ok && pe.Kind == cage.ErrGap {
		// The plan is shown all the same, each gap marked as refused: it
		// is what to review before accepting one.
		refused = pe.Gaps
		c, err = prepare(&pf, fs, b, stderr, cage.PlanOnly())
	}
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		fmt.Fprintf(stderr, "procage plan: warning: run refuses this plan: %s\n", describeGaps(refused))
	}
	if *asJSON {
		return writePlanJSON(stdout, c, b, refused)
	}
	_, err = io.WriteString(stdout, planText(c, b, refused))
	return err
}

// writePlanJSON prints the plan for tools.
func writePlanJSON(stdout io.Writer, c *cage.Cage, b *backend, refused []profile.GapPart) error {
	plan := c.SeatbeltPlan()
	if plan == nil { // another backend's plan, whose text says what it is
		plan = &seatbelt.Plan{Profile: &sbpl.Profile{}}
	}
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
		Refused  []string  `json:"refused_gaps,omitempty"`
		// The port a proxy-mode Seatbelt profile names until each spawn
		// names its run's.
		ProxyPlaceholder int    `json:"proxy_port_placeholder,omitempty"`
		Profile          string `json:"profile"`
	}{Backend: b.name, Home: c.Home(), Policy: c.Policy(), Rewrites: []rewrite{}, Params: append([]string{}, plan.Params...), Rules: plan.NumRules(), Refused: gapList(refused), Profile: c.Plan()}
	if mode, _ := c.Policy().Network(); mode == profile.NetworkProxy && c.SeatbeltPlan() != nil {
		out.ProxyPlaceholder = seatbelt.PlaceholderProxyPort
	}
	for _, r := range c.Rewrites() {
		out.Rewrites = append(out.Rewrites, rewrite{From: r.From, To: r.To, Reason: r.Reason.String(), Via: r.Via})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// planText is the plan as plan prints it: a header of comment lines (the
// rule count, the simulated file system, the rewrites, the parameters,
// the gaps run refuses), then the plan's own text. Every string in the
// header goes through plantext, as the plan's own do, so no path can end
// a comment line: the whole text is a valid profile (macOS), and a Linux
// plan whose every line is a rule or a comment.
func planText(c *cage.Cage, b *backend, refused []profile.GapPart) string {
	var out strings.Builder
	comment := "#" // the Linux plan's
	plan := c.SeatbeltPlan()
	if plan != nil {
		comment = ";"
		fmt.Fprintf(&out, "; procage plan: %d rules\n", plan.NumRules())
	}
	if b.simulated {
		fmt.Fprintf(&out, "%s paths resolved against a simulated macOS file system (home %s)\n", comment, plantext.Word(c.Home()))
	}
	for _, r := range c.Rewrites() {
		fmt.Fprintf(&out, "%s rewrite: %s -> %s (%s %s)\n", comment, plantext.Word(r.From), plantext.Word(r.To), plantext.Word(r.Reason.String()), plantext.Word(r.Via))
	}
	if plan != nil {
		for _, p := range plan.Params {
			fmt.Fprintf(&out, "; parameter bound per spawn: %s\n", plantext.Word(p))
		}
	}
	if note := proxyNote(c); note != "" {
		fmt.Fprintf(&out, "%s %s\n", comment, plantext.Text(note))
	}
	for _, g := range gapList(refused) {
		fmt.Fprintf(&out, "%s procage run refuses this plan: gap %s not accepted (--accept-gap %s accepts it)\n", comment, plantext.Word(g), plantext.Word(g))
	}
	out.WriteString(c.Plan())
	return out.String()
}

// proxyNote says, for a proxy-mode plan, that the proxy's port is chosen
// per run; "" for another network mode.
func proxyNote(c *cage.Cage) string {
	if mode, _ := c.Policy().Network(); mode != profile.NetworkProxy {
		return ""
	}
	if c.SeatbeltPlan() != nil {
		return fmt.Sprintf("egress proxy: its port is chosen when each run starts; this plan names localhost:%d in its place, each spawn's profile the run's port", seatbelt.PlaceholderProxyPort)
	}
	return "egress proxy: its port is chosen when each run starts, the only TCP port the child may connect to"
}

// gapList names the gaps of parts, once each, in report order.
func gapList(parts []profile.GapPart) []string {
	var names []string
	for _, p := range parts {
		if !slices.Contains(names, string(p.Gap)) {
			names = append(names, string(p.Gap))
		}
	}
	return names
}

// gapNames lists the gaps --accept-gap takes.
func gapNames() string {
	var names []string
	for _, g := range profile.Gaps() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}
