package linux

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
)

// Layer says where a path rule comes from. Plans list the layers in this
// order.
type Layer string

const (
	LayerBase   Layer = "base"   // the Linux Base V1 (base.go), in every plan
	LayerPolicy Layer = "policy" // the policy's own rules
	LayerGrant  Layer = "grant"  // a spawn's grants (Plan.WithSpawn)
	LayerTemp   Layer = "temp"   // a spawn's private temporary directory
)

// PathRule allows Access beneath Path (a directory: everything below it;
// a file: that file). Paths that do not exist when the ruleset is built are
// skipped: a Landlock rule attaches to an existing file.
type PathRule struct {
	// Path is the kernel spelling of the file or directory.
	Path string
	// Access is what the rule allows; on a file only [FSFileRights].
	Access FSAccess
	// Layer is where the rule comes from.
	Layer Layer
	// Why says what the rule is for (base rules only).
	Why string `json:",omitempty"`
}

// NetRule allows Access on one TCP port (Landlock ABI 4).
type NetRule struct {
	// Port is the TCP port, in host byte order.
	Port uint16
	// Access is what the rule allows on the port: bind, connect or both.
	Access NetAccess
}

// Env is what lowering needs besides the policy: the neutral
// [profile.Env] both lowerings take (kernel spellings, the user's
// directories; Links is unused here: Landlock matches what the kernel
// opens), and what only Linux needs.
type Env struct {
	profile.Env
	// Accept lists the gaps the caller accepts.
	Accept []profile.Gap
	// ABI is the Landlock ABI to plan for (the kernel's); 0 means MaxABI.
	// A higher value is treated as MaxABI.
	ABI int
	// Root is a caller with uid 0: the cage keeps uid 0, which owns the
	// system's files, so seccomp also refuses mode, owner and xattr
	// changes (Landlock does not restrict them).
	Root bool
	// Tier is the enforcement tier to plan for: TierT1 adds the mounts
	// (Plan.Mounts) and changes the gaps they close.
	Tier Tier
	// NoProcMount is a T1 host whose kernel refuses a fresh procfs in a
	// new pid namespace (a container's masked /proc): the run still gets
	// its own pid namespace, but no /proc of its own, and a policy that
	// grants /proc is refused ([ErrProcAtT1]).
	NoProcMount bool
	// AnonInodeSetattr is a kernel that lets a descriptor change the mode
	// and owner of an inode other processes' descriptors share (the one
	// anonymous inode; a pidfd's), which Linux 6.15 refuses
	// (linuxsandbox.AnonInodeSetattr): root's metadata calls stay refused
	// at T1 too, since no mount answers them there.
	AnonInodeSetattr bool
	// NewNames is a T1 host that runs the new-names supervisor
	// (linuxsandbox.NewNamesAvailable: linux/amd64, Linux 5.19, no Yama
	// ptrace restriction): a run's creations in its writable trees are
	// performed by the supervisor, which refuses new git names, so the
	// trust-handoff gap for .git closes.
	NewNames bool
}

// Plan is a policy lowered to Landlock and seccomp: everything a Linux
// child gets. A right the ruleset handles is denied unless a rule allows
// it; a system call no seccomp rule matches is allowed (up to the reviewed
// table, see [Filter]). String renders it for people, MarshalJSON for
// tools.
type Plan struct {
	// Tier is the enforcement tier planned for.
	Tier Tier
	// Mounts are a T1 plan's mount layout (none at T2).
	Mounts []Mount
	// NewNames: at T1, a spawn with a writable tree runs the new-names
	// supervisor (Env.NewNames), which performs every call that creates a
	// name and refuses new git names (.git anywhere, hooks and config in a
	// git directory, a directory completed into a repository).
	NewNames bool
	// ABI is the Landlock ABI planned for: the rights and scopes it knows
	// are handled.
	ABI int
	// MinABI is the lowest ABI that enforces this plan; the needs behind it
	// are listed in the plan's text.
	MinABI int
	// HandledFS is every filesystem right the ruleset restricts: all that
	// ABI knows, so none is left open.
	HandledFS FSAccess
	// HandledNet is the TCP rights the ruleset restricts: bind and connect
	// with the network off or loopback ports; none where every port is
	// allowed or below ABI 4.
	HandledNet NetAccess
	// Scopes are what the child may not reach outside its Landlock domain.
	Scopes Scope
	// Rules are the path rules, by layer, then path.
	Rules []PathRule
	// NetRules are the TCP ports allowed when HandledNet is not empty.
	NetRules []NetRule
	// Seccomp are the filter's rules, in match order.
	Seccomp []SeccompRule
	// Forking is the policy's Fork: the child may create processes.
	Forking bool
	// Network is the policy's network mode.
	Network profile.NetworkMode
	// NetNS is a T1 run's own network namespace; nil where the run keeps
	// the host's (T2, network on, loopback with every port).
	NetNS *NetNamespace
	// Accepted are the gaps present and accepted: not enforced.
	Accepted []profile.GapPart
	// Refused are the gaps present and not accepted: a plan that has them
	// comes only with Lower's *profile.GapError, for review, and is never
	// to be put in force.
	Refused []profile.GapPart
	// Denied lists the rights the hard-deny classes took away from policy
	// rules on or beneath a protected path (a deny beats an allow, as on
	// macOS).
	Denied []Denial

	hd *hardDeny

	needs   []abiNeed // what sets MinABI
	home    string
	accept  []profile.Gap
	secrets bool // the secrets class is in force
	trust   bool // the trust-handoff class is in force

	procMount bool // T1: a fresh /proc in the run's pid namespace
	rootMeta  bool // root's metadata calls let through (rootMetadataLifted)
	privTemp  bool // T1 with a private temporary directory: private /tmp and /dev/shm
}

