package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/procage-go/procage/internal/egress/hostrule"
	"github.com/procage-go/procage/profile/sbpl"
)

// Base selects the curated set of rules every profile starts from. Bases
// are versioned: once released, a base never changes; a later one is a new
// constant.
type Base int

const (
	// BaseV1 lets ordinary programs (sh, coreutils, perl, Go and Rust
	// binaries) start and run, and nothing else: no home directory, no
	// temporary files, no network.
	BaseV1 Base = 1
)

func (b Base) String() string {
	if b == BaseV1 {
		return "v1"
	}
	return fmt.Sprintf("Base(%d)", int(b))
}

func parseBase(s string) (Base, error) {
	if s == "v1" {
		return BaseV1, nil
	}
	return 0, fmt.Errorf("unknown base %q (known: v1)", s)
}

// Access is what a filesystem rule allows. Write implies read.
type Access uint8

const (
	AccessRead Access = 1 << iota
	AccessWrite
	AccessExec
)

func (a Access) String() string {
	var parts []string
	if a&AccessRead != 0 {
		parts = append(parts, "read")
	}
	if a&AccessWrite != 0 {
		parts = append(parts, "write")
	}
	if a&AccessExec != 0 {
		parts = append(parts, "exec")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Target says whether a filesystem rule names one file or a whole tree.
type Target uint8

const (
	Literal Target = iota // exactly this path
	Subpath               // this path and everything below it
)

func (t Target) String() string {
	if t == Subpath {
		return "subpath"
	}
	return "literal"
}

// FSRule allows Access on Path (a Literal file or a Subpath tree).
type FSRule struct {
	Access Access
	Target Target
	Path   string
}

func (r FSRule) String() string { return fmt.Sprintf("%s %s %s", r.Access, r.Target, r.Path) }

// NetworkMode is how much network a caged process gets.
type NetworkMode uint8

const (
	// NetworkOff: no network at all (the default).
	NetworkOff NetworkMode = iota
	// NetworkLoopback: localhost only, on the ports the policy names
	// (connect, bind and accept), or every port with [AnyPort].
	NetworkLoopback
	// NetworkOn: any remote host. Local services stay out of reach (a
	// debugger inspector, Docker over TCP or an IDE server on localhost
	// runs code outside the cage): localhost is reachable only on the
	// ports the policy names, or every port with [AnyPort]. The child
	// listens on localhost only, unless [ListenAnyInterface].
	NetworkOn
	// NetworkProxy: the hosts the policy names ([AllowHosts]) and nothing
	// else, through a proxy the cage runs in the caller's process for each
	// run (package internal/egress): the child may connect to the proxy's
	// port on localhost only, and gets HTTP_PROXY, HTTPS_PROXY, ALL_PROXY
	// and NO_PROXY pointing at it. Names are checked after resolution: one
	// resolving to a loopback, private, link-local or metadata address is
	// refused unless [AllowAddresses] allows that address, and one on the
	// caller's machine (any of its interface addresses, 0.0.0.0, ::)
	// unless it names that very address.
	NetworkProxy
)

// AnyPort, given as the only port to [Network], opts in to every
// localhost port. It is no port number: port 0 is refused ([ErrPortZero]),
// so a zero value from a parse or a default can never mean "every port".
const AnyPort = -1

// ErrPortZero is wrapped by the error for port 0, which once meant every
// port: every port must be asked for by name, with [AnyPort].
var ErrPortZero = errors.New("port 0 is not a port: name the ports (1..65535), or use AnyPort for every port (procage: --port any; JSON: \"any_port\": true)")

// ErrNoPorts is wrapped by the error for loopback mode without ports:
// "all of localhost" must be asked for by name, with [AnyPort].
var ErrNoPorts = errors.New("loopback mode names its ports")

func (m NetworkMode) String() string {
	switch m {
	case NetworkLoopback:
		return "loopback"
	case NetworkOn:
		return "on"
	case NetworkProxy:
		return "proxy"
	}
	return "off"
}

func parseNetworkMode(s string) (NetworkMode, error) {
	switch s {
	case "off", "":
		return NetworkOff, nil
	case "loopback":
		return NetworkLoopback, nil
	case "on":
		return NetworkOn, nil
	case "proxy":
		return NetworkProxy, nil
	}
	return 0, errors.New("unknown network mode (want off, loopback, on or proxy)")
}

// Class names a hard-deny class: rules lowered last in every profile,
// overriding every allow, unless the policy waives the class by name.
type Class string

const (
	// ProcessAccess refuses other processes' arguments, environment and
	// information, signals to them and their task ports (escape class R-25 in docs/threat-model.md).
	ProcessAccess Class = "process-access"
	// Secrets refuses the user's credential stores (~/.ssh, ~/.aws, ...),
	// reads and writes. Waiving it also reopens writes there, and some of
	// those files run programs: ~/.ssh/config (ProxyCommand,
	// LocalCommand), ~/.aws/config (credential_process) and ~/.kube/config
	// (exec credential plugins) are trust handoffs too.
	Secrets Class = "secrets"
	// TrustHandoff refuses files another program will later run as the
	// user: git hooks and config, shell startup files, launch agents.
	TrustHandoff Class = "trust-handoff"
	// ServiceManager refuses the launchd and container-engine endpoints that
	// would start a process outside the cage.
	ServiceManager Class = "service-manager"
)

// Classes returns every hard-deny class, in lowering order.
func Classes() []Class { return []Class{ProcessAccess, Secrets, TrustHandoff, ServiceManager} }

func parseClass(s string) (Class, error) {
	for _, c := range Classes() {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, 0, 4)
	for _, c := range Classes() {
		names = append(names, string(c))
	}
	return "", fmt.Errorf("unknown hard-deny class %q (known: %s)", s, strings.Join(names, ", "))
}

// Policy says what a caged process may do. It is an immutable value: build
// it with [New] (which validates everything) and derive variants with
// [Policy.With]. The zero Policy is not valid; use New.
type Policy struct {
	base       Base
	fs         []FSRule
	network    NetworkMode
	ports      []int
	listenAny  bool
	sockets    []string
	mach       []string
	fork       bool
	execOnly   bool
	waived     []Class
	broad      []Broad
	seatbelt   []sbpl.Rule
	seatSrc    []string
	gaps       []Gap
	home       string
	allowHosts []string
	denyHosts  []string
	allowAddrs []string
	validated  bool
}

// Option is one part of a policy, passed to [New] or [Policy.With].
type Option interface{ apply(*Policy) error }

type optionFunc func(*Policy) error

func (f optionFunc) apply(p *Policy) error { return f(p) }

// Read allows reading the tree at path.
func Read(path string) Option { return FS(AccessRead, Subpath, path) }

// ReadWrite allows reading and writing the tree at path.
func ReadWrite(path string) Option { return FS(AccessWrite, Subpath, path) }

// Exec allows reading and executing the tree at path.
func Exec(path string) Option { return FS(AccessRead|AccessExec, Subpath, path) }

// FS allows access on path, a Literal file or a Subpath tree. Write
// implies Read.
func FS(access Access, target Target, path string) Option {
	return optionFunc(func(p *Policy) error {
		if access == 0 || access&^(AccessRead|AccessWrite|AccessExec) != 0 {
			return &Error{Field: "fs", Value: path, Err: fmt.Errorf("access %d is not a combination of read, write and exec", access)}
		}
		if target != Literal && target != Subpath {
			return &Error{Field: "fs", Value: path, Err: fmt.Errorf("unknown target kind %d", target)}
		}
		if err := CheckPath(path); err != nil {
			return &Error{Field: "fs", Value: path, Err: err}
		}
		if access&AccessWrite != 0 {
			access |= AccessRead
		}
		p.fs = append(p.fs, FSRule{Access: access, Target: target, Path: path})
		return nil
	})
}

// Network sets the network mode and the localhost ports the child may
// reach: with NetworkLoopback it must name them ([ErrNoPorts]) or pass
// [AnyPort]; with NetworkOn they are the only local services it reaches.
func Network(mode NetworkMode, ports ...int) Option {
	return optionFunc(func(p *Policy) error {
		if mode > NetworkProxy {
			return &Error{Field: "network", Value: fmt.Sprint(mode), Err: errors.New("unknown network mode")}
		}
		if len(ports) > 0 && mode == NetworkProxy {
			return &Error{Field: "network.ports", Value: fmt.Sprint(ports), Err: errors.New("proxy mode reaches hosts by name (AllowHosts), not localhost ports")}
		}
		if len(ports) > 0 && mode == NetworkOff {
			return &Error{Field: "network.ports", Value: fmt.Sprint(ports), Err: errors.New("ports apply to loopback and on modes only")}
		}
		if len(ports) == 0 && mode == NetworkLoopback {
			return &Error{Field: "network.ports", Err: ErrNoPorts}
		}
		for _, port := range ports {
			if port == AnyPort && len(ports) == 1 {
				continue
			}
			if port == 0 {
				return &Error{Field: "network.ports", Value: "0", Err: ErrPortZero}
			}
			if port < 1 || port > 65535 {
				return &Error{Field: "network.ports", Value: fmt.Sprint(port), Err: errors.New("port must be 1..65535, or AnyPort alone")}
			}
		}
		p.network = mode
		p.ports = append([]int(nil), ports...)
		return nil
	})
}

// ErrNoHosts is wrapped by the error for proxy mode without a host or an
// address to allow: such a proxy would refuse every request.
var ErrNoHosts = errors.New("proxy mode names the hosts it allows (procage: --allow-host HOST; JSON: \"allow_hosts\")")

// AllowHosts lets a [NetworkProxy] policy reach the hosts the patterns
// name: "github.com" that name, "*.pythonhosted.org" every name below
// pythonhosted.org (not pythonhosted.org itself), each with an optional
// ":PORT" (every port without). Case and a trailing dot are ignored; an IP
// address is no host name ([AllowAddresses]). A policy with no mode set
// gets NetworkProxy; with another mode, host rules are an error.
func AllowHosts(patterns ...string) Option {
	return hostOption("network.allow_hosts", patterns, func(p *Policy, s string) { p.allowHosts = append(p.allowHosts, s) })
}

// DenyHosts refuses the hosts the patterns name (as [AllowHosts] reads
// them) even where an allow pattern matches: deny wins.
func DenyHosts(patterns ...string) Option {
	return hostOption("network.deny_hosts", patterns, func(p *Policy, s string) { p.denyHosts = append(p.denyHosts, s) })
}

func hostOption(field string, patterns []string, add func(*Policy, string)) Option {
	return optionFunc(func(p *Policy) error {
		for _, s := range patterns {
			pat, err := hostrule.ParsePattern(s)
			if errors.Is(err, hostrule.ErrIPLiteral) {
				err = fmt.Errorf("%w (allow an address with AllowAddresses; procage: --allow-address)", errors.Unwrap(err))
			} else if err != nil {
				err = errors.Unwrap(err)
			}
			if err != nil {
				return &Error{Field: field, Value: s, Err: err}
			}
			add(p, pat.String())
		}
		return nil
	})
}

// AllowAddresses lets a [NetworkProxy] policy reach addresses: an IP
// address or CIDR prefix ("127.0.0.1", "10.0.0.0/8", "fd00::/8"),
// optionally with ":PORT" ("[::1]:8080"). An allowed host that resolves to
// a loopback, private, link-local, shared (CGNAT), multicast, reserved or
// metadata address (169.254.169.254) is refused unless that address is
// allowed here; a request naming an address needs it too. A destination on
// the caller's machine (one of its interface addresses, public ones too;
// 0.0.0.0, ::) is allowed only by a rule naming that very address
// ("192.0.2.5", "192.0.2.5:8080"), not by a prefix containing it.
func AllowAddresses(rules ...string) Option {
	return optionFunc(func(p *Policy) error {
		for _, s := range rules {
			a, err := hostrule.ParseAddress(s)
			if err != nil {
				return &Error{Field: "network.allow_addresses", Value: s, Err: errors.Unwrap(err)}
			}
			p.allowAddrs = append(p.allowAddrs, a.String())
		}
		return nil
	})
}

// ListenAnyInterface lets a NetworkOn policy listen on every interface,
// not only localhost, so other hosts can connect to the child.
func ListenAnyInterface() Option {
	return optionFunc(func(p *Policy) error { p.listenAny = true; return nil })
}

// UnixSocket allows connecting to (and binding) the Unix socket at path.
func UnixSocket(path string) Option {
	return optionFunc(func(p *Policy) error {
		if err := CheckPath(path); err != nil {
			return &Error{Field: "unix_sockets", Value: path, Err: err}
		}
		p.sockets = append(p.sockets, path)
		return nil
	})
}

// MachLookup allows looking up the global Mach service name.
func MachLookup(name string) Option {
	return optionFunc(func(p *Policy) error {
		if name == "" || strings.ContainsAny(name, " \t\n*") {
			return &Error{Field: "mach_lookup", Value: name, Err: errors.New("a Mach service name is non-empty, without spaces or wildcards")}
		}
		if err := sbpl.CheckString(name); err != nil {
			return &Error{Field: "mach_lookup", Value: name, Err: err}
		}
		p.mach = append(p.mach, name)
		return nil
	})
}

// Fork lets the target create processes; such a policy is "forking", and
// each run's processes carry a marker so all of them can be found and
// killed when the run ends.
func Fork() Option {
	return optionFunc(func(p *Policy) error { p.fork = true; return nil })
}

// ExecTargetOnly forbids executing any program but the spawn's own target:
// the profile denies process-exec* except for the target's path, which is
// bound per spawn (on macOS the parameter
// [github.com/procage-go/procage/profile/seatbelt.ParamExecTarget], so such
// a cage compiles once per spawn). A script's #! interpreter is another program, so a script target
// needs a policy without it. Without it, the target may execute the base's
// system programs and the policy's Exec trees.
func ExecTargetOnly() Option {
	return optionFunc(func(p *Policy) error { p.execOnly = true; return nil })
}

// Waive lifts hard-deny classes by name. Waiving [Secrets] also reopens
// writes to ~/.ssh/config, ~/.aws/config and ~/.kube/config, whose
// ProxyCommand, credential_process and exec plugins run programs as the
// user (see docs/threat-model.md, R-30).
func Waive(classes ...Class) Option {
	return optionFunc(func(p *Policy) error {
		for _, c := range classes {
			if _, err := parseClass(string(c)); err != nil {
				return &Error{Field: "waive", Value: string(c), Err: err}
			}
			p.waived = append(p.waived, c)
		}
		return nil
	})
}

// Seatbelt adds raw SBPL allow and deny rules, lowered after the policy's
// own rules and before the hard-deny classes. They are parsed and validated
// now: unknown operations or filters, modifiers other than
// [sbpl.AcceptedModifiers] and (with no-sandbox) are errors, and so are a
// broad allow (see [Broad]) the policy does not accept by name and a
// filtered allow of an operation a class in force denies without a filter
// ([ErrClassAllow]).
//
// A deny without filters is given one that matches every path (file and
// exec operations) or address (network operations), so it overrides
// filtered allows, the caller's own included, whatever Seatbelt's
// precedence between filtered and unfiltered rules ([sbpl.FilterDenies]);
// lowering refuses
// ([github.com/procage-go/procage/profile/seatbelt.ErrUnfilteredDeny]) an
// unfiltered deny of another operation that a filtered allow of the layers
// before would have to yield to, (deny default) among them: it stands for
// every operation those layers allow.
func Seatbelt(rules string) Option {
	return optionFunc(func(p *Policy) error {
		parsed, err := sbpl.ParseRules(rules)
		if err != nil {
			return &Error{Field: "seatbelt", Value: rules, Err: err}
		}
		if len(parsed) == 0 {
			return &Error{Field: "seatbelt", Value: rules, Err: errors.New("no rule")}
		}
		for i := range parsed {
			if err := parsed[i].Validate(); err != nil {
				return &Error{Field: "seatbelt", Value: rules, Err: err}
			}
			if _, err := parsed[i].Text(); err != nil {
				return &Error{Field: "seatbelt", Value: rules, Err: err} // a string it cannot write back (a control character)
			}
			parsed[i].Comment, parsed[i].Layer = "", ""
		}
		p.seatbelt = append(p.seatbelt, sbpl.FilterDenies(parsed)...)
		p.seatSrc = append(p.seatSrc, rules)
		return nil
	})
}

// Broad names a kind of Seatbelt-layer allow so wide that it reopens what
// the hard-deny classes only list: an allow of every Mach service, or of a
// prefix or pattern of them, reaches every service no class names, and
// (allow default) every operation. A policy refuses such a rule
// ([ErrBroadAllow]) unless it accepts the kind with [AcceptBroad]. The
// hard-deny classes still apply after an accepted broad allow.
type Broad string

const (
	// BroadMachLookup: a mach-lookup allow without filters, or with any
	// filter but exact global-name, local-name or xpc-service-name.
	BroadMachLookup Broad = "mach-lookup"
	// BroadDefault: (allow default).
	BroadDefault Broad = "default"
)

// ErrBroadAllow is wrapped by the error for a Seatbelt-layer allow of a
// [Broad] kind the policy does not accept.
var ErrBroadAllow = errors.New("broad allow not accepted")

// AcceptBroad accepts Seatbelt-layer allows of the named broad kinds.
func AcceptBroad(kinds ...Broad) Option {
	return optionFunc(func(p *Policy) error {
		for _, k := range kinds {
			if k != BroadMachLookup && k != BroadDefault {
				return &Error{Field: "accept_broad", Value: string(k), Err: errors.New("unknown broad kind (known: mach-lookup, default)")}
			}
			p.broad = append(p.broad, k)
		}
		return nil
	})
}

// AcceptGaps accepts the named gaps ([Gap]): the Linux lowering leaves
// them unenforced, listed in its plan, instead of refusing the policy. A
// policy saved with its accepted gaps (JSON "accept_gaps") runs again as
// it was accepted. Gaps mean nothing on macOS.
func AcceptGaps(gaps ...Gap) Option {
	return optionFunc(func(p *Policy) error {
		for _, g := range gaps {
			if _, err := ParseGap(string(g)); err != nil {
				return &Error{Field: "accept_gaps", Value: string(g), Err: fmt.Errorf("unknown gap (known: %s)", gapNames())}
			}
			p.gaps = append(p.gaps, g)
		}
		return nil
	})
}

// Home sets the home directory the hard-deny classes protect (~/.ssh,
// shell startup files), an absolute, normalised path. Without it the
// caller's own is protected (package cage: os.UserHomeDir, or
// cage.WithHome). A policy that names one protects that directory for
// every user who runs it, and not theirs: set it to replay a plan
// exactly, not in a policy others share.
func Home(dir string) Option {
	return optionFunc(func(p *Policy) error {
		if err := CheckPath(dir); err != nil {
			return &Error{Field: "home", Value: dir, Err: err}
		}
		p.home = dir
		return nil
	})
}

// exactNames are the Mach filters that name one service.
var exactNames = []string{"global-name", "local-name", "xpc-service-name"}

// broadKind reports whether r is a broad allow, and of which kind.
func broadKind(r sbpl.Rule) (Broad, bool) {
	if r.Effect != sbpl.Allow {
		return "", false
	}
	mach := false
	for _, op := range r.Ops {
		if op == "default" {
			return BroadDefault, true
		}
		mach = mach || sbpl.Covers(op, "mach-lookup")
	}
	if !mach {
		return "", false
	}
	if len(r.Filters) == 0 {
		return BroadMachLookup, true
	}
	for _, f := range r.Filters {
		if !slices.Contains(exactNames, f.Name) || len(f.Args) != 1 {
			return BroadMachLookup, true
		}
		if _, ok := f.Args[0].(sbpl.Str); !ok {
			return BroadMachLookup, true
		}
	}
	return "", false
}

// checkBroad refuses broad Seatbelt-layer allows the policy does not accept.
func (p *Policy) checkBroad() error {
	for _, r := range p.seatbelt {
		if k, ok := broadKind(r); ok && !slices.Contains(p.broad, k) {
			text, _ := r.Text()
			return &Error{Field: "seatbelt", Value: text, Err: fmt.Errorf("%w: %s", ErrBroadAllow, k)}
		}
	}
	return nil
}

// ErrClassAllow is wrapped by the error for a filtered Seatbelt-layer
// allow naming an operation that a hard-deny class in force denies without
// a filter (lsopen, appleevent-send, job-creation, iokit-open-user-client,
// pseudo-tty: no filter is known to match every instance; a class's file
// and network denies are lowered with one that does, see
// [github.com/procage-go/procage/profile/seatbelt.Lower]). The class would
// beat it only if Seatbelt ranks a later unfiltered deny above an earlier
// filtered allow, which is unmeasured; the allow is refused instead of
// depending on it. Waive the class to allow the
// operation.
var ErrClassAllow = errors.New("filtered allow of an operation a hard-deny class denies")

// unfilteredClassOps are the operations each hard-deny class denies
// without a filter in the Seatbelt lowering, where no filter is known to
// match every instance; profile/seatbelt's tests check the lowering
// against this list.
var unfilteredClassOps = map[Class][]string{
	ServiceManager: {"lsopen", "appleevent-send", "job-creation", "iokit-open-user-client", "pseudo-tty"},
}

// checkClassAllows refuses filtered Seatbelt-layer allows of the
// operations the classes in force deny without a filter.
func (p *Policy) checkClassAllows() error {
	for _, c := range Classes() {
		if p.Waived(c) {
			continue
		}
		for _, r := range p.seatbelt {
			if r.Effect != sbpl.Allow || len(r.Filters) == 0 {
				continue
			}
			for _, op := range r.Ops {
				if slices.Contains(unfilteredClassOps[c], op) {
					text, _ := r.Text()
					return &Error{Field: "seatbelt", Value: text, Err: fmt.Errorf("%w: %s (class %s)", ErrClassAllow, op, c)}
				}
			}
		}
	}
	return nil
}

// New returns a policy on base with the given options.
func New(base Base, opts ...Option) (Policy, error) {
	if base != BaseV1 {
		return Policy{}, &Error{Field: "base", Value: base.String(), Err: errors.New("unknown base (known: v1)")}
	}
	p := Policy{base: base}
	return p.with(opts)
}

// With returns a copy of p with more options applied; p is unchanged.
func (p Policy) With(opts ...Option) (Policy, error) {
	if !p.validated {
		return Policy{}, errors.New("profile: Policy.With on a zero Policy")
	}
	return p.with(opts)
}

func (p Policy) with(opts []Option) (Policy, error) {
	q := p.clone()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&q); err != nil {
			return Policy{}, err
		}
	}
	if err := q.checkBroad(); err != nil {
		return Policy{}, err
	}
	if err := q.checkClassAllows(); err != nil {
		return Policy{}, err
	}
	if err := q.checkHosts(); err != nil {
		return Policy{}, err
	}
	if q.listenAny && q.network != NetworkOn {
		return Policy{}, &Error{Field: "network.listen_any", Err: errors.New("listening on every interface needs network on")}
	}
	q.normalize()
	q.validated = true
	return q, nil
}

