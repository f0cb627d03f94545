package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
)

// Reference states, directly from the typed policy, whether it intends to
// allow access a, and why. It does not look at the lowered profile, so
// comparing it with Decide(Lower(p, env).Profile, a) tests the lowering.
// In order:
//
//  0. run marker: for a forking policy with the marker parameters bound in
//     a.Params, mach-lookup of the run's marker is allowed and of any other
//     name with the run prefix denied (the marker block is the profile's
//     last word on those names);
//  1. hard-deny: a rule of a class the policy does not waive
//     ([seatbelt.HardDenyRules] with env.Home) whose operations cover the
//     access and whose filters match denies it;
//  2. exec target only: with [profile.ExecTargetOnly], executing anything
//     but the target bound in a.Params is denied (an unbound target
//     matches nothing), the #! interpreter check included;
//  3. the Seatbelt layer: if one of the policy's Seatbelt rules (paths
//     resolved through env.Resolved) applies, the most specific, last one
//     decides (it comes after the policy's own rules), except that a
//     default rule does not reopen the operations the header denies by
//     name (process-info*, nvram*, iokit-get-properties,
//     file-map-executable);
//  4. the policy's grants allow it: filesystem rules on the resolved path
//     (read = file-read*, write adds file-write*, exec adds process-exec*
//     and file-map-executable), metadata of their ancestors, of env.Links
//     and [seatbelt.RootLinks], the network mode, Unix sockets, Mach names
//     and fork;
//  5. otherwise the base decides: the header and base of a policy with no
//     rules and every class waived, as lowered by [seatbelt.Lower]. The
//     base is shared data: the comparison targets the layering, ordering,
//     specificity expansion, resolution and marker logic of Lower, not the
//     base's contents.
//
// An access the simulator cannot evaluate (an unsupported filter in a rule
// that applies) is reported as not allowed, with the error in why.
func Reference(p profile.Policy, env profile.Env, a Access) (allowed bool, why string) {
	return Default.Reference(p, env, a)
}

// Reference is [Reference] with the Seatbelt layer and the base decided
// under v; the hard-deny classes, the exec target and the policy's grants
// state an intent no reading of Seatbelt changes. A class rule naming
// file-link or file-clone denies a link whose new name or source it
// matches.
func (v Variant) Reference(p profile.Policy, env profile.Env, a Access) (allowed bool, why string) {
	ok, why, err := v.reference(p, env, a)
	if err != nil {
		return false, "error: " + err.Error()
	}
	return ok, why
}

// reference is Reference under [Default], with errors returned.
func reference(p profile.Policy, env profile.Env, a Access) (bool, string, error) {
	return Default.reference(p, env, a)
}

func (v Variant) reference(p profile.Policy, env profile.Env, a Access) (bool, string, error) {
	if err := checkOp(&a.Op); err != nil {
		return false, "", err
	}

	// 0. The run marker (docs/macos-backend.md, "Finding a run's processes").
	if p.Forking() && a.Op == "mach-lookup" && a.Name != "" {
		if m, ok := a.Params[seatbelt.ParamRunMarker]; ok && a.Name == m {
			return true, "the run's marker", nil
		}
		if pre, ok := a.Params[seatbelt.ParamRunPrefix]; ok && strings.HasPrefix(a.Name, pre) {
			return false, "another run's marker prefix", nil
		}
	}

	// 1. Hard-deny classes: each rule on its own, effect deny.
	for _, c := range profile.Classes() {
		if p.Waived(c) {
			continue
		}
		for _, r := range hardDeny(c, env.Home) {
			if !slices.ContainsFunc(r.Ops, func(op string) bool { return sbpl.Covers(op, a.Op) }) {
				continue
			}
			t, why, err := ruleMatch(&r, &access{Access: a})
			if t == no && a.Source != "" && (a.Op == "file-link" || a.Op == "file-clone") {
				src := a
				src.Path = a.Source
				t, why, err = ruleMatch(&r, &access{Access: src})
			}
			if err == nil && t == maybe {
				err = why
			}
			if err != nil {
				return false, "", fmt.Errorf("hard-deny class %s: %w", c, err)
			}
			if t == yes {
				text, _ := r.Text()
				return false, fmt.Sprintf("hard-deny class %s: %s", c, text), nil
			}
		}
	}

	if a.Source != "" && (a.Op == "file-link" || a.Op == "file-clone") {
		// Below the classes, each path of a link is decided on its own,
		// and v says which are checked.
		dst, src := a, a
		dst.Source, src.Path, src.Source = "", a.Source, ""
		switch v.Link {
		case LinkDestination:
			return v.layers(p, env, dst)
		case LinkSource:
			return v.layers(p, env, src)
		}
		ok, why, err := v.layers(p, env, dst)
		if err != nil || !ok {
			return ok, why, err
		}
		return v.layers(p, env, src)
	}
	return v.layers(p, env, a)
}

