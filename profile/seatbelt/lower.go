package seatbelt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// DefaultLimit is the largest number of rules a profile may have unless
// the caller sets another ([LowerLimit]): libsandbox aborts its caller on
// very large profiles (NixOS/nix#2311; "exceeds maximum (65535)" in
// status-im/status-legacy#16353), so the count is checked before compiling.
const DefaultLimit = 2000

// Parameter names bound per spawn: a forking policy's run-marker block,
// the target of an ExecTargetOnly policy, and the private temporary
// directory ([profile.Env] PrivateTemp).
const (
	ParamRunPrefix   = "PROCAGE_RUN_PREFIX"   // random per parent process
	ParamRunMarker   = "PROCAGE_RUN_MARKER"   // unique per run, starts with the prefix
	ParamExecTarget  = "PROCAGE_EXEC_TARGET"  // the target's path, kernel spelling
	ParamPrivateTemp = "PROCAGE_PRIVATE_TEMP" // the run's private temporary directory, kernel spelling
)

// Layer names, in the order they appear in a lowered profile.
const (
	LayerHeader   = "header"
	LayerBase     = "base"
	LayerPolicy   = "policy"
	LayerLinks    = "links"
	LayerSeatbelt = "seatbelt"
	LayerTemp     = "private-temp"
	LayerExec     = "exec-target-only"
	LayerHardDeny = "hard-deny"
	LayerMarker   = "run-marker"
)

// Grant extension classes named by every profile, so paths bound per
// spawn as sandbox extensions are usable: a consumed token grants nothing
// unless the profile names its class [confirmed: Chromium
// seatbelt_extension_unittest.cc].
const (
	ExtensionRead      = "com.apple.app-sandbox.read"
	ExtensionReadWrite = "com.apple.app-sandbox.read-write"
)

// RootLinks are the symbolic links at the root of a macOS system volume;
// metadata on them is always allowed so grants bound later resolve
// [confirmed: the Rust procage 0.7.0's path canonicalisation].
var RootLinks = []string{"/etc", "/tmp", "/var"}

// ErrProxyPort is wrapped by the error for lowering a NetworkProxy policy
// without the port of the run's proxy (profile.Env.ProxyPort): the profile
// names it, so such a policy is lowered when the run's proxy has started.
var ErrProxyPort = errors.New("seatbelt: network proxy mode needs the proxy's port (profile.Env.ProxyPort, 1..65535)")

// PlaceholderProxyPort is the port to lower a NetworkProxy policy with
// before its run, for a plan to show and check (procage plan, cage.New):
// the run's proxy chooses its port when the run starts, and each spawn
// lowers the policy again with it. Port 1 (tcpmux, RFC 1078) is served
// nowhere in practice, so a placeholder profile applied as printed
// reaches no proxy and nothing else.
const PlaceholderProxyPort = 1

// Plan is a lowered policy: the profile and what must be bound per spawn.
type Plan struct {
	Profile *sbpl.Profile
	// Params are parameters each spawn binds (the run marker of a
	// forking policy); a plan with parameters is compiled per spawn.
	Params []string
}

// Text returns the profile's SBPL source.
func (p *Plan) Text() string {
	s, err := p.Profile.Text()
	if err != nil {
		// Lowering quotes every string before building the plan.
		panic("seatbelt: BUG: lowered profile does not write: " + err.Error())
	}
	return s
}

// NumRules returns the number of rules in the profile.
func (p *Plan) NumRules() int { return len(p.Profile.Rules) }

// LimitError reports a profile with more rules than the limit. Merge paths
// into fewer subpath rules, or raise the limit.
type LimitError struct{ Rules, Limit int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("seatbelt: the profile has %d rules, more than the compile limit of %d", e.Rules, e.Limit)
}

// Lower turns a policy into a Seatbelt profile, in layers: header
// ((version 1), (deny default) and what the child still needs after the
// profile is applied), base, the policy's own rules, link metadata,
// Seatbelt-layer rules, for runs with a private temporary directory the
// exec grant on it, the hard-deny classes, and for a forking policy the
// run-marker block. The output is deterministic. A profile of more than
// [DefaultLimit] rules is a [*LimitError].
func Lower(p profile.Policy, env profile.Env) (*Plan, error) {
	return LowerLimit(p, env, DefaultLimit)
}