// checkHosts selects proxy mode for host rules and refuses them in other
// modes, and proxy mode without them.
func (p *Policy) checkHosts() error {
	rules := len(p.allowHosts) > 0 || len(p.denyHosts) > 0 || len(p.allowAddrs) > 0
	if rules && p.network == NetworkOff {
		p.network = NetworkProxy
	}
	if rules && p.network != NetworkProxy {
		return &Error{Field: "network.allow_hosts", Err: fmt.Errorf("host and address rules need network mode proxy, not %s", p.network)}
	}
	if p.network == NetworkProxy && len(p.allowHosts) == 0 && len(p.allowAddrs) == 0 {
		return &Error{Field: "network.allow_hosts", Err: ErrNoHosts}
	}
	return nil
}

func (p Policy) clone() Policy {
	q := p
	q.fs = slices.Clone(p.fs)
	q.ports = slices.Clone(p.ports)
	q.sockets = slices.Clone(p.sockets)
	q.mach = slices.Clone(p.mach)
	q.waived = slices.Clone(p.waived)
	q.broad = slices.Clone(p.broad)
	q.seatbelt = slices.Clone(p.seatbelt)
	q.seatSrc = slices.Clone(p.seatSrc)
	q.gaps = slices.Clone(p.gaps)
	q.allowHosts = slices.Clone(p.allowHosts)
	q.denyHosts = slices.Clone(p.denyHosts)
	q.allowAddrs = slices.Clone(p.allowAddrs)
	return q
}