// layers is the reference below the hard-deny classes (steps 2 to 5).
func (v Variant) layers(p profile.Policy, env profile.Env, a Access) (bool, string, error) {
	resolve := func(path string) string {
		if r, ok := env.Resolved[path]; ok {
			return r
		}
		return path
	}

	// 2. Exec target only: the policy's last word on exec, before the
	// caller's Seatbelt rules could allow more.
	if p.ExecTargetOnly() && sbpl.Covers("process-exec*", a.Op) {
		target, bound := a.Params[seatbelt.ParamExecTarget]
		if !bound || !matchLiteral(target, a.Path) {
			return false, "exec target only: not the spawn's target", nil
		}
		// The target itself: the layers below decide.
	}

	// 3. The Seatbelt layer, among itself.
	if rules := p.SeatbeltRules(); len(rules) > 0 {
		for i := range rules {
			rules[i] = rules[i].MapPaths(resolve)
		}
		d, err := v.Decide(&sbpl.Profile{Version: 1, Rules: rules}, a)
		if err != nil {
			return false, "", fmt.Errorf("seatbelt layer: %w", err)
		}
		// A default rule there does not reopen what the header denies by
		// name: under every reading a named rule outranks a default one.
		if d.Rule >= 0 && !(d.Default && isDefaultOpen(a.Op)) {
			return d.Allowed, "seatbelt layer: " + d.Text, nil
		}
	}

	// 4. The policy's own grants.
	if why := grants(p, env, resolve, &a); why != "" {
		return true, why, nil
	}

	// 5. The base.
	base, err := baseProfile(p.Base())
	if err != nil {
		return false, "", err
	}
	d, err := v.Decide(base, a)
	if err != nil {
		return false, "", fmt.Errorf("base: %w", err)
	}
	return d.Allowed, "base: " + d.String(), nil
}

