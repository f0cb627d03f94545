package sim

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/procage-go/procage/profile/sbpl"
)

// Errors wrapped by [Decide] and [Explain]; test with errors.Is.
var (
	// ErrOperation: the access names no concrete operation of the table.
	ErrOperation = errors.New("not a concrete Seatbelt operation")
	// ErrUnknownFilter: a rule uses a filter libsandbox does not know.
	ErrUnknownFilter = errors.New("unknown filter")
	// ErrUnsupportedFilter: a rule that applies to the access uses a filter
	// libsandbox knows but the simulator does not model.
	ErrUnsupportedFilter = errors.New("filter not modelled by the simulator")
	// ErrFilterArgs: a filter's arguments do not have the expected shape.
	ErrFilterArgs = errors.New("malformed filter arguments")
	// ErrAccess: the access itself is malformed (bad address, ...).
	ErrAccess = errors.New("malformed access")
)

// Access is one operation a sandboxed process attempts, with its argument.
// Only the fields the operation uses need be set; a filter on an argument
// the access does not carry (a path filter on mach-lookup, a vnode-type
// filter with VnodeType empty) does not match.
type Access struct {
	// Op is an operation from libsandbox's table, such as file-read-data,
	// process-exec* (exec; "process-exec" is accepted as an alias),
	// network-outbound, mach-lookup. Name the most specific operation the
	// kernel checks: a family name is decided as that name only.
	Op string
	// Path is the kernel spelling of the file for file-* and process-exec*
	// operations.
	Path string
	// VnodeType is the file's type for vnode-type filters: REGULAR-FILE,
	// DIRECTORY, SYMLINK, ... (sandblaster filters.json).
	VnodeType string
	// Addr is the endpoint of a network-* operation: "host:port" with an IP
	// address or "localhost", or an absolute Unix socket path. It is the
	// remote end for network-outbound and the local end for network-bind
	// and network-inbound.
	Addr string
	// Proto is "tcp" (the default when empty) or "udp".
	Proto string
	// Name is the name argument: the Mach service for mach-lookup, the
	// sysctl for sysctl-*, the MAC policy for system-mac-syscall, the
	// POSIX IPC name, preference domain or IOKit class for those filters.
	Name string
	// MacSyscall is the policy call number for system-mac-syscall.
	MacSyscall int
	// SocketDomain is the AF_* number for system-socket (0 = unset).
	SocketDomain int
	// Target is how the process targeted by signal, process-info*,
	// mach-task* and mach-priv-task-port relates to the caller: self, pgrp,
	// others, children, same-sandbox or initproc.
	Target string
	// Extensions are the sandbox extension classes the process holds.
	Extensions []string
	// Params binds (param "K") forms; an unbound parameter never matches.
	Params map[string]string
}

func (a Access) String() string {
	var arg string
	switch {
	case a.Path != "":
		arg = a.Path
	case a.Addr != "":
		arg = a.Addr
	case a.Name != "":
		arg = a.Name
	case a.Target != "":
		arg = "target " + a.Target
	case a.SocketDomain != 0:
		arg = "domain " + strconv.Itoa(a.SocketDomain)
	}
	if arg == "" {
		return a.Op
	}
	return a.Op + " " + arg
}

// Decision is the simulator's answer for one access.
type Decision struct {
	Allowed bool
	// Rule is the index in Profile.Rules of the rule that decided, or -1
	// when no rule covers the operation (see Default).
	Rule int
	// Text is the deciding rule's SBPL text; Layer its layer.
	Text  string
	Layer string
	// Default is set when the decision is the profile's fallback: a
	// (deny default) or (allow default) rule, or no rule at all.
	Default bool
	// Op is the operation decided.
	Op string
}

func (d Decision) String() string {
	verdict := "denied"
	if d.Allowed {
		verdict = "allowed"
	}
	switch {
	case d.Rule < 0:
		return fmt.Sprintf("%s by default (no rule covers %s)", verdict, d.Op)
	case d.Default:
		return verdict + " by default"
	case d.Layer != "":
		return fmt.Sprintf("%s by rule %d (%s): %s", verdict, d.Rule, d.Layer, d.Text)
	}
	return fmt.Sprintf("%s by rule %d: %s", verdict, d.Rule, d.Text)
}

// RuleError reports a rule the simulator cannot evaluate.
type RuleError struct {
	Index int    // position in Profile.Rules
	Rule  string // the rule's text
	Err   error
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("sim: rule %d %s: %v", e.Index, e.Rule, e.Err)
}
func (e *RuleError) Unwrap() error { return e.Err }