// normalize merges duplicate rules and sorts sets, so equal policies have
// equal plans whatever the order their options came in.
func (p *Policy) normalize() {
	merged := map[[2]string]Access{}
	for _, r := range p.fs {
		merged[[2]string{r.Target.String(), r.Path}] |= r.Access
	}
	p.fs = p.fs[:0]
	for k, a := range merged {
		t := Literal
		if k[0] == "subpath" {
			t = Subpath
		}
		p.fs = append(p.fs, FSRule{Access: a, Target: t, Path: k[1]})
	}
	slices.SortFunc(p.fs, func(a, b FSRule) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return int(a.Target) - int(b.Target)
	})
	slices.Sort(p.ports)
	p.ports = slices.Compact(p.ports)
	slices.Sort(p.sockets)
	p.sockets = slices.Compact(p.sockets)
	slices.Sort(p.mach)
	p.mach = slices.Compact(p.mach)
	slices.Sort(p.waived)
	p.waived = slices.Compact(p.waived)
	slices.Sort(p.broad)
	p.broad = slices.Compact(p.broad)
	slices.SortFunc(p.gaps, func(a, b Gap) int { return slices.Index(Gaps(), a) - slices.Index(Gaps(), b) })
	p.gaps = slices.Compact(p.gaps)
	for _, l := range []*[]string{&p.allowHosts, &p.denyHosts, &p.allowAddrs} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
}