// grants returns why the policy's own rules allow a, or "".
func grants(p profile.Policy, env profile.Env, resolve func(string) string, a *Access) string {
	covers := func(ops ...string) bool {
		return slices.ContainsFunc(ops, func(op string) bool { return sbpl.Covers(op, a.Op) })
	}
	for _, r := range p.FSRules() {
		path := resolve(r.Path)
		ops := []string{"file-read*"}
		if r.Access&profile.AccessWrite != 0 {
			ops = append(ops, "file-write*")
		}
		if r.Access&profile.AccessExec != 0 {
			ops = append(ops, "process-exec*", "file-map-executable")
		}
		if a.Path == "" || !covers(ops...) {
			continue
		}
		if (r.Target == profile.Subpath && matchSubpath(path, a.Path)) || (r.Target == profile.Literal && matchLiteral(path, a.Path)) {
			return fmt.Sprintf("policy: %s (as %s)", r, path)
		}
	}
	if a.Op == "file-read-metadata" && a.Path != "" {
		for _, r := range p.FSRules() {
			if path := resolve(r.Path); matchAncestors(path, a.Path) {
				return "policy: metadata of an ancestor of " + path
			}
		}
		for _, l := range append(slices.Clone(env.Links), seatbelt.RootLinks...) {
			if matchLiteral(l, a.Path) {
				return "links: metadata of the link " + l
			}
		}
	}

	mode, ports := p.Network()
	ip := a.Addr != "" && !strings.HasPrefix(a.Addr, "/")
	switch mode {
	case profile.NetworkLoopback:
		if ip && covers("network-outbound", "network-bind", "network-inbound") {
			if ep, err := parseEndpoint(a.Addr); err == nil && ep.loopback && (slices.Equal(ports, []int{profile.AnyPort}) || slices.Contains(ports, ep.port)) {
				return "policy: network loopback"
			}
		}
		if a.Op == "system-socket" && (a.SocketDomain == socketDomains["AF_INET"] || a.SocketDomain == socketDomains["AF_INET6"]) {
			return "policy: network loopback creates IP sockets"
		}
	case profile.NetworkProxy:
		// The run's proxy by TCP on its localhost port, and TLS trust for
		// the tunnels; no DNS, no UDP, no listening.
		if a.Op == "network-outbound" && ip && (a.Proto == "" || a.Proto == "tcp") {
			if ep, err := parseEndpoint(a.Addr); err == nil && ep.loopback && ep.port == env.ProxyPort {
				return "policy: network proxy reaches the run's proxy"
			}
		}
		if a.Op == "system-socket" && (a.SocketDomain == socketDomains["AF_INET"] || a.SocketDomain == socketDomains["AF_INET6"]) {
			return "policy: network proxy creates IP sockets"
		}
		if a.Op == "mach-lookup" && slices.Contains(proxyMach, a.Name) {
			return "policy: network proxy evaluates trust"
		}
		if a.Path != "" && covers("file-read*") && matchSubpath("/private/etc/ssl", a.Path) {
			return "policy: network proxy reads CA certificates"
		}
	case profile.NetworkOn:
		// Network on is any IP host plus name resolution and TLS trust
		// (Nix, agent-safehouse, Codex network policy).
		// Localhost only on the named ports; listening on localhost unless
		// the policy asks for every interface (issue 12).
		if ip && covers("network-outbound") {
			if ep, err := parseEndpoint(a.Addr); err == nil && (!ep.loopback || slices.Equal(ports, []int{profile.AnyPort}) || slices.Contains(ports, ep.port)) {
				return "policy: network on"
			}
		}
		if ip && covers("network-bind", "network-inbound") {
			if ep, err := parseEndpoint(a.Addr); err == nil && (ep.loopback || p.ListensAnyInterface()) {
				return "policy: network on listens"
			}
		}
		if a.Op == "system-socket" && (a.SocketDomain == socketDomains["AF_INET"] || a.SocketDomain == socketDomains["AF_INET6"]) {
			return "policy: network on creates IP sockets"
		}
		if a.Op == "mach-lookup" && slices.Contains(networkOnMach, a.Name) {
			return "policy: network on resolves names and evaluates trust"
		}
		if a.Op == "network-outbound" && strings.HasPrefix(a.Addr, "/") && matchLiteral("/private/var/run/mDNSResponder", a.Addr) {
			return "policy: network on reaches the DNS resolver"
		}
		if a.Path != "" && covers("file-read*") {
			for _, f := range networkOnFiles {
				if matchLiteral(f, a.Path) {
					return "policy: network on reads resolver configuration"
				}
			}
			if matchSubpath("/private/etc/ssl", a.Path) {
				return "policy: network on reads CA certificates"
			}
		}
	}

	for _, s := range p.UnixSockets() {
		path := resolve(s)
		if (a.Op == "network-outbound" || a.Op == "network-bind") && strings.HasPrefix(a.Addr, "/") && matchLiteral(path, a.Addr) {
			return "policy: Unix socket " + path
		}
		if a.Path != "" && covers("file-read*", "file-write*") && matchLiteral(path, a.Path) {
			return "policy: the Unix socket file " + path
		}
	}
	if len(p.UnixSockets()) > 0 && a.Op == "system-socket" && a.SocketDomain == socketDomains["AF_UNIX"] {
		return "policy: Unix sockets"
	}
	if a.Op == "mach-lookup" && slices.Contains(p.MachServices(), a.Name) {
		return "policy: Mach service " + a.Name
	}
	if a.Op == "process-fork" && p.Forking() {
		return "policy: fork"
	}
	return ""
}

var (
	networkOnMach = []string{
		"com.apple.dnssd.service", "com.apple.SystemConfiguration.DNSConfiguration",
		"com.apple.SystemConfiguration.configd", "com.apple.trustd", "com.apple.trustd.agent",
	}
	proxyMach      = []string{"com.apple.trustd", "com.apple.trustd.agent"}
	networkOnFiles = []string{"/private/etc/hosts", "/private/etc/resolv.conf", "/private/var/run/resolv.conf"}
)

var hardDenyCache sync.Map // [2]string{class, home} -> []sbpl.Rule

// hardDeny returns seatbelt.HardDenyRules(c, home), computed once; the
// rules are a pure function of their arguments.
func hardDeny(c profile.Class, home string) []sbpl.Rule {
	key := [2]string{string(c), home}
	if v, ok := hardDenyCache.Load(key); ok {
		return v.([]sbpl.Rule)
	}
	rules := seatbelt.HardDenyRules(c, home)
	hardDenyCache.Store(key, rules)
	return rules
}

var baseCache sync.Map // profile.Base -> *sbpl.Profile

// baseProfile is the header and base layers (and the root links) of base b.
func baseProfile(b profile.Base) (*sbpl.Profile, error) {
	if v, ok := baseCache.Load(b); ok {
		return v.(*sbpl.Profile), nil
	}
	p, err := profile.New(b, profile.Waive(profile.Classes()...))
	if err != nil {
		return nil, fmt.Errorf("sim: base %s: %w", b, err)
	}
	plan, err := seatbelt.Lower(p, profile.Env{})
	if err != nil {
		return nil, fmt.Errorf("sim: base %s: %w", b, err)
	}
	baseCache.Store(b, plan.Profile)
	return plan.Profile, nil
}
