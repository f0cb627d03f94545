package hostrule

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Errors wrapped by [ParsePattern], [ParseAddress] and [NewRules], for
// errors.Is.
var (
	// ErrPattern: the text is not a host pattern.
	ErrPattern = errors.New("not a host pattern")
	// ErrIPLiteral: an IP address where a host name is required; addresses
	// are allowed by [ParseAddress] (procage: --allow-address).
	ErrIPLiteral = errors.New("an IP address, not a host name")
	// ErrNoAllow: a rule set that allows no host would refuse every request.
	ErrNoAllow = errors.New("no host is allowed")
)

// Pattern matches host names: "github.com" that name exactly, and
// "*.pythonhosted.org" every name below pythonhosted.org (any depth) but
// not pythonhosted.org itself. Port 0 matches every port.
type Pattern struct {
	// Host is the lower-case name, "*." and all for a wildcard.
	Host string
	// Port is the one port the pattern matches; 0 for every port.
	Port int
}

// String returns the pattern as [ParsePattern] reads it.
func (p Pattern) String() string {
	if p.Port == 0 {
		return p.Host
	}
	return p.Host + ":" + strconv.Itoa(p.Port)
}

// wildcard reports whether p is "*.suffix", and the suffix with its dot.
func (p Pattern) wildcard() (string, bool) {
	if s, ok := strings.CutPrefix(p.Host, "*"); ok {
		return s, true
	}
	return "", false
}

// Match reports whether p matches host (a normalised name, see
// [NormalizeHost]) on port.
func (p Pattern) Match(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	if suffix, ok := p.wildcard(); ok {
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	}
	return host == p.Host
}

// ParsePattern reads a host pattern: a DNS name in ASCII (a
// internationalised name in its xn-- form), or "*." and a name of at least
// two labels, then optionally ":PORT" (1..65535). Case and one trailing
// dot are ignored. IP addresses are refused ([ErrIPLiteral]), and so is a
// last label of digits (or 0x and hex digits), which resolvers read as an
// address ("127.1", "0x7f.1").
func ParsePattern(s string) (Pattern, error) {
	fail := func(err error) (Pattern, error) {
		return Pattern{}, fmt.Errorf("host pattern %q: %w", s, err)
	}
	if looksLikeAddress(s) {
		return fail(ErrIPLiteral)
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if strings.Contains(s[:i], ":") {
			return fail(fmt.Errorf("%w: more than one colon", ErrPattern))
		}
		host = s[:i]
		p, err := parsePort(s[i+1:])
		if err != nil {
			return fail(err)
		}
		port = p
	}
	wild := false
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		wild, host = true, rest
	}
	name, err := NormalizeHost(host)
	if err != nil {
		return fail(err)
	}
	if wild && !strings.Contains(name, ".") {
		return fail(fmt.Errorf("%w: a wildcard names at least two labels after \"*.\" (*.%s is every name in a top-level domain)", ErrPattern, name))
	}
	if wild {
		name = "*." + name
	}
	return Pattern{Host: name, Port: port}, nil
}

// looksLikeAddress reports whether s is an address, a prefix or either
// with a port, in any of their spellings.
func looksLikeAddress(s string) bool {
	t := strings.Trim(s, "[]")
	if i := strings.LastIndex(s, "]:"); i >= 0 {
		t = strings.Trim(s[:i], "[]")
	} else if strings.Count(s, ":") == 1 {
		t = s[:strings.IndexByte(s, ':')]
	}
	for _, c := range []string{s, t} {
		if _, err := netip.ParseAddr(c); err == nil {
			return true
		}
		if _, err := netip.ParsePrefix(c); err == nil {
			return true
		}
	}
	return false
}

func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%w: port %q is not a number", ErrPattern, s)
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("%w: port %d is not 1..65535", ErrPattern, n)
	}
	return n, nil
}

// NormalizeHost returns host as patterns match it: lower case, without one
// trailing dot, checked to be a DNS name of letters, digits and hyphens
// (RFC 1123 2.1), at most 253 characters, whose last label is not numeric.
// IP addresses are refused ([ErrIPLiteral]).
func NormalizeHost(host string) (string, error) {
	if _, err := netip.ParseAddr(host); err == nil {
		return "", ErrIPLiteral
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "" {
		return "", fmt.Errorf("%w: empty host name", ErrPattern)
	}
	if len(h) > 253 {
		return "", fmt.Errorf("%w: a host name has at most 253 characters", ErrPattern)
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" {
			return "", fmt.Errorf("%w: empty label", ErrPattern)
		}
		if len(l) > 63 {
			return "", fmt.Errorf("%w: label %q has more than 63 characters", ErrPattern, l)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%w: label %q begins or ends with '-'", ErrPattern, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				if c == '*' {
					return "", fmt.Errorf("%w: '*' only as the whole first label (*.example.com)", ErrPattern)
				}
				return "", fmt.Errorf("%w: character %q (letters, digits and '-' only; an internationalised name in its xn-- form)", ErrPattern, rune(c))
			}
		}
	}
	if numeric(labels[len(labels)-1]) {
		return "", fmt.Errorf("%w: the last label %q is numeric, which resolvers read as an address", ErrIPLiteral, labels[len(labels)-1])
	}
	return h, nil
}