// LowerLimit is [Lower] with another largest rule count than
// [DefaultLimit]; 0 means DefaultLimit.
func LowerLimit(p profile.Policy, env profile.Env, limit int) (*Plan, error) {
	// New accepts only known bases, so only the zero Policy has none.
	if p.Base() == 0 {
		return nil, fmt.Errorf("seatbelt: Lower on a zero Policy")
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	fs, seatbelt := p.FSRules(), p.SeatbeltRules()
	resolve := func(path string) string {
		if r, ok := env.Resolved[path]; ok {
			return r
		}
		return path
	}

	rules := make([]sbpl.Rule, 0, len(fs)+len(seatbelt)+128)
	add := func(layer string, rs ...sbpl.Rule) {
		for _, r := range rs {
			r.Layer = layer
			rules = append(rules, r)
		}
	}
	add(LayerHeader, headerRules()...)
	add(LayerBase, baseRules(p.Base())...)
	if mode, _ := p.Network(); mode == profile.NetworkProxy && (env.ProxyPort < 1 || env.ProxyPort > 65535) {
		return nil, fmt.Errorf("%w (have %d)", ErrProxyPort, env.ProxyPort)
	}
	add(LayerPolicy, policyRules(p, fs, resolve, env.ProxyPort)...)
	add(LayerLinks, linkRules(env.Links)...)
	// A Seatbelt-layer deny must win over the layers before it, so it names
	// their specific operations too; among its own layer the caller's
	// order and specificity stand.
	allowed := allowedOps(rules)
	seatbeltStart := len(rules)
	for _, r := range seatbelt {
		r = r.MapPaths(resolve)
		if r.Effect == sbpl.Deny {
			r.Ops = withSpecific(r.Ops, allowed)
		}
		add(LayerSeatbelt, r)
	}
	if err := checkUnfiltered(rules, seatbeltStart, seatbeltStart); err != nil {
		return nil, err
	}
	var params []string
	if env.PrivateTemp {
		// After the Seatbelt layer (its denies win over the policy only)
		// and before exec-target-only and the hard-deny tier, whose denies
		// win over it.
		add(LayerTemp, privateTempRules()...)
		params = append(params, ParamPrivateTemp)
	}
	if p.ExecTargetOnly() {
		add(LayerExec, execOnlyRules(allowedOps(rules))...)
		params = append(params, ParamExecTarget)
	}
	allowed = allowedOps(rules)
	hardStart := len(rules)
	for _, c := range profile.Classes() {
		if p.Waived(c) {
			continue
		}
		for _, r := range hardDenyRulesEnv(c, env) {
			r.Ops = withSpecific(r.Ops, allowed)
			add(LayerHardDeny, r)
		}
	}
	if err := checkUnfiltered(rules, hardStart, hardStart); err != nil {
		return nil, err
	}
	if p.Forking() {
		add(LayerMarker, markerRules()...)
		params = append(params, ParamRunPrefix, ParamRunMarker)
	}
	if len(rules) > limit {
		return nil, &LimitError{Rules: len(rules), Limit: limit}
	}
	prof := &sbpl.Profile{Version: 1, Rules: rules}
	if _, err := prof.Text(); err != nil {
		return nil, fmt.Errorf("seatbelt: %w", err)
	}
	return &Plan{Profile: prof, Params: params}, nil
}

// headerRules are (deny default), the default-open stragglers, what the
// forked child still does after applying the profile (the confirm and
// consume Sandbox calls), the two MAC calls targets make at start-up
// (Sandbox call 67, vnguard), and the grant extension classes. The child
// lists its descriptors before applying, and
// marking them close-on-exec (fcntl) and exec are not sandbox-gated beyond
// process-exec, which the base and policy grant.
func headerRules() []sbpl.Rule {
	return []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"default"}},
		{Effect: sbpl.Deny, Ops: []string{"process-info*", "nvram*", "iokit-get-properties", "file-map-executable"},
			Comment: "(deny default) leaves these open (Chromium renderer.sb, crbug 799149; Apple Security profiles)"},
		{Effect: sbpl.Allow, Ops: []string{"system-mac-syscall"},
			Filters: []*sbpl.Filter{sbpl.F("require-all", sbpl.F("mac-policy-name", "Sandbox"), sbpl.F("mac-syscall-number", 2))},
			Comment: "the child confirms it is sandboxed (Sandbox call 2) after applying; deny-default policies elsewhere allow exactly this call"},
		{Effect: sbpl.Allow, Ops: []string{"system-mac-syscall"},
			Filters: []*sbpl.Filter{sbpl.F("require-all", sbpl.F("mac-policy-name", "Sandbox"), sbpl.F("mac-syscall-number", 6))},
			Comment: "the child consumes grant tokens (Sandbox call 6); Chromium's seatbelt_extension_unittest consumes under (deny default)"},
		{Effect: sbpl.Allow, Ops: []string{"system-mac-syscall"},
			Filters: []*sbpl.Filter{sbpl.F("require-all", sbpl.F("mac-policy-name", "Sandbox"), sbpl.F("mac-syscall-number", 67))},
			Comment: "targets ask whether a container is expected (Sandbox call 67, sandbox_get_container_expected) at start-up; Codex's platform defaults allow exactly this call"},
		{Effect: sbpl.Allow, Ops: []string{"system-mac-syscall"}, Filters: []*sbpl.Filter{sbpl.F("mac-policy-name", "vnguard")},
			Comment: "guarded vnodes (the vnguard policy), which libc's guarded-open calls use; Codex's platform defaults allow it"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.F("extension", ExtensionRead)},
			Comment: "read grants bound per spawn as sandbox extensions"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-write*"}, Filters: []*sbpl.Filter{sbpl.F("extension", ExtensionReadWrite)},
			Comment: "read-write grants bound per spawn as sandbox extensions"},
		{Effect: sbpl.Allow, Ops: []string{"file-ioctl"}, Filters: []*sbpl.Filter{sbpl.F("require-all", sbpl.F("extension", ExtensionReadWrite), sbpl.F("regex", `^/dev/ttys[0-9]+$`))},
			Comment: "the child's own terminal, granted per spawn read-write: tty ioctls a shell needs (tcgetattr, TIOCGWINSZ); no other terminal is named"},
	}
}