// defaultOpen are the operations (deny default) does not cover: Chromium's
// renderer denies iokit-get-properties, process-info* and nvram* "because
// these operations are allowed by default" (crbug 799149), and Apple's
// Security-project profiles follow (deny default) with (deny
// file-map-executable process-info* nvram*) [confirmed in those profiles;
// unmeasured on macOS 26].
var defaultOpen = []string{"process-info*", "nvram*", "iokit-get-properties", "file-map-executable"}

func isDefaultOpen(op string) bool {
	return slices.ContainsFunc(defaultOpen, func(w string) bool { return sbpl.Covers(w, op) })
}

// canonicalOp maps process-exec, which profiles write (Codex's
// (allow process-exec (path "/bin/ps") ...), fence's (deny process-exec
// ...)) but libsandbox's table does not list, to the table's
// process-exec*, the operation exec is checked as [inferred: the table has
// no process-exec entry; process-exec-interpreter and
// process-exec-update-label are the only names below it].
func canonicalOp(op string) string {
	if op == "process-exec" {
		return "process-exec*"
	}
	return op
}

// checkOp canonicalises an access's operation and checks that it is one
// the kernel can check: a name from libsandbox's table other than default.
// Family names are accepted because some are themselves checked
// (process-exec*).
func checkOp(op *string) error {
	*op = canonicalOp(*op)
	if !sbpl.IsOperation(*op) || *op == "default" {
		return fmt.Errorf("sim: %q: %w", *op, ErrOperation)
	}
	return nil
}

// specificity ranks how closely a rule's operation names the concrete
// operation, or returns -2 if it does not cover it. A concrete name beats
// any wildcard whatever the order [reported: agent-safehouse ssh.bats,
// measured; confirmed: fence macos.go]. Among wildcards a longer
// family (file-read*) beats a shorter one (file*), since operations
// inherit their parent family's rules [inferred], and "default" comes last.
func specificity(op, concrete string) int {
	op = canonicalOp(op)
	switch {
	case op == concrete:
		return 1 << 20
	case op == "default":
		if isDefaultOpen(concrete) {
			return -2
		}
		return -1
	case sbpl.Covers(op, concrete):
		return len(op)
	}
	return -2
}

// Decide answers whether profile allows access, and which rule decided.
//
// Semantics: a rule applies when one of its operations covers the access's
// operation ([sbpl.Covers]) and one of its filters matches (a rule without
// filters always matches). The most specific applicable rule decides
// (see specificity); among equally specific ones the last wins
// [confirmed: Bazel's generator, agent-safehouse docs, nolabs-ai/nono#1324].
// Filter specificity does not matter: a later subpath allow reopens an
// earlier literal deny [confirmed: Codex seatbelt.rs]. When
// no rule applies the operation is allowed: Seatbelt's fallback without a
// default rule is allow [inferred: (deny default) exists to set it
// (Chromium's design doc), and its stragglers are "allowed by default"
// (crbug 799149)].
func Decide(profile *sbpl.Profile, access Access) (Decision, error) {
	if profile == nil {
		return Decision{}, errors.New("sim: Decide on a nil profile")
	}
	if err := checkOp(&access.Op); err != nil {
		return Decision{}, err
	}
	if err := checkNames(profile.Rules); err != nil {
		return Decision{}, err
	}
	best, bestIdx, bestDefault := -2, -1, false
	for i := range profile.Rules {
		r := &profile.Rules[i]
		spec := -2
		for _, op := range r.Ops {
			spec = max(spec, specificity(op, access.Op))
		}
		if spec == -2 {
			continue
		}
		ok, err := ruleMatches(r, &access)
		if err != nil {
			text, _ := r.Text()
			return Decision{}, &RuleError{Index: i, Rule: text, Err: err}
		}
		if ok && spec >= best {
			best, bestIdx, bestDefault = spec, i, spec == -1
		}
	}
	if bestIdx < 0 {
		return Decision{Allowed: true, Rule: -1, Default: true, Op: access.Op}, nil
	}
	r := &profile.Rules[bestIdx]
	text, err := r.Text()
	if err != nil {
		return Decision{}, &RuleError{Index: bestIdx, Rule: fmt.Sprintf("(%s %s ...)", r.Effect, strings.Join(r.Ops, " ")), Err: err}
	}
	return Decision{Allowed: r.Effect == sbpl.Allow, Rule: bestIdx, Text: text, Layer: r.Layer, Default: bestDefault, Op: access.Op}, nil
}

