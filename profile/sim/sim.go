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
	// ErrUndecidable: a rule the simulator cannot evaluate could decide
	// the access; the [*RuleError] names it and wraps the cause too.
	ErrUndecidable = errors.New("undecidable")
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
	// Source is the existing file a file-link or file-clone access makes
	// a new name (Path) for; see [Variant.Link].
	Source string
}

// access is an Access with what the variant changes in filter matching.
type access struct {
	Access
	notSelf bool // Variant.SameSandboxNotSelf
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
// file-map-executable process-info* nvram*) [confirmed in
// those profiles; unmeasured on macOS 26].
var defaultOpen = []string{"process-info*", "nvram*", "iokit-get-properties", "file-map-executable"}

func isDefaultOpen(op string) bool {
	return slices.ContainsFunc(defaultOpen, func(w string) bool { return sbpl.Covers(w, op) })
}

// opAliases are operation names Apple's SBPL prelude defines as other
// operations (libsandbox's sbpl_v1.scm as extracted in 0xbf00/simbple
// src/scm/sbpl_v1.scm: "(define process-exec process-exec*)",
// "(define ipc-posix-shm ipc-posix-shm*)", ...). iokit-open is written by
// Chromium's renderer.sb and Apple's profiles but is in neither the
// prelude nor the 14.4.1 table, which lists iokit-open* above
// iokit-open-service and iokit-open-user-client [inferred: the family].
var opAliases = map[string]string{
	"process-exec":               "process-exec*",
	"ipc-posix-sem":              "ipc-posix-sem*",
	"ipc-posix-shm":              "ipc-posix-shm*",
	"file-unlink":                "file-write-unlink",
	"file-fsctl":                 "system-fsctl",
	"file-write-mount":           "file-mount",
	"file-write-unmount":         "file-unmount",
	"file-write-umount":          "file-unmount",
	"file-issue-extension*":      "file-issue-extension",
	"file-issue-extension-read":  "file-issue-extension",
	"file-issue-extension-write": "file-issue-extension",
	"system-misc":                "system*",
	"time-set":                   "system-set-time",
	"managed-preference*":        "managed-preference-read",
	"iokit-open":                 "iokit-open*",
}

// filterAliases are filter names the same prelude defines as others
// ("(define iokit-user-client-class iokit-registry-entry-class)", "(define
// from local)", "(define to remote)"). literal, prefix, regex and
// path-literal, also aliases there, are matched under both names.
var filterAliases = map[string]string{
	"iokit-user-client-class":       "iokit-registry-entry-class",
	"iokit-user-client-class-regex": "iokit-registry-entry-class-regex",
	"from":                          "local",
	"to":                            "remote",
}

// canonicalOp maps an alias to the operation it stands for.
func canonicalOp(op string) string {
	if c, ok := opAliases[op]; ok {
		return c
	}
	return op
}

// knownOp reports whether a rule's operation (after canonicalOp) is one
// the simulator can rank: a name of libsandbox's table, or a family
// ("ipc-posix-shm-read*", which Codex's and Chromium's profiles write)
// covering at least one name of the table.
func knownOp(op string) bool {
	if sbpl.IsOperation(op) {
		return true
	}
	if !strings.HasSuffix(op, "*") {
		return false
	}
	return slices.ContainsFunc(sbpl.Operations(), func(c string) bool { return !sbpl.IsWildcard(c) && sbpl.Covers(op, c) })
}

// mayCover reports whether an operation name the simulator does not know
// could stand for the concrete operation: every name of libsandbox's table
// starts with its family (file-, network-, mach-, ...), so an unknown name
// is taken to touch only its own family [inferred from the table].
func mayCover(unknown, concrete string) bool {
	fam, _, _ := strings.Cut(strings.TrimSuffix(unknown, "*"), "-")
	cfam, _, _ := strings.Cut(concrete, "-")
	return fam == cfam
}

// checkOp canonicalises an access's operation and checks that it is one
// the kernel can check: a name from libsandbox's table other than default.
// Family names are accepted because some are themselves checked
// (process-exec*).
func checkOp(op *string) error {
	*op = canonicalOp(*op)
	if !sbpl.IsOperation(*op) || *op == "default" {
		return fmt.Errorf("sim: %q: %w; name one operation such as file-read-data", *op, ErrOperation)
	}
	return nil
}

// specificity ranks how closely a rule's operation names the concrete
// operation, or returns -2 if it does not cover it. A concrete name beats
// any wildcard whatever the order. Among wildcards a longer family
// (file-read*) beats a shorter one (file*), since operations inherit their
// parent family's rules [inferred], and "default" comes last. See
// [Specificity] for the alternatives; stragglers reports whether default
// covers the operations (deny default) leaves open.
func specificity(op, concrete string, stragglers bool) int {
	switch {
	case op == concrete:
		return 1 << 20
	case op == "default":
		if isDefaultOpen(concrete) && !stragglers {
			return -2
		}
		return -1
	case sbpl.Covers(op, concrete):
		return len(op)
	}
	return -2
}

// rank orders the rules that apply to an access under v: the highest rank
// decides, and among equal ranks the last rule.
func (v Variant) rank(spec int, filtered bool) [2]int {
	switch {
	case spec < 0:
	case v.Specificity == SpecificityNone:
		spec = 0
	case v.Specificity == SpecificityConcrete && spec < 1<<20:
		spec = 0
	}
	f := 0
	if filtered {
		f = 1
	}
	switch v.Unfiltered {
	case UnfilteredLast:
		return [2]int{spec, 0}
	case UnfilteredBelowAll:
		return [2]int{f, spec}
	}
	return [2]int{spec, f}
}

func less(a, b [2]int) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }

// Decide answers whether profile allows access, and which rule decided,
// under the [Default] reading of Seatbelt.
func Decide(profile *sbpl.Profile, access Access) (Decision, error) {
	return Default.Decide(profile, access)
}

// Decide answers whether profile allows access, and which rule decided,
// under the reading v.
//
// Semantics: a rule applies when one of its operations covers the access's
// operation ([sbpl.Covers]) and one of its filters matches (a rule without
// filters always matches). The highest-ranked applicable rule decides (see
// [Variant]); among equally ranked ones the last wins (Bazel's
// DarwinSandboxedSpawnRunner: "the *last* matching rule wins";
// agent-safehouse's policy docs; nolabs-ai/nono#1324). Filter specificity
// does not matter: a later subpath allow reopens an earlier literal deny
// (Codex seatbelt.rs). When no rule applies the operation is allowed:
// Seatbelt's fallback without a default rule is allow [inferred: (deny
// default) exists to set it, and Chromium's renderer.sb calls its
// stragglers "allowed by default", crbug 799149].
//
// A rule the simulator cannot evaluate (an unknown operation or filter, a
// filter it does not model, a malformed argument) makes the decision
// undecidable only if it could outrank the rule that decides otherwise:
// the error is then a [*RuleError] wrapping [ErrUndecidable] and the
// cause. Any other access is decided as usual.
func (v Variant) Decide(profile *sbpl.Profile, access Access) (Decision, error) {
	if profile == nil {
		return Decision{}, errors.New("sim: Decide on a nil profile")
	}
	if err := checkOp(&access.Op); err != nil {
		return Decision{}, err
	}
	if access.Source == "" || (access.Op != "file-link" && access.Op != "file-clone") || v.Link == LinkDestination {
		return v.decide(profile, access)
	}
	src := access
	src.Path, src.Source = access.Source, ""
	if v.Link == LinkSource {
		return v.decide(profile, src)
	}
	d, err := v.decide(profile, access)
	if err != nil || !d.Allowed {
		return d, err
	}
	ds, err := v.decide(profile, src)
	if err != nil || !ds.Allowed {
		return ds, err
	}
	return d, nil
}