func target(t profile.Target, path string) *sbpl.Filter {
	if t == profile.Subpath {
		return sbpl.Subpath(path)
	}
	return sbpl.Literal(path)
}

// policyRules lowers the policy's own filesystem, network, socket, Mach and
// process rules; fs is p.FSRules().
func policyRules(p profile.Policy, fs []profile.FSRule, resolve func(string) string, proxyPort int) []sbpl.Rule {
	rules := make([]sbpl.Rule, 0, len(fs)+16)
	ancestors := make(map[string]bool, len(fs))
	for _, r := range fs {
		path := resolve(r.Path)
		ops := []string{"file-read*"}
		if r.Access&profile.AccessWrite != 0 {
			ops = append(ops, "file-write*")
		}
		if r.Access&profile.AccessExec != 0 {
			ops = append(ops, "process-exec*", "file-map-executable")
		}
		rules = append(rules, sbpl.Rule{Effect: sbpl.Allow, Ops: ops, Filters: []*sbpl.Filter{target(r.Target, path)},
			Comment: fmt.Sprintf("%s %s %s", r.Access, r.Target, r.Path)})
		for _, a := range ancestorsOf(path) {
			ancestors[a] = true
		}
	}
	if len(ancestors) > 0 {
		rules = append(rules, metadataRule(ancestors, "ancestors of policy paths: file functions stat their full ancestry (Nix builder)"))
	}

	mode, ports := p.Network()
	// Localhost ports the child reaches, as Seatbelt addresses.
	var local []string
	for _, port := range ports {
		if port == profile.AnyPort {
			local = []string{"localhost:*"}
			break
		}
		local = append(local, "localhost:"+strconv.Itoa(port))
	}
	filters := func(dir string, addrs ...string) []*sbpl.Filter {
		var fs []*sbpl.Filter
		for _, a := range addrs {
			fs = append(fs, sbpl.F(dir, sbpl.Sym("ip"), a))
		}
		return fs
	}
	ipSockets := sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"system-socket"}, Filters: []*sbpl.Filter{sbpl.F("socket-domain", sbpl.Sym("AF_INET")), sbpl.F("socket-domain", sbpl.Sym("AF_INET6"))}, Comment: "create IP sockets"}
	switch mode {
	case profile.NetworkLoopback:
		rules = append(rules,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"}, Filters: filters("remote", local...), Comment: "loopback only, on the named ports: remote filters on outbound, since a local filter would allow all egress (sandbox-runtime#131)"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-bind", "network-inbound"}, Filters: filters("local", local...), Comment: "listen on loopback, on the named ports"},
			ipSockets,
		)
	case profile.NetworkProxy:
		// Only the run's proxy: a remote filter on the proxy's port, never
		// a local one ((local ip "localhost:*") matches the local end of
		// every outbound socket and opened all egress,
		// anthropic-experimental/sandbox-runtime#131), and tcp, not ip: no
		// UDP, and no DNS, which the proxy does (socks5h, absolute-form
		// HTTP, CONNECT name the host).
		rules = append(rules,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"}, Filters: []*sbpl.Filter{sbpl.F("remote", sbpl.Sym("tcp"), "localhost:"+strconv.Itoa(proxyPort))},
				Comment: "network proxy: the run's egress proxy only, by its remote address (a local filter would allow all egress, sandbox-runtime#131)"},
			ipSockets,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
				sbpl.F("global-name", "com.apple.trustd"), sbpl.F("global-name", "com.apple.trustd.agent"),
			}, Comment: "network proxy: TLS trust evaluation, for https tunnelled through CONNECT"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.Subpath("/private/etc/ssl")}, Comment: "network proxy: CA certificates"},
		)
	case profile.NetworkOn:
		listen := "localhost:*"
		if p.ListensAnyInterface() {
			listen = "*:*"
		}
		// The exclusion sits inside the allow (require-not, Codex's way of
		// writing "except"), so no deny depends on rule precedence.
		rules = append(rules, sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"},
			Filters: []*sbpl.Filter{sbpl.F("require-all", sbpl.F("remote", sbpl.Sym("ip"), "*:*"), sbpl.F("require-not", sbpl.F("remote", sbpl.Sym("ip"), "localhost:*")))},
			Comment: "network on: any IP host but localhost (debugger inspectors, Docker over TCP, IDE servers run code outside the cage)"})
		if len(local) > 0 {
			rules = append(rules, sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"}, Filters: filters("remote", local...), Comment: "network on: the named localhost ports"})
		}
		rules = append(rules,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-bind", "network-inbound"}, Filters: filters("local", listen), Comment: "network on: listen (on localhost unless the policy asks for every interface)"},
			ipSockets,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
				sbpl.F("global-name", "com.apple.dnssd.service"), sbpl.F("global-name", "com.apple.SystemConfiguration.DNSConfiguration"),
				sbpl.F("global-name", "com.apple.SystemConfiguration.configd"), sbpl.F("global-name", "com.apple.trustd"), sbpl.F("global-name", "com.apple.trustd.agent"),
			}, Comment: "DNS and TLS trust evaluation (Nix, agent-safehouse, Codex network policy)"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"}, Filters: []*sbpl.Filter{sbpl.F("remote", sbpl.Sym("unix-socket"), sbpl.F("path-literal", "/private/var/run/mDNSResponder"))}, Comment: "the DNS resolver's socket"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{
				sbpl.Literal("/private/etc/hosts"), sbpl.Literal("/private/etc/resolv.conf"), sbpl.Literal("/private/var/run/resolv.conf"), sbpl.Subpath("/private/etc/ssl"),
			}, Comment: "resolver configuration and CA certificates"},
		)
	}
	if sockets := p.UnixSockets(); len(sockets) > 0 {
		var out, bind, files []*sbpl.Filter
		for _, s := range sockets {
			path := resolve(s)
			out = append(out, sbpl.F("remote", sbpl.Sym("unix-socket"), sbpl.F("path-literal", path)))
			bind = append(bind, sbpl.F("local", sbpl.Sym("unix-socket"), sbpl.F("path-literal", path)))
			files = append(files, sbpl.Literal(path))
		}
		rules = append(rules,
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-outbound"}, Filters: out, Comment: "allowed Unix sockets: connect() is network-outbound (Nix, Codex seatbelt.rs)"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"network-bind"}, Filters: bind, Comment: "allowed Unix sockets: bind"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-write*"}, Filters: files, Comment: "the socket files themselves, at matching specificity (agent-safehouse ssh.sb)"},
			sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"system-socket"}, Filters: []*sbpl.Filter{sbpl.F("socket-domain", sbpl.Sym("AF_UNIX"))}, Comment: "create Unix sockets"},
		)
	}
	if mach := p.MachServices(); len(mach) > 0 {
		var names []*sbpl.Filter
		for _, n := range mach {
			names = append(names, sbpl.F("global-name", n))
		}
		rules = append(rules, sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"mach-lookup"}, Filters: names, Comment: "allowed Mach services"})
	}
	if p.Forking() {
		rules = append(rules, sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"process-fork"}, Comment: "forking policy"})
	}
	return rules
}