// ruleMatches reports whether one of the rule's filters matches (sbpl
// model: several filters in one rule match when any of them matches).
func ruleMatches(r *sbpl.Rule, a *Access) (bool, error) {
	if len(r.Filters) == 0 {
		return true, nil
	}
	// Evaluate every filter, so an unsupported filter is an error even when
	// an earlier one already matched.
	any := false
	for _, f := range r.Filters {
		ok, err := match(f, a, 0)
		if err != nil {
			return false, err
		}
		any = any || ok
	}
	return any, nil
}

// nameFilters are the filters on the access's Name (sandblaster
// filters.json; Codex, Chromium and Gemini CLI profiles use them). Each also
// has -prefix and (where the table has one) -regex forms.
var nameFilters = map[string]bool{
	"global-name": true, "local-name": true, "xpc-service-name": true,
	"sysctl-name": true, "ipc-posix-name": true, "preference-domain": true,
	"iokit-user-client-class": true, "iokit-registry-entry-class": true,
	"mac-policy-name": true,
}

const maxDepth = 64

func match(f *sbpl.Filter, a *Access, depth int) (bool, error) {
	if f == nil {
		return false, fmt.Errorf("nil filter: %w", ErrFilterArgs)
	}
	if depth > maxDepth {
		return false, fmt.Errorf("filters nested deeper than %d: %w", maxDepth, ErrFilterArgs)
	}
	switch f.Name {
	case "require-all", "require-any", "require-not":
		return matchLogic(f, a, depth)
	case "literal", "path", "path-literal", "subpath", "prefix", "path-prefix", "regex", "path-regex", "path-ancestors":
		return matchPath(f, a, pathOf(a))
	case "local", "remote":
		return matchNetwork(f, a, depth)
	case "vnode-type":
		s, err := symArg(f)
		if err != nil {
			return false, err
		}
		return a.VnodeType != "" && s == a.VnodeType, nil
	case "target":
		s, err := symArg(f)
		if err != nil {
			return false, err
		}
		return matchTarget(s, a.Target), nil
	case "extension", "extension-class":
		s, bound, err := strArg(f, a)
		if err != nil || !bound {
			return false, err
		}
		return slices.Contains(a.Extensions, s), nil
	case "mac-syscall-number":
		n, err := intArg(f, nil)
		if err != nil {
			return false, err
		}
		return a.Op == "system-mac-syscall" && n == a.MacSyscall, nil
	case "socket-domain":
		n, err := intArg(f, socketDomains)
		if err != nil {
			return false, err
		}
		return a.SocketDomain != 0 && n == a.SocketDomain, nil
	}
	for base := range nameFilters {
		rest, ok := strings.CutPrefix(f.Name, base)
		if !ok || (rest != "" && rest != "-prefix" && rest != "-regex") {
			continue
		}
		s, bound, err := strArg(f, a)
		if err != nil || !bound || a.Name == "" {
			return false, err
		}
		switch rest {
		case "-prefix":
			return strings.HasPrefix(a.Name, s), nil
		case "-regex":
			re, err := compileRegex(s, false)
			if err != nil {
				return false, err
			}
			return re.MatchString(a.Name), nil
		}
		return a.Name == s, nil
	}
	if !knownFilter(f.Name) {
		return false, fmt.Errorf("(%s): %w", f.Name, ErrUnknownFilter)
	}
	return false, fmt.Errorf("(%s): %w", f.Name, ErrUnsupportedFilter)
}

var knownFilters sync.Map // filter name -> bool

// knownFilter reports whether libsandbox knows the filter name, asking
// sbpl's validator (the generated filter table) with no arguments: only an
// unknown name yields its "unknown filter" error.
func knownFilter(name string) bool {
	if v, ok := knownFilters.Load(name); ok {
		return v.(bool)
	}
	err := (&sbpl.Rule{Effect: sbpl.Deny, Ops: []string{"default"}, Filters: []*sbpl.Filter{{Name: name}}}).Validate()
	known := err == nil || !strings.Contains(err.Error(), "unknown filter")
	knownFilters.Store(name, known)
	return known
}