// Base returns the policy's base.
func (p Policy) Base() Base { return p.base }

// FSRules returns the filesystem rules, merged and sorted by path.
func (p Policy) FSRules() []FSRule { return slices.Clone(p.fs) }

// Network returns the network mode and the localhost ports ([AnyPort]
// alone = every port; none with NetworkOn = no local service).
func (p Policy) Network() (NetworkMode, []int) { return p.network, slices.Clone(p.ports) }

// ListensAnyInterface reports whether a NetworkOn policy may listen on
// every interface rather than localhost only.
func (p Policy) ListensAnyInterface() bool { return p.listenAny }

// AllowedHosts returns the host patterns a NetworkProxy policy allows,
// normalised and sorted.
func (p Policy) AllowedHosts() []string { return slices.Clone(p.allowHosts) }

// DeniedHosts returns the host patterns it denies.
func (p Policy) DeniedHosts() []string { return slices.Clone(p.denyHosts) }

// AllowedAddresses returns the address rules it allows.
func (p Policy) AllowedAddresses() []string { return slices.Clone(p.allowAddrs) }

// UnixSockets returns the allowed Unix socket paths.
func (p Policy) UnixSockets() []string { return slices.Clone(p.sockets) }

// MachServices returns the allowed global Mach service names.
func (p Policy) MachServices() []string { return slices.Clone(p.mach) }