func (v Variant) decide(profile *sbpl.Profile, a Access) (Decision, error) {
	access := access{Access: a, notSelf: v.SameSandboxNotSelf}
	type candidate struct {
		rank [2]int
		idx  int
		err  error
	}
	best := candidate{rank: [2]int{-3, -3}, idx: -1}
	var unsure []candidate
	for i := range profile.Rules {
		r := &profile.Rules[i]
		spec, unknownOp := -2, ""
		for _, op := range r.Ops {
			op = canonicalOp(op)
			if !knownOp(op) {
				if mayCover(op, access.Op) {
					spec, unknownOp = max(spec, 1<<20), op
				}
				continue
			}
			spec = max(spec, specificity(op, access.Op, v.DefaultCoversStragglers))
		}
		if spec == -2 {
			continue
		}
		t, reason, err := ruleMatch(r, &access)
		if err != nil {
			return Decision{}, err
		}
		c := candidate{rank: v.rank(spec, len(r.Filters) > 0), idx: i}
		switch {
		case t == no:
		case unknownOp != "":
			c.err = fmt.Errorf("unknown operation %q: %w", unknownOp, ErrOperation)
			unsure = append(unsure, c)
		case t == maybe:
			c.err = reason
			unsure = append(unsure, c)
		case !less(c.rank, best.rank):
			best = c
		}
	}
	for _, u := range unsure {
		if !less(u.rank, best.rank) && (u.rank != best.rank || u.idx > best.idx) {
			text, _ := profile.Rules[u.idx].Text()
			return Decision{}, &RuleError{Index: u.idx, Rule: text, Err: fmt.Errorf("%w: %w", ErrUndecidable, u.err)}
		}
	}
	if best.idx < 0 {
		return Decision{Allowed: true, Rule: -1, Default: true, Op: access.Op}, nil
	}
	r := &profile.Rules[best.idx]
	text, err := r.Text()
	if err != nil {
		return Decision{}, &RuleError{Index: best.idx, Rule: fmt.Sprintf("(%s %s ...)", r.Effect, strings.Join(r.Ops, " ")), Err: err}
	}
	isDefault := slices.Contains(r.Ops, "default") && best.rank == v.rank(-1, len(r.Filters) > 0)
	return Decision{Allowed: r.Effect == sbpl.Allow, Rule: best.idx, Text: text, Layer: r.Layer, Default: isDefault, Op: access.Op}, nil
}

// tri is a filter's verdict: it matches, it does not, or the simulator
// cannot tell.
type tri int8

const (
	no tri = iota
	yes
	maybe
)

// ruleMatch reports whether one of the rule's filters matches (sbpl
// model: several filters in one rule match when any of them matches). A
// filter the simulator cannot evaluate makes the answer maybe, with the
// reason, unless another filter matches. err is set only for a malformed
// access.
func ruleMatch(r *sbpl.Rule, a *access) (t tri, reason, err error) {
	if len(r.Filters) == 0 {
		return yes, nil, nil
	}
	t = no
	for _, f := range r.Filters {
		ft, why, err := eval(f, a, 0)
		if err != nil {
			return no, nil, err
		}
		switch {
		case ft == yes:
			return yes, nil, nil
		case ft == maybe && t == no:
			t, reason = maybe, why
		}
	}
	return t, reason, nil
}

