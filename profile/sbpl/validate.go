package sbpl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrNoSandbox is returned for any rule carrying (with no-sandbox), which
// would run an exec'd program outside the sandbox [confirmed: Codex's base
// policy runs /bin/ps so; reported: Homebrew/brew#21157].
var ErrNoSandbox = errors.New("(with no-sandbox) runs the target unsandboxed and is never accepted")

// ErrModifier is returned for a modifier libsandbox knows whose effect is
// not documented well enough to accept: default-sandbox, sip-override,
// grant, authority, user-approval and the rest of the macOS 15 modifier
// table (0x3c3e/sandblaster modifiers.json) other than the six in
// [AcceptedModifiers]. Some of them, by name, widen what a rule does
// beyond its operations and filters, as no-sandbox does.
var ErrModifier = errors.New("modifier not accepted")

// AcceptedModifiers are the modifiers whose effect is known: report,
// no-report and no-log change logging, message tags the log line (Apple
// Security profiles, sandbox-runtime), errno picks the error a denial
// returns, and send-signal signals the caller on a denial (Chromium's
// renderer.sb). None of them changes what a rule allows.
var AcceptedModifiers = []string{"errno", "message", "no-log", "no-report", "report", "send-signal"}

// RuleError reports why a rule is not acceptable.
type RuleError struct {
	Rule string // the rule as written, or as far as it could be written
	Err  error
}

func (e *RuleError) Error() string { return fmt.Sprintf("sbpl: rule %s: %v", e.Rule, e.Err) }
func (e *RuleError) Unwrap() error { return e.Err }

// Validate checks that the rule uses only known operations and filters,
// with arguments of the right shape, only the [AcceptedModifiers], and
// never (with no-sandbox). It is what makes a typo fail when a policy is built rather
// than when libsandbox compiles the profile in a child.
func (r *Rule) Validate() error {
	text, werr := r.Text()
	if werr != nil {
		text = fmt.Sprintf("(%s %s ...)", r.Effect, strings.Join(r.Ops, " "))
	}
	fail := func(err error) error { return &RuleError{Rule: text, Err: err} }
	if werr != nil {
		return fail(werr)
	}
	for _, op := range r.Ops {
		if !IsOperation(op) {
			return fail(fmt.Errorf("unknown operation %q", op))
		}
	}
	for _, f := range r.Filters {
		if err := validateFilter(f, 0); err != nil {
			return fail(err)
		}
	}
	for _, m := range r.Modifiers {
		if m.Name == "no-sandbox" {
			return fail(ErrNoSandbox)
		}
		if !modifierSet[m.Name] {
			return fail(fmt.Errorf("unknown modifier (with %s)", m.Name))
		}
		if !slices.Contains(AcceptedModifiers, m.Name) {
			return fail(fmt.Errorf("(with %s): %w", m.Name, ErrModifier))
		}
		for _, a := range m.Args {
			if f, ok := a.(*Filter); ok {
				return fail(fmt.Errorf("modifier (with %s) takes no nested form %s", m.Name, f))
			}
		}
	}
	return nil
}

func validateFilter(f *Filter, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("filters nested deeper than %d", maxDepth)
	}
	kind, info := classify(f.Name)
	switch kind {
	case kindUnknown:
		return fmt.Errorf("unknown filter %q", f.Name)
	case kindLogic:
		if len(f.Args) == 0 || (f.Name == "require-not" && len(f.Args) != 1) {
			return fmt.Errorf("(%s) takes %s", f.Name, map[bool]string{true: "one filter", false: "one or more filters"}[f.Name == "require-not"])
		}
		for _, a := range f.Args {
			sub, ok := a.(*Filter)
			if !ok {
				return fmt.Errorf("(%s) takes filters, not %v", f.Name, a)
			}
			if err := validateFilter(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	case kindPath, kindString:
		if len(f.Args) != 1 || !isStringArg(f.Args[0]) {
			return fmt.Errorf("(%s) takes one string", f.Name)
		}
		if kind == kindPath && !strings.Contains(f.Name, "regex") {
			if s, ok := f.Args[0].(Str); ok && !strings.HasPrefix(string(s), "/") {
				return fmt.Errorf("(%s %q): a path must be absolute", f.Name, string(s))
			}
		}
		return nil
	case kindInteger:
		if len(f.Args) != 1 {
			return fmt.Errorf("(%s) takes one value", f.Name)
		}
		switch v := f.Args[0].(type) {
		case Int:
			return nil
		case Sym:
			if len(info.values) == 0 {
				// Names such as AF_UNIX or SIGKILL are resolved by
				// libsandbox's prelude; accept the C-macro shape.
				if strings.ToUpper(string(v)) == string(v) {
					return nil
				}
				return fmt.Errorf("(%s %s): unknown value", f.Name, v)
			}
			for _, name := range info.values {
				if string(v) == name {
					return nil
				}
			}
			return fmt.Errorf("(%s %s): value must be one of %s", f.Name, v, strings.Join(info.values, ", "))
		}
		return fmt.Errorf("(%s) takes an integer or a named value", f.Name)
	case kindNetwork:
		return validateNetwork(f, depth)
	}
	return nil
}

func isStringArg(v Value) bool {
	switch v := v.(type) {
	case Str:
		return true
	case *Filter:
		return v.Name == "param" && len(v.Args) == 1 && isStr(v.Args[0])
	}
	return false
}

func isStr(v Value) bool { _, ok := v.(Str); return ok }

var netProtocols = map[Sym]bool{
	"ip": true, "ip4": true, "ip6": true, "tcp": true, "tcp4": true, "tcp6": true,
	"udp": true, "udp4": true, "udp6": true,
}

// validateNetwork checks (local|remote proto "host:port") and
// (local|remote unix-socket (path-literal ...)). The host must be localhost
// or *: anything else fails the whole profile in libsandbox ("host must be *
// or localhost"; reported: zeroclaw-labs/zeroclaw#4764).
func validateNetwork(f *Filter, depth int) error {
	if len(f.Args) != 2 {
		return fmt.Errorf("(%s) takes a protocol and an address", f.Name)
	}
	proto, ok := f.Args[0].(Sym)
	if !ok {
		return fmt.Errorf("(%s): the protocol must be a symbol such as ip or unix-socket", f.Name)
	}
	if proto == "unix-socket" || proto == "unix" {
		sub, ok := f.Args[1].(*Filter)
		if !ok || sub.Name == "param" {
			return fmt.Errorf("(%s %s) takes a path filter such as (path-literal \"/x\")", f.Name, proto)
		}
		if k, _ := classify(sub.Name); k != kindPath {
			return fmt.Errorf("(%s %s) takes a path filter, not (%s)", f.Name, proto, sub.Name)
		}
		return validateFilter(sub, depth+1)
	}
	if !netProtocols[proto] {
		return fmt.Errorf("(%s): unknown protocol %s", f.Name, proto)
	}
	addr, ok := f.Args[1].(Str)
	if !ok {
		return fmt.Errorf("(%s %s) takes a \"host:port\" string", f.Name, proto)
	}
	return CheckHostPort(string(addr))
}

// CheckHostPort validates a Seatbelt network address: host localhost or *,
// port * or 1..65535.
func CheckHostPort(addr string) error {
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return fmt.Errorf("address %q: want host:port", addr)
	}
	if host != "localhost" && host != "*" {
		return fmt.Errorf("address %q: Seatbelt accepts only localhost or * as the host", addr)
	}
	if port == "*" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("address %q: port must be * or 1..65535", addr)
	}
	return nil
}