// Forking reports whether the target may create processes.
func (p Policy) Forking() bool { return p.fork }

// ExecTargetOnly reports whether only the spawn's target may be executed.
func (p Policy) ExecTargetOnly() bool { return p.execOnly }

// Waived reports whether the hard-deny class c is waived.
func (p Policy) Waived(c Class) bool { return slices.Contains(p.waived, c) }

// AcceptedBroad returns the broad Seatbelt-layer allow kinds the policy accepts.
func (p Policy) AcceptedBroad() []Broad { return slices.Clone(p.broad) }

// AcceptedGaps returns the gaps the policy accepts, in report order.
func (p Policy) AcceptedGaps() []Gap { return slices.Clone(p.gaps) }

// Home returns the home directory the policy names ([Home]), or "".
func (p Policy) Home() string { return p.home }

// SeatbeltRules returns the caller's Seatbelt-layer rules, parsed.
func (p Policy) SeatbeltRules() []sbpl.Rule { return slices.Clone(p.seatbelt) }

// Paths returns every path the policy names (filesystem rules, Unix
// sockets, and paths inside Seatbelt-layer rules), for path resolution.
func (p Policy) Paths() []string {
	var out []string
	for _, r := range p.fs {
		out = append(out, r.Path)
	}
	out = append(out, p.sockets...)
	for _, r := range p.seatbelt {
		out = append(out, r.Paths()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// AllowPaths returns the paths named by allow-type rules: filesystem
// rules, Unix sockets, and path filters of Seatbelt-layer allow rules.
// Seatbelt matches paths case-insensitively, so on a case-sensitive volume
// these would also allow the names' case variants.
func (p Policy) AllowPaths() []string {
	var out []string
	for _, r := range p.fs {
		out = append(out, r.Path)
	}
	out = append(out, p.sockets...)
	for _, r := range p.seatbelt {
		if r.Effect == sbpl.Allow {
			out = append(out, r.Paths()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String summarises the policy on one line.
func (p Policy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{base %s; fs:", p.base)
	if len(p.fs) == 0 {
		b.WriteString(" none")
	}
	for i, r := range p.fs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s", r)
	}
	fmt.Fprintf(&b, "; network %s", p.network)
	switch {
	case len(p.ports) == 1 && p.ports[0] == AnyPort:
		b.WriteString(" [any port]")
	case len(p.ports) > 0:
		fmt.Fprintf(&b, " %v", p.ports)
	}
	if p.listenAny {
		b.WriteString(" listening on any interface")
	}
	if len(p.allowHosts) > 0 {
		fmt.Fprintf(&b, " hosts %s", strings.Join(p.allowHosts, ", "))
	}
	if len(p.denyHosts) > 0 {
		fmt.Fprintf(&b, " denying %s", strings.Join(p.denyHosts, ", "))
	}
	if len(p.allowAddrs) > 0 {
		fmt.Fprintf(&b, " addresses %s", strings.Join(p.allowAddrs, ", "))
	}
	if len(p.sockets) > 0 {
		fmt.Fprintf(&b, "; unix %s", strings.Join(p.sockets, ", "))
	}
	if len(p.mach) > 0 {
		fmt.Fprintf(&b, "; mach %s", strings.Join(p.mach, ", "))
	}
	if p.fork {
		b.WriteString("; fork")
	}
	if p.execOnly {
		b.WriteString("; exec target only")
	}
	if len(p.waived) > 0 {
		fmt.Fprintf(&b, "; waived %v", p.waived)
	}
	if len(p.broad) > 0 {
		fmt.Fprintf(&b, "; accepts broad %v", p.broad)
	}
	if len(p.seatbelt) > 0 {
		fmt.Fprintf(&b, "; %d seatbelt rules", len(p.seatbelt))
	}
	if len(p.gaps) > 0 {
		fmt.Fprintf(&b, "; accepts gaps %v", p.gaps)
	}
	if p.home != "" {
		fmt.Fprintf(&b, "; home %s", p.home)
	}
	b.WriteByte('}')
	return b.String()
}

// Error reports an invalid policy part, naming the field and the value.
type Error struct {
	Field string // e.g. "fs[0].subpath"; "" for the JSON document itself
	Value string
	// Line and Column (1-based, in characters) locate the error in a JSON
	// policy read by ParseJSON; 0 otherwise.
	Line, Column int
	Err          error

	pos int64 // byte offset+1 in the JSON document; 0 unknown
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("profile: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		if e.Value != "" {
			fmt.Fprintf(&b, " %q", e.Value)
		}
		b.WriteString(": ")
	}
	fmt.Fprint(&b, e.Err)
	return b.String()
}
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns an option that applies o and passes any error it returns
// through wrap, so a caller (a CLI, a config loader) can say where the
// option came from.
func Wrap(o Option, wrap func(error) error) Option {
	return optionFunc(func(p *Policy) error {
		if err := o.apply(p); err != nil {
			return wrap(err)
		}
		return nil
	})
}