// linkRules allows file-read-metadata on each traversed link and the root
// links, and nothing behind them.
func linkRules(links []string) []sbpl.Rule {
	set := map[string]bool{}
	for _, l := range RootLinks {
		set[l] = true
	}
	for _, l := range links {
		set[l] = true
	}
	return []sbpl.Rule{metadataRule(set, "symbolic links a lookup passes through: the child sees where they point, nothing behind them")}
}

func metadataRule(set map[string]bool, comment string) sbpl.Rule {
	paths := sortedKeys(set)
	r := sbpl.Rule{Effect: sbpl.Allow, Ops: []string{"file-read-metadata"}, Comment: comment}
	for _, p := range paths {
		r.Filters = append(r.Filters, sbpl.Literal(p))
	}
	return r
}

// ancestorsOf returns the proper ancestors of an absolute path, "/" included.
func ancestorsOf(path string) []string {
	var out []string
	for i := strings.LastIndexByte(path, '/'); i > 0; i = strings.LastIndexByte(path[:i], '/') {
		out = append(out, path[:i])
	}
	if path != "/" {
		out = append(out, "/")
	}
	return out
}

// privateTempRules let the child execute what it wrote to its private
// temporary directory (go test runs the test binary it links there), as
// the Linux lowering does. Read and write come from the directory's
// read-write extension, issued per spawn; the directory is procage's own,
// starts empty and is removed when the run ends.
func privateTempRules() []sbpl.Rule {
	return []sbpl.Rule{{
		Effect:  sbpl.Allow,
		Ops:     []string{"process-exec*", "file-map-executable"},
		Filters: []*sbpl.Filter{sbpl.F("subpath", sbpl.Param(ParamPrivateTemp))},
		Comment: "execute what the run wrote to its private temporary directory (read and write: its read-write extension)",
	}}
}