// eval evaluates a filter in three-valued logic: require-all is no if any
// part is no, require-any yes if any part is yes, require-not swaps yes
// and no; what cannot be evaluated is maybe.
func eval(f *sbpl.Filter, a *access, depth int) (t tri, reason, err error) {
	if f == nil || depth > maxDepth {
		return maybe, fmt.Errorf("filters nested deeper than %d: %w", maxDepth, ErrFilterArgs), nil
	}
	switch f.Name {
	case "require-all", "require-any", "require-not":
	default:
		ok, err := match(f, a, depth)
		switch {
		case errors.Is(err, ErrAccess):
			return no, nil, err
		case err != nil:
			return maybe, err, nil
		case ok:
			return yes, nil, nil
		}
		return no, nil, nil
	}
	if len(f.Args) == 0 || (f.Name == "require-not" && len(f.Args) != 1) {
		return maybe, fmt.Errorf("(%s) with %d arguments: %w", f.Name, len(f.Args), ErrFilterArgs), nil
	}
	var yesN, noN int
	for _, v := range f.Args {
		sub, ok := v.(*sbpl.Filter)
		if !ok {
			return maybe, fmt.Errorf("(%s) takes filters: %w", f.Name, ErrFilterArgs), nil
		}
		st, why, err := eval(sub, a, depth+1)
		if err != nil {
			return no, nil, err
		}
		switch st {
		case yes:
			yesN++
		case no:
			noN++
		default:
			if reason == nil {
				reason = why
			}
		}
	}
	unsure := yesN+noN < len(f.Args)
	switch f.Name {
	case "require-all":
		if noN > 0 {
			return no, nil, nil
		}
	case "require-any":
		if yesN > 0 {
			return yes, nil, nil
		}
		if !unsure {
			return no, nil, nil
		}
		return maybe, reason, nil
	default: // require-not
		if unsure {
			return maybe, reason, nil
		}
		if yesN > 0 {
			return no, nil, nil
		}
		return yes, nil, nil
	}
	if unsure {
		return maybe, reason, nil
	}
	return yes, nil, nil
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

func match(f *sbpl.Filter, a *access, depth int) (bool, error) {
	if f == nil {
		return false, fmt.Errorf("nil filter: %w", ErrFilterArgs)
	}
	if depth > maxDepth {
		return false, fmt.Errorf("filters nested deeper than %d: %w", maxDepth, ErrFilterArgs)
	}
	name := f.Name
	if c, ok := filterAliases[name]; ok {
		name = c
	}
	switch name {
	case "require-all", "require-any", "require-not":
		t, why, err := eval(f, a, depth)
		switch {
		case err != nil:
			return false, err
		case t == maybe:
			return false, why
		}
		return t == yes, nil
	case "literal", "path", "path-literal", "subpath", "prefix", "path-prefix", "regex", "path-regex", "path-ancestors":
		return matchPath(f, a, pathOf(a))
	case "local", "remote":
		return matchNetwork(f, name, a)
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
		return matchTarget(s, a.Target, a.notSelf), nil
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
		rest, ok := strings.CutPrefix(name, base)
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
	if !knownFilter(name) {
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

// pathOf is the path path filters see: the file, or for a network
// operation on a Unix socket the socket path (nono denies a socket with
// network-outbound (path ...) [confirmed: nono]).
func pathOf(a *access) string {
	if a.Path != "" {
		return a.Path
	}
	if strings.HasPrefix(a.Addr, "/") && strings.HasPrefix(a.Op, "network-") {
		return a.Addr
	}
	return ""
}

func matchPath(f *sbpl.Filter, a *access, path string) (bool, error) {
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
// children, which inherit the caller's sandbox across fork and exec
// [inferred], and the process itself unless notSelf (see
// [Variant.SameSandboxNotSelf]).
func matchTarget(rule, target string, notSelf bool) bool {
	if target == "" {
		return false
	}
	if rule == target {
		return true
	}
	return rule == "same-sandbox" && ((target == "self" && !notSelf) || target == "children")
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
func strArg(f *sbpl.Filter, a *access) (s string, bound bool, err error) {
	if len(f.Args) != 1 {
		return "", false, fmt.Errorf("(%s) takes one string: %w", f.Name, ErrFilterArgs)
	}
	return valueString(f.Args[0], f.Name, a)
}

func valueString(v sbpl.Value, name string, a *access) (string, bool, error) {
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
//
// With only a protocol, (remote ip), (local ip) or (remote unix-socket)
// means any address of that kind: Bazel's darwin sandbox and early
// sandbox-runtime write (allow network* (remote unix-socket)) after (deny
// network*) to keep Unix sockets [inferred: the address narrows, so its
// absence does not].
func matchNetwork(f *sbpl.Filter, dir string, a *access) (bool, error) {
	if len(f.Args) != 1 && len(f.Args) != 2 {
		return false, fmt.Errorf("(%s) takes a protocol and an address: %w", f.Name, ErrFilterArgs)
	}
	proto, ok := f.Args[0].(sbpl.Sym)
	if !ok {
		return false, fmt.Errorf("(%s): the protocol must be a symbol: %w", f.Name, ErrFilterArgs)
	}
	var applies bool
	if dir == "remote" {
		applies = a.Op == "network-outbound"
	} else {
		applies = a.Op == "network-bind" || a.Op == "network-inbound"
	}
	unix := strings.HasPrefix(a.Addr, "/")
	if proto == "unix-socket" || proto == "unix" {
		if len(f.Args) == 1 {
			return applies && unix, nil
		}
		sub, ok := f.Args[1].(*sbpl.Filter)
		if !ok {
			return false, fmt.Errorf("(%s %s) takes a path filter: %w", f.Name, proto, ErrFilterArgs)
		}
		switch sub.Name {
		case "literal", "path", "path-literal", "subpath", "prefix", "path-prefix", "regex", "path-regex":
		default:
			return false, fmt.Errorf("(%s %s (%s)): not a path filter: %w", f.Name, proto, sub.Name, ErrFilterArgs)
		}
		if !applies || !unix {
			return false, nil
		}
		return matchPath(sub, a, a.Addr)
	}
	if len(f.Args) == 1 {
		s, err := matchNetworkAddr(f, proto, "*:*", applies, a)
		return s, err
	}
	s, bound, err := valueString(f.Args[1], f.Name, a)
	if err != nil || !bound {
		return false, err
	}
	return matchNetworkAddr(f, proto, s, applies, a)
}

func matchNetworkAddr(f *sbpl.Filter, proto sbpl.Sym, s string, applies bool, a *access) (bool, error) {
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