// checkNames fails on the first filter name libsandbox does not know,
// anywhere in the rules, so an unknown name is an error whatever the access.
func checkNames(rules []sbpl.Rule) error {
	var walk func(f *sbpl.Filter, depth int) error
	walk = func(f *sbpl.Filter, depth int) error {
		if f == nil || depth > maxDepth || f.Name == "param" {
			return nil // reported by match when the rule applies
		}
		if !knownFilter(f.Name) {
			return fmt.Errorf("(%s): %w", f.Name, ErrUnknownFilter)
		}
		for _, v := range f.Args {
			if sub, ok := v.(*sbpl.Filter); ok {
				if err := walk(sub, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := range rules {
		for _, f := range rules[i].Filters {
			if err := walk(f, 0); err != nil {
				text, _ := rules[i].Text()
				return &RuleError{Index: i, Rule: text, Err: err}
			}
		}
	}
	return nil
}

func matchLogic(f *sbpl.Filter, a *Access, depth int) (bool, error) {
	if len(f.Args) == 0 || (f.Name == "require-not" && len(f.Args) != 1) {
		return false, fmt.Errorf("(%s) with %d arguments: %w", f.Name, len(f.Args), ErrFilterArgs)
	}
	all, any := true, false
	for _, v := range f.Args {
		sub, ok := v.(*sbpl.Filter)
		if !ok {
			return false, fmt.Errorf("(%s) takes filters: %w", f.Name, ErrFilterArgs)
		}
		m, err := match(sub, a, depth+1)
		if err != nil {
			return false, err
		}
		all, any = all && m, any || m
	}
	switch f.Name {
	case "require-all":
		return all, nil
	case "require-any":
		return any, nil
	}
	return !any, nil
}

// pathOf is the path path filters see: the file, or for a network
// operation on a Unix socket the socket path (nono denies a socket with
// network-outbound (path ...) [confirmed: nono]).
func pathOf(a *Access) string {
	if a.Path != "" {
		return a.Path
	}
	if strings.HasPrefix(a.Addr, "/") && strings.HasPrefix(a.Op, "network-") {
		return a.Addr
	}
	return ""
}

func matchPath(f *sbpl.Filter, a *Access, path string) (bool, error) {
	s, bound, err := strArg(f, a)
	if err != nil || !bound || path == "" {
		return false, err
	}
	switch f.Name {
	case "literal", "path", "path-literal":
		return matchLiteral(s, path), nil
	case "subpath":
		return matchSubpath(s, path), nil
	case "prefix", "path-prefix":
		return matchPrefix(s, path), nil
	case "path-ancestors":
		return matchAncestors(s, path), nil
	}
	return matchPathRegex(s, path)
}

// matchTarget: a target word matches itself; same-sandbox also matches
// self and children, which inherit the caller's sandbox [inferred: a
// sandbox is inherited across fork and exec].
func matchTarget(rule, target string) bool {
	if target == "" {
		return false
	}
	if rule == target {
		return true
	}
	return rule == "same-sandbox" && (target == "self" || target == "children")
}

// socketDomains are the AF_* values of macOS's <sys/socket.h> (AF_UNIX 1,
// AF_INET 2, AF_INET6 30, AF_SYSTEM 32) [confirmed: xnu bsd/sys/socket.h,
// Go's syscall/zerrors_darwin_arm64.go].
var socketDomains = map[string]int{"AF_UNIX": 1, "AF_LOCAL": 1, "AF_INET": 2, "AF_INET6": 30, "AF_SYSTEM": 32}

func symArg(f *sbpl.Filter) (string, error) {
	if len(f.Args) == 1 {
		if s, ok := f.Args[0].(sbpl.Sym); ok {
			return string(s), nil
		}
	}
	return "", fmt.Errorf("(%s) takes one symbol: %w", f.Name, ErrFilterArgs)
}

func intArg(f *sbpl.Filter, names map[string]int) (int, error) {
	if len(f.Args) == 1 {
		switch v := f.Args[0].(type) {
		case sbpl.Int:
			return int(v), nil
		case sbpl.Sym:
			if n, ok := names[string(v)]; ok {
				return n, nil
			}
			return 0, fmt.Errorf("(%s %s): the simulator does not know this value: %w", f.Name, v, ErrUnsupportedFilter)
		}
	}
	return 0, fmt.Errorf("(%s) takes one integer: %w", f.Name, ErrFilterArgs)
}

// strArg returns a filter's string argument, resolving (param "K") from
// the access; bound is false for an unbound parameter, which then never
// matches (libsandbox gives a non-string for a missing parameter, which
// Chromium's common.sb tests with string?; the simulator treats the filter
// as matching nothing).
func strArg(f *sbpl.Filter, a *Access) (s string, bound bool, err error) {
	if len(f.Args) != 1 {
		return "", false, fmt.Errorf("(%s) takes one string: %w", f.Name, ErrFilterArgs)
	}
	return valueString(f.Args[0], f.Name, a)
}

func valueString(v sbpl.Value, name string, a *Access) (string, bool, error) {
	switch v := v.(type) {
	case sbpl.Str:
		return string(v), true, nil
	case *sbpl.Filter:
		if v != nil && v.Name == "param" && len(v.Args) == 1 {
			if k, ok := v.Args[0].(sbpl.Str); ok {
				s, bound := a.Params[string(k)]
				return s, bound, nil
			}
		}
	}
	return "", false, fmt.Errorf("(%s) takes a string or (param \"K\"): %w", name, ErrFilterArgs)
}

// matchNetwork evaluates (local|remote PROTO "host:port") and
// (local|remote unix-socket PATH-FILTER). remote applies to
// network-outbound (the peer), local to network-bind and network-inbound
// [confirmed: Codex local network policy]. The simulator does
// not model the other end of a connection: a local filter on
// network-outbound never matches, although sandbox-runtime reports that
// (local ip "*:*") on outbound permits all egress [reported:
// anthropic-experimental/sandbox-runtime#131].
func matchNetwork(f *sbpl.Filter, a *Access, depth int) (bool, error) {
	if len(f.Args) != 2 {
		return false, fmt.Errorf("(%s) takes a protocol and an address: %w", f.Name, ErrFilterArgs)
	}
	proto, ok := f.Args[0].(sbpl.Sym)
	if !ok {
		return false, fmt.Errorf("(%s): the protocol must be a symbol: %w", f.Name, ErrFilterArgs)
	}
	var applies bool
	if f.Name == "remote" {
		applies = a.Op == "network-outbound"
	} else {
		applies = a.Op == "network-bind" || a.Op == "network-inbound"
	}
	if proto == "unix-socket" || proto == "unix" {
		sub, ok := f.Args[1].(*sbpl.Filter)
		if !ok {
			return false, fmt.Errorf("(%s %s) takes a path filter: %w", f.Name, proto, ErrFilterArgs)
		}
		switch sub.Name {
		case "literal", "path", "path-literal", "subpath", "prefix", "path-prefix", "regex", "path-regex":
		default:
			return false, fmt.Errorf("(%s %s (%s)): not a path filter: %w", f.Name, proto, sub.Name, ErrFilterArgs)
		}
		if !applies || !strings.HasPrefix(a.Addr, "/") {
			return false, nil
		}
		return matchPath(sub, a, a.Addr)
	}
	s, bound, err := valueString(f.Args[1], f.Name, a)
	if err != nil || !bound {
		return false, err
	}
	rhost, rport, ok := strings.Cut(s, ":")
	if !ok || (rhost != "*" && rhost != "localhost") {
		return false, fmt.Errorf("(%s %s %q): host must be * or localhost: %w", f.Name, proto, s, ErrFilterArgs)
	}
	transport, family := string(proto), ""
	if strings.HasSuffix(transport, "4") || strings.HasSuffix(transport, "6") {
		transport, family = transport[:len(transport)-1], transport[len(transport)-1:]
	}
	if transport != "ip" && transport != "tcp" && transport != "udp" {
		return false, fmt.Errorf("(%s %s): unknown protocol: %w", f.Name, proto, ErrFilterArgs)
	}
	if !applies || a.Addr == "" || strings.HasPrefix(a.Addr, "/") {
		return false, nil
	}
	ep, err := parseEndpoint(a.Addr)
	if err != nil {
		return false, err
	}
	aproto := a.Proto
	if aproto == "" {
		aproto = "tcp"
	}
	if transport != "ip" && transport != aproto {
		return false, nil
	}
	if family != "" && ep.family != "" && family != ep.family {
		return false, nil
	}
	if rhost == "localhost" && !ep.loopback {
		return false, nil
	}
	return rport == "*" || rport == strconv.Itoa(ep.port), nil
}

type endpoint struct {
	loopback bool
	family   string // "4", "6", or "" for the name localhost
	port     int
}

// parseEndpoint reads "host:port". "localhost" and loopback addresses
// (127.0.0.0/8, ::1) match the filter host localhost [inferred: the
// filter's localhost is the loopback interface].
func parseEndpoint(addr string) (endpoint, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return endpoint{}, fmt.Errorf("sim: address %q: %v: %w", addr, err, ErrAccess)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return endpoint{}, fmt.Errorf("sim: address %q: port must be 0..65535: %w", addr, ErrAccess)
	}
	if strings.EqualFold(host, "localhost") {
		return endpoint{loopback: true, port: n}, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return endpoint{}, fmt.Errorf("sim: address %q: host must be an IP address or localhost (Seatbelt sees addresses, not names): %w", addr, ErrAccess)
	}
	fam := "6"
	if ip.To4() != nil {
		fam = "4"
	}
	return endpoint{loopback: ip.IsLoopback(), family: fam, port: n}, nil
}