// numeric reports whether a label is decimal digits or 0x and hex digits,
// as inet_aton(3) reads the parts of an address.
func numeric(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// AddrRule allows an address or network: a name resolving into it is not
// refused for being special ([Classify]), and a request naming an address
// in it is allowed. Port 0 matches every port.
type AddrRule struct {
	Prefix netip.Prefix
	Port   int
}

// String returns the rule as [ParseAddress] reads it.
func (a AddrRule) String() string {
	s := a.Prefix.String()
	if a.Prefix.IsSingleIP() {
		s = a.Prefix.Addr().String()
	}
	if a.Port == 0 {
		return s
	}
	if a.Prefix.Addr().Is6() {
		s = "[" + s + "]"
	}
	return s + ":" + strconv.Itoa(a.Port)
}

// Match reports whether the rule allows addr (IPv4-mapped IPv6 addresses
// taken as IPv4) on port.
func (a AddrRule) Match(addr netip.Addr, port int) bool {
	return (a.Port == 0 || a.Port == port) && a.Prefix.Contains(addr.Unmap())
}

// ParseAddress reads an address rule: an IP address or a CIDR prefix
// ("127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"), optionally with ":PORT"
// ("127.0.0.1:8080", "[::1]:8080"). Zones are refused; IPv4-mapped
// addresses are read as IPv4.
func ParseAddress(s string) (AddrRule, error) {
	fail := func(err error) (AddrRule, error) {
		return AddrRule{}, fmt.Errorf("address %q: %w", s, err)
	}
	text, port := s, 0
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return fail(errors.New("unclosed '['"))
		}
		text = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			ps, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return fail(errors.New("text after ']' that is not :PORT"))
			}
			p, err := parsePort(ps)
			if err != nil {
				return fail(err)
			}
			port = p
		}
	} else if strings.Count(s, ":") == 1 {
		i := strings.IndexByte(s, ':')
		text = s[:i]
		p, err := parsePort(s[i+1:])
		if err != nil {
			return fail(err)
		}
		port = p
	}
	var pfx netip.Prefix
	if strings.Contains(text, "/") {
		p, err := netip.ParsePrefix(text)
		if err != nil {
			return fail(err)
		}
		if p.Addr().Zone() != "" {
			return fail(errors.New("zones are not allowed"))
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		pfx = p.Masked()
	} else {
		a, err := netip.ParseAddr(text)
		if err != nil {
			return fail(fmt.Errorf("not an IP address or prefix (a host name is a host pattern): %w", err))
		}
		if a.Zone() != "" {
			return fail(errors.New("zones are not allowed"))
		}
		a = a.Unmap()
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	return AddrRule{Prefix: pfx, Port: port}, nil
}

// Rules decide which hosts the proxy reaches. Build them with [NewRules].
type Rules struct {
	allow []Pattern
	deny  []Pattern
	addrs []AddrRule
}

// NewRules parses the allowed and denied host patterns and the allowed
// addresses. Deny wins over allow; a host no allow pattern matches is
// denied. At least one host or address must be allowed ([ErrNoAllow]).
func NewRules(allow, deny, addrs []string) (*Rules, error) {
	r := &Rules{}
	for _, s := range allow {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		r.allow = append(r.allow, p)
	}
	for _, s := range deny {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		r.deny = append(r.deny, p)
	}
	for _, s := range addrs {
		a, err := ParseAddress(s)
		if err != nil {
			return nil, err
		}
		r.addrs = append(r.addrs, a)
	}
	if len(r.allow) == 0 && len(r.addrs) == 0 {
		return nil, ErrNoAllow
	}
	return r, nil
}

// Allowed, Denied and Addresses return the rules' parts.
func (r *Rules) Allowed() []Pattern    { return slices.Clone(r.allow) }
func (r *Rules) Denied() []Pattern     { return slices.Clone(r.deny) }
func (r *Rules) Addresses() []AddrRule { return slices.Clone(r.addrs) }
func (r *Rules) addrRule(a netip.Addr, port int) (AddrRule, bool) {
	for _, ar := range r.addrs {
		if ar.Match(a, port) {
			return ar, true
		}
	}
	return AddrRule{}, false
}

// checkAddr is the one address check, of a resolved name's addresses and
// of an address literal alike: a destination on this host ([Host.Local])
// is allowed only by an address rule naming that very address (a rule for
// a network is written for its other hosts), any other by an address rule
// containing it. It returns the allowing rule, if any, and a's class (a
// public address needs no rule when a name resolved to it).
func (r *Rules) checkAddr(a netip.Addr, port int, h Host) (AddrRule, bool, AddrClass) {
	c, local := h.Local(a)
	if !local {
		ar, ok := r.addrRule(a, port)
		return ar, ok, c
	}
	for _, ar := range r.addrs {
		if ar.Prefix.IsSingleIP() && ar.Prefix.Addr() == a && ar.Match(a, port) {
			return ar, true, c
		}
	}
	return AddrRule{}, false, c
}

// Verdict is the kind of a [Decision].
type Verdict string

const (
	// Allowed: a pattern or an address rule allows the request.
	Allowed Verdict = "allowed"
	// DeniedByRule: a deny pattern matches the host.
	DeniedByRule Verdict = "denied-by-rule"
	// DeniedNoRule: no allow pattern (or address rule, for an address)
	// matches.
	DeniedNoRule Verdict = "denied-no-rule"
	// DeniedAddress: the name resolves only to special addresses
	// ([Classify]) or this host's ([Host.Local]) no address rule allows, or
	// the address asked for is this host's and no rule names it.
	DeniedAddress Verdict = "denied-address"
	// DeniedResolve: the name does not resolve.
	DeniedResolve Verdict = "denied-resolve"
	// DeniedInvalid: the request names no valid host or port.
	DeniedInvalid Verdict = "denied-invalid"
)

// Decision is the proxy's answer to one request for host:port.
type Decision struct {
	Verdict Verdict
	// Rule is the pattern or address rule that decided ("" when none did).
	Rule string
	// Addrs are the addresses the proxy may dial, in order: those of the
	// resolution that are not special or that an address rule allows.
	Addrs []netip.Addr
	// Refused are the resolved addresses refused as special, with their
	// class.
	Refused []Refusal
	// Reason says why, for people.
	Reason string
}

// Refusal is one resolved address refused for its class.
type Refusal struct {
	Addr  netip.Addr
	Class AddrClass
}

// DecideName applies the patterns to a host name (normalised by
// [NormalizeHost]); an allowed name is then to be resolved and [Rules.Filter]ed.
func (r *Rules) DecideName(host string, port int) Decision {
	for _, p := range r.deny {
		if p.Match(host, port) {
			return Decision{Verdict: DeniedByRule, Rule: p.String(), Reason: fmt.Sprintf("host %s is denied by rule %s", host, p)}
		}
	}
	for _, p := range r.allow {
		if p.Match(host, port) {
			return Decision{Verdict: Allowed, Rule: p.String()}
		}
	}
	return Decision{Verdict: DeniedNoRule, Reason: fmt.Sprintf("no rule allows host %s on port %d", host, port)}
}

// DecideAddr decides a request that names an address: only an address
// rule allows it, a host pattern never does; an address of this host (h)
// only a rule naming it.
func (r *Rules) DecideAddr(a netip.Addr, port int, h Host) Decision {
	a = a.Unmap().WithZone("")
	ar, ok, c := r.checkAddr(a, port, h)
	if ok {
		return Decision{Verdict: Allowed, Rule: ar.String(), Addrs: []netip.Addr{a}}
	}
	if wide, ok := r.addrRule(a, port); ok {
		return Decision{Verdict: DeniedAddress, Refused: []Refusal{{a, c}},
			Reason: fmt.Sprintf("%s is %s, which only an address rule naming it allows (not %s)", a, c, wide)}
	}
	return Decision{Verdict: DeniedNoRule, Reason: fmt.Sprintf("no address rule allows %s on port %d (host patterns allow names only)", a, port)}
}

// Filter completes an allowed name's decision d with its resolved
// addresses: it keeps those the proxy may dial (public and not this
// host's (h), or allowed by an address rule) and refuses the rest; with
// none kept, the verdict is [DeniedAddress].
func (r *Rules) Filter(d Decision, host string, port int, addrs []netip.Addr, h Host) Decision {
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		if _, ok, c := r.checkAddr(a, port, h); ok || c == Public {
			d.Addrs = append(d.Addrs, a)
		} else {
			d.Refused = append(d.Refused, Refusal{Addr: a, Class: c})
		}
	}
	if len(d.Addrs) == 0 {
		ref := d.Refused[0]
		d.Verdict = DeniedAddress
		allows := "no address rule allows"
		if _, local := h.Local(ref.Addr); local {
			allows = "only an address rule naming it allows"
		}
		d.Reason = fmt.Sprintf("host %s resolves to %s (%s), which %s", host, ref.Addr, ref.Class, allows)
	}
	return d
}