// execOnlyRules deny executing anything but the spawn's target. The deny
// comes after every allow of process-exec* and names the specific exec
// operations they name. It also covers the #! interpreter check: an
// interpreter is another program, so a script target needs a policy
// without ExecTargetOnly (re-allowing interpreters would broaden the
// policy: any #! line would name an executable path).
func execOnlyRules(allowed []string) []sbpl.Rule {
	return []sbpl.Rule{{
		Effect:  sbpl.Deny,
		Ops:     withSpecific([]string{"process-exec*"}, allowed),
		Filters: []*sbpl.Filter{sbpl.F("require-not", sbpl.F("literal", sbpl.Param(ParamExecTarget)))},
		Comment: "exec target only: no program but this spawn's target",
	}}
}

// markerRules mark every process of a run: the profile denies every Mach
// name with the parent's random prefix and allows exactly the run's marker,
// so a sandbox_check from outside can tell the run's processes apart
// [inferred from the Rust procage 0.3.1's run marker,
// https://docs.rs/crate/procage/0.3.1/source/src/macos/lifetime.rs;
// docs/macos-backend.md describes the search].
func markerRules() []sbpl.Rule {
	return []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{sbpl.F("global-name-prefix", sbpl.Param(ParamRunPrefix))},
			Modifiers: []sbpl.Modifier{{Name: "no-report"}}, Comment: "run marker: names with this process's prefix are denied..."},
		{Effect: sbpl.Allow, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{sbpl.F("global-name", sbpl.Param(ParamRunMarker))},
			Comment: "...except this run's marker"},
	}
}

// allowedOps returns the operations named by allow rules, wildcards
// included (a narrower wildcard such as mach-task-special-port* beats a
// broader one such as mach-task*), "default" excluded.
func allowedOps(rules []sbpl.Rule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		if r.Effect != sbpl.Allow {
			continue
		}
		for _, op := range r.Ops {
			if op != "default" {
				set[op] = true
			}
		}
	}
	return sortedKeys(set)
}

// sortedKeys returns the members of a set in order, so profiles are
// deterministic.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withSpecific extends a deny rule's operations with every operation an
// allow names that one of its wildcards covers: in Seatbelt a rule naming a
// more specific operation beats one naming a wildcard whatever the order
// [reported: agent-safehouse ssh.bats, measured; confirmed: fence
// internal/sandbox/macos.go], so the deny must
// name it too. A narrower wildcard counts as more specific [inferred].
func withSpecific(ops, allowed []string) []string {
	out := slices.Clone(ops)
	for _, a := range allowed {
		if slices.Contains(out, a) {
			continue
		}
		for _, op := range ops {
			if op != a && sbpl.IsWildcard(op) && sbpl.Covers(op, a) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// HardDenyRules returns the deny rules of class c for a user whose home
// directory (kernel spelling) is home, before Lower adds the specific
// operations allows name.
func HardDenyRules(c profile.Class, home string) []sbpl.Rule { return hardDenyRules(c, home) }