// abiNeed is one feature's minimum ABI and why.
type abiNeed struct {
	abi  int
	what string
}

// Lower turns a policy into a Linux plan. Parts Linux cannot enforce are
// a *profile.GapError unless env.Accept or the policy
// ([profile.AcceptGaps]) names them; the plan is returned with that error
// all the same, listing them in Refused, so it can be shown before the
// gaps are accepted. A plan with Refused parts must not be put in force.
func Lower(p profile.Policy, env Env) (*Plan, error) {
	abi := env.ABI
	if abi <= 0 || abi > MaxABI {
		abi = MaxABI
	}
	accept := append(slices.Clone(env.Accept), p.AcceptedGaps()...)
	pl := &Plan{ABI: abi, Tier: env.Tier, Forking: p.Forking(), home: env.Home, accept: accept,
		secrets: !p.Waived(profile.Secrets), trust: !p.Waived(profile.TrustHandoff)}
	pl.NewNames = pl.Tier == TierT1 && env.NewNames && !env.NoProcMount && pl.trust
	resolve := func(s string) string {
		if r, ok := env.Resolved[s]; ok {
			return r
		}
		return s
	}
	var gaps []profile.GapPart

	// Filesystem: handle every right the ABI knows, so none is left open.
	pl.HandledFS = fsRightsAt(abi)
	var needs []abiNeed
	if pl.Tier != TierT1 {
		// At T1 everything outside the writable trees is on a read-only
		// mount, where truncate fails with EROFS whatever Landlock handles.
		needs = append(needs, abiNeed{3, "truncate is handled (before ABI 3 a read-only file could be truncated)"})
	}
	pl.Rules = append(pl.Rules, baseV1Rules()...)
	// Hard-deny classes: a rule loses the rights a class refuses on the
	// protected path it lies at or beneath; a protected path inside an
	// allowed tree is a gap.
	hd := newHardDeny(p, env.Env)
	pl.hd = hd
	for _, r := range p.FSRules() {
		a := FSAccess(0)
		if r.Access&profile.AccessRead != 0 {
			a |= fsRead
		}
		if r.Access&profile.AccessWrite != 0 {
			a |= fsRead | fsWrite
		}
		if r.Access&profile.AccessExec != 0 {
			a |= fsRead | fsExec
		}
		if r.Target == profile.Literal {
			a &= FSFileRights
		}
		pr, denials, parts := hd.apply(PathRule{Path: resolve(r.Path), Access: a, Layer: LayerPolicy}, r.Target != profile.Literal)
		pl.Denied = append(pl.Denied, denials...)
		if pl.Tier == TierT1 {
			parts = t1Parts(parts, pr, pl.NewNames)
		}
		gaps = append(gaps, parts...)
		if pr.Access != 0 {
			pl.Rules = append(pl.Rules, pr)
		}
	}

	// Network.
	mode, ports := p.Network()
	anyPort := len(ports) == 1 && ports[0] == profile.AnyPort
	pl.Network = mode
	unixAllowed := len(p.UnixSockets()) > 0
	if unixAllowed {
		for _, s := range p.UnixSockets() {
			s = resolve(s)
			if e, ok := hd.covers(s); ok {
				gaps = append(gaps, profile.GapPart{Gap: classGap(e.Class), Class: e.Class, Path: s, Protected: []string{e.Path},
					Detail: fmt.Sprintf("%s protects the Unix socket %s (under %s), and Landlock cannot filter connect() by path before ABI 9", e.Class, s, e.Path)})
			}
			gaps = append(gaps, profile.GapPart{Gap: profile.GapUnixSocketPath, Path: s, Detail: fmt.Sprintf("allowing %s allows connect() to every path-named Unix socket before Landlock ABI 9", s)})
		}
	}
	var ns netShape
	switch mode {
	case profile.NetworkOff:
		ns.why = "network off: no sockets but those the policy allows"
		// seccomp enforces it on any ABI; from ABI 4 Landlock's TCP rights
		// (handled, no port allowed) add a second layer.
		pl.HandledNet = NetBindTCP | NetConnectTCP
		if pl.Tier == TierT1 {
			pl.NetNS = &NetNamespace{} // no interface up
		}
	case profile.NetworkLoopback:
		ns.families = []uint32{afInet, afInet6}
		ns.streamOnlyInet = true
		ns.why = "network loopback: TCP sockets only"
		if pl.Tier == TierT1 && !anyPort {
			// The run's own network namespace: its own lo, and the named
			// host ports through the cage's forwarders. No Landlock port
			// rule: every port of its own lo is the run's.
			nn := &NetNamespace{Loopback: true}
			for _, port := range ports {
				nn.HostPorts = append(nn.HostPorts, uint16(port))
			}
			pl.NetNS = nn
			break
		}
		gaps = append(gaps, profile.GapPart{Gap: profile.GapLoopback, Detail: "Landlock filters TCP by port, not address: any host is reachable on an allowed port, and listen() without bind() listens on an unlisted ephemeral port on every interface (landlock-lsm/linux#15)"})
		if !anyPort {
			ns.restrictedPorts = true
			pl.HandledNet = NetBindTCP | NetConnectTCP
			for _, port := range ports {
				pl.NetRules = append(pl.NetRules, NetRule{Port: uint16(port), Access: NetBindTCP | NetConnectTCP})
			}
			needs = append(needs, abiNeed{4, "TCP port rules"})
		}
	case profile.NetworkProxy:
		// No network namespace yet: TCP to the proxy's port on any host,
		// by name a gap. Without the port (a plan made before the run's
		// proxy starts) no TCP port is allowed at all.
		port := "chosen when the run starts"
		if env.ProxyPort > 0 {
			port = strconv.Itoa(env.ProxyPort)
		}
		if pl.Tier == TierT1 {
			// The run's own network namespace, whose only way out is the
			// proxy's listener on its lo; the port rule stays as a second
			// layer where Landlock has one.
			pl.NetNS = &NetNamespace{Loopback: true, Proxy: true}
		} else {
			gaps = append(gaps, profile.GapPart{Gap: profile.GapProxyDirect, Detail: fmt.Sprintf("Landlock filters TCP by port, not address: a remote host listening on the proxy's port (%s) is reachable directly, around the proxy, and listen() without bind() listens on an ephemeral port on every interface (landlock-lsm/linux#15)", port)})
		}
		ns.families = []uint32{afInet, afInet6}
		ns.streamOnlyInet = true
		ns.restrictedPorts = true
		ns.why = "network proxy: TCP sockets only, to the proxy's port"
		pl.HandledNet = NetBindTCP | NetConnectTCP
		if env.ProxyPort > 0 && env.ProxyPort <= 65535 {
			pl.NetRules = append(pl.NetRules, NetRule{Port: uint16(env.ProxyPort), Access: NetConnectTCP})
		}
		if pl.NetNS == nil {
			needs = append(needs, abiNeed{4, "TCP port rules"})
		}
	case profile.NetworkOn:
		if !anyPort || !p.ListensAnyInterface() {
			gaps = append(gaps, profile.GapPart{Gap: profile.GapLocalServices, Detail: "Landlock filters TCP by port, not address: localhost services stay reachable on every port, and the child may listen on every interface"})
		}
		ns.families = []uint32{afInet, afInet6, afNetlink}
		ns.netlinkRouteOnly = true
		ns.why = "network on: IP and netlink (interface lookups) sockets"
		pl.Rules = append(pl.Rules, PathRule{Path: "/run/systemd/resolve", Access: fsRead, Layer: LayerBase,
			Why: "/etc/resolv.conf links here under systemd-resolved"})
	}
	if unixAllowed {
		ns.families = append(ns.families, afUnix)
		ns.why += "; Unix sockets (allowed by path, see the gap)"
	} else {
		ns.why += "; no socket(AF_UNIX): before Landlock ABI 9 connect() to a path-named socket (docker.sock, the D-Bus session bus) is not restricted (socketpair still works)"
	}

	if len(p.MachServices()) > 0 {
		gaps = append(gaps, profile.GapPart{Gap: profile.GapMach, Detail: strings.Join(p.MachServices(), ", ")})
	}
	if len(p.SeatbeltRules()) > 0 {
		gaps = append(gaps, profile.GapPart{Gap: profile.GapSeatbelt, Detail: fmt.Sprintf("%d raw Seatbelt rules", len(p.SeatbeltRules()))})
	}
	if p.ExecTargetOnly() {
		gaps = append(gaps, profile.GapPart{Gap: profile.GapExecTargetOnly, Detail: "ld.so and memfd_create+fexecve run any readable file; Landlock checks execute at execve only"})
	}

	// Process access: ptrace is limited to the domain from ABI 1; signals
	// and abstract Unix sockets outside the domain are scoped from ABI 6.
	// Waiving the class drops the scopes (and their ABI need).
	// At T1 the run's own pid namespace already keeps its signals in (a
	// process outside it has no pid there: pid_namespaces(7)) and its own
	// network namespace its abstract sockets (unix(7)); the scopes stay
	// as a second layer where the kernel has them.
	if !p.Waived(profile.ProcessAccess) {
		pl.Scopes = ScopeSignal | ScopeAbstractUnixSocket
		switch {
		case pl.Tier != TierT1:
			needs = append(needs, abiNeed{6, "signal and abstract Unix socket scoping (process-access)"})
		case pl.NetNS == nil:
			needs = append(needs, abiNeed{6, "abstract Unix socket scoping (process-access; the network is the host's)"})
		}
	}
	pl.rootMeta = rootMetadataLifted(env.Root, pl.Tier, env.AnonInodeSetattr)
	pl.Seccomp = seccompRules(p.Forking(), ns, env.Root, !p.Waived(profile.ProcessAccess), pl.rootMeta)

	pl.MinABI = 1
	for _, n := range needs {
		pl.MinABI = max(pl.MinABI, n.abi)
	}
	pl.needs = needs
	if abi < 4 {
		pl.HandledNet, pl.NetRules = 0, nil
	}
	if abi < 6 {
		pl.Scopes = 0
	}
	for i := range pl.Rules {
		pl.Rules[i].Access &= pl.HandledFS
	}
	sortRules(pl.Rules)
	pl.procMount = pl.Tier == TierT1 && !env.NoProcMount
	pl.privTemp = pl.Tier == TierT1 && env.PrivateTemp
	if pl.Tier == TierT1 && env.NoProcMount {
		for _, r := range pl.Rules {
			if r.Layer != LayerBase && within(r.Path, "/proc") {
				return nil, fmt.Errorf("%w: %s", ErrProcAtT1, r.Path)
			}
		}
	}
	pl.Mounts = pl.MountsFor(pl.Rules)

	for _, g := range gaps {
		if slices.Contains(accept, g.Gap) {
			pl.Accepted = append(pl.Accepted, g)
		} else {
			pl.Refused = append(pl.Refused, g)
		}
	}
	if len(pl.Refused) > 0 {
		return pl, &profile.GapError{Parts: slices.Clone(pl.Refused)}
	}
	return pl, nil
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func sortRules(rs []PathRule) {
	slices.SortStableFunc(rs, func(a, b PathRule) int {
		if c := strings.Compare(layerOrder(a.Layer), layerOrder(b.Layer)); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
}

func layerOrder(l Layer) string {
	switch l {
	case LayerBase:
		return "0"
	case LayerPolicy:
		return "1"
	case LayerGrant:
		return "2"
	}
	return "3"
}

// SpawnGrant is one path a spawn grants beyond the plan.
type SpawnGrant struct {
	Path  string // kernel spelling
	Write bool   // read-write; otherwise read
	Dir   bool   // a directory: everything beneath it
	// Own is a directory procage made empty and removes itself (a cage's
	// preset caches): like the private temporary directory, only a
	// protected path at, beneath or above it is a gap.
	Own bool
}

// WithSpawn returns a copy of the plan's path rules plus a spawn's grants
// and private temporary directory ("" = none). A grant on or beneath a
// protected path loses the rights its class refuses there, as the
// policy's rules do; a directory grant holding a protected path (a
// writable one: git hooks in any tree) is a *profile.GapError unless the plan
// accepted the gap or the class is waived. The private temporary
// directory is procage's own, starts empty and is removed at run end: the
// run may read, write and execute there, and only a protected path at or
// inside it is a gap.
func (pl *Plan) WithSpawn(grants []SpawnGrant, temp string) ([]PathRule, error) {
	rules := slices.Clone(pl.Rules)
	hd := pl.hd
	if hd == nil {
		hd = &hardDeny{}
	}
	var parts []profile.GapPart
	own := func(r PathRule, what string) {
		if _, denials, ps := hd.apply(r, true); len(denials) > 0 || !onlyGit(ps) {
			parts = append(parts, profile.GapPart{Gap: profile.GapSecrets, Path: r.Path,
				Detail: fmt.Sprintf("%s %s lies at, beneath or above a protected path", what, r.Path)})
		}
		rules = append(rules, r)
	}
	for _, g := range grants {
		if g.Own {
			own(PathRule{Path: g.Path, Access: (fsRead | fsWrite) & pl.HandledFS, Layer: LayerGrant}, "the cage's directory")
			continue
		}
		a := fsRead
		if g.Write {
			a |= fsWrite
		}
		if !g.Dir {
			a &= FSFileRights
		}
		r, _, ps := hd.apply(PathRule{Path: g.Path, Access: a & pl.HandledFS, Layer: LayerGrant}, g.Dir)
		if pl.Tier == TierT1 {
			ps = t1Parts(ps, r, pl.NewNames)
		}
		for _, p := range ps {
			if !slices.Contains(pl.accept, p.Gap) {
				parts = append(parts, p)
			}
		}
		if r.Access != 0 {
			rules = append(rules, r)
		}
	}
	if temp != "" {
		// Execute too, as on macOS: a build runs what it linked there (go
		// test's test binary).
		own(PathRule{Path: temp, Access: (fsRead | fsWrite | FSExecute) & pl.HandledFS, Layer: LayerTemp}, "the private temporary directory")
	}
	if len(parts) > 0 {
		return nil, &profile.GapError{Parts: parts}
	}
	return rules, nil
}

// onlyGit reports whether the parts are only about the git directories
// any tree may hold.
func onlyGit(ps []profile.GapPart) bool {
	for _, p := range ps {
		if !slices.Equal(p.Protected, []string{gitName}) {
			return false
		}
	}
	return true
}

// DenyAll returns a plan for Landlock ABI abi that handles every
// filesystem right and scope the ABI knows and allows nothing: the apply
// probe's plan, under which exec of any program must fail with EACCES.
func DenyAll(abi int) *Plan {
	abi = max(1, min(abi, MaxABI))
	pl := &Plan{ABI: abi, MinABI: 1, HandledFS: fsRightsAt(abi)}
	if abi >= 6 {
		pl.Scopes = ScopeSignal | ScopeAbstractUnixSocket
	}
	return pl
}

// Clone returns a deep copy of p: changing it changes nothing a cage
// enforces from p.
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	q := *p
	q.Rules = slices.Clone(p.Rules)
	q.NetRules = slices.Clone(p.NetRules)
	q.Seccomp = slices.Clone(p.Seccomp)
	for i, r := range q.Seccomp {
		q.Seccomp[i].Conds = slices.Clone(r.Conds)
		for j, c := range q.Seccomp[i].Conds {
			q.Seccomp[i].Conds[j].Vals = slices.Clone(c.Vals)
		}
	}
	q.Accepted = slices.Clone(p.Accepted)
	for i, g := range q.Accepted {
		q.Accepted[i].Protected = slices.Clone(g.Protected)
	}
	q.Denied = slices.Clone(p.Denied)
	q.Mounts = slices.Clone(p.Mounts)
	q.needs = slices.Clone(p.needs)
	q.accept = slices.Clone(p.accept)
	return &q
}

// ErrLiteralDirectory is wrapped by the refusal of a rule for one file (a
// Literal rule, a file grant) that names a directory: Landlock's file
// rights on a directory apply to every file beneath it, while the rule
// means the directory alone (as Seatbelt's literal filter does). Name the
// tree with Read, ReadWrite or Exec instead. The enforcement finds it when
// it opens the rule's path.
var ErrLiteralDirectory = errors.New("a rule for one file names a directory, whose file rights on Linux would reach every file beneath it; use a tree rule (Read, ReadWrite, Exec)")

// ErrPathChanged is wrapped by the refusal of a path that held a symbolic
// link when it was opened for a rule, or was not where it was opened by
// the time it was checked: it changed after it was resolved and checked
// for links (or is a link itself), so it is refused rather than followed.
var ErrPathChanged = errors.New("the path changed after it was checked for links")
