package hostrule

import "net/netip"

// AddrClass says why an address is special: a name resolving only to
// special addresses is refused unless an address rule allows them.
type AddrClass string

const (
	Public AddrClass = "public"
	// Unspecified: connect(2) to 0.0.0.0 or :: reaches this host.
	Unspecified AddrClass = "unspecified, which is this host"
	Loopback    AddrClass = "loopback"
	Private     AddrClass = "private"
	LinkLocal   AddrClass = "link-local"
	Metadata    AddrClass = "cloud metadata"
	CGNAT       AddrClass = "shared address space (CGNAT)"
	Multicast   AddrClass = "multicast"
	Reserved    AddrClass = "reserved"
	// Embedded: an IPv6 form carrying a special IPv4 address (NAT64,
	// 6to4, IPv4-compatible).
	Embedded AddrClass = "IPv6 form of a special IPv4 address"
	// Own: one of this host's interface addresses ([Host]).
	Own AddrClass = "this host's own address"
)

type classRange struct {
	prefix netip.Prefix
	class  AddrClass
}

// special lists the ranges refused, first match wins (IANA IPv4 and IPv6
// Special-Purpose Address Registries, RFC 6890; metadata: the address AWS,
// GCP and Azure serve instance metadata on, AWS's IPv6 fd00:ec2::254,
// Alibaba's 100.100.100.200, and Azure's platform endpoint 168.63.129.16,
// a public-range address on every Azure VM ("What is IP address
// 168.63.129.16?", learn.microsoft.com/azure/virtual-network)).
var special = func() []classRange {
	var out []classRange
	add := func(c AddrClass, ps ...string) {
		for _, p := range ps {
			out = append(out, classRange{netip.MustParsePrefix(p), c})
		}
	}
	add(Metadata, "169.254.169.254/32", "fd00:ec2::254/128", "100.100.100.200/32", "168.63.129.16/32")
	add(Unspecified, "0.0.0.0/8", "::/128")
	add(Loopback, "127.0.0.0/8", "::1/128")
	add(Private, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "64:ff9b:1::/48")
	add(LinkLocal, "169.254.0.0/16", "fe80::/10")
	add(CGNAT, "100.64.0.0/10")
	add(Multicast, "224.0.0.0/4", "ff00::/8")
	add(Reserved, "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "100::/64", "2001:db8::/32", "2001::/32", "fec0::/10")
	return out
}()

// Classify returns the class of a (an IPv4-mapped address as its IPv4
// address; an IPv6 address that embeds an IPv4 one ([embedded]) is
// [Embedded] when the IPv4 address is not public).
func Classify(a netip.Addr) AddrClass {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return Unspecified
	}
	for _, r := range special {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	if v4, ok := embedded(a); ok && Classify(v4) != Public {
		return Embedded
	}
	return Public
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	v4compat  = netip.MustParsePrefix("::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address an IPv6 one carries: NAT64
// 64:ff9b::/96 (RFC 6052), IPv4-compatible ::/96, 6to4 2002::/16
// (RFC 3056). A NAT64 gateway dials it for the client.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	var v4 [4]byte
	switch {
	case nat64.Contains(a), v4compat.Contains(a):
		copy(v4[:], b[12:])
	case sixToFour.Contains(a):
		copy(v4[:], b[2:6])
	default:
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(v4), true
}

// Host is what the rules know of the machine the proxy dials from: its
// interface addresses. A service it binds on 0.0.0.0 or [::] answers on
// each of them as on loopback, and a public one is no special address
// ([Classify]), so a destination among them is refused unless an address
// rule names it ([Rules.Filter], [Rules.DecideAddr]). Build it with
// [NewHost]; the zero Host has no addresses.
type Host struct {
	own map[netip.Addr]struct{}
	// routed reports whether the machine delivers an address to itself
	// though no interface has it ([Host.WithRoutes]); nil: none does.
	routed func(netip.Addr) bool
}

// WithRoutes returns h that also takes for this host's every address
// routed says the machine delivers to itself: Linux does so for all of a
// prefix on lo and for an AnyIP route ("ip route add local P dev lo"),
// though no interface has the address. routed answers true when it cannot
// tell (fail closed).
func (h Host) WithRoutes(routed func(netip.Addr) bool) Host {
	h.routed = routed
	return h
}

// NewHost returns the Host whose interfaces have addrs (IPv4-mapped
// addresses read as IPv4, zones dropped, loopback left to its class).
func NewHost(addrs []netip.Addr) Host {
	h := Host{own: make(map[netip.Addr]struct{}, len(addrs))}
	for _, a := range addrs {
		if a = a.Unmap().WithZone(""); !a.IsLoopback() {
			h.own[a] = struct{}{}
		}
	}
	return h
}

// Local reports whether a connection to a reaches this host other than at
// a loopback address (a class of its own, allowed by any address rule
// containing it): at an unspecified address, at one of h's addresses, as
// such, IPv4-mapped, or carried in an IPv6 form ([embedded]), or at one
// its routes deliver here ([Host.WithRoutes]).
func (h Host) Local(a netip.Addr) (AddrClass, bool) {
	a = a.Unmap().WithZone("")
	c := Classify(a)
	switch {
	case c == Unspecified:
		return c, true
	case c == Loopback:
		return c, false
	}
	if _, ok := h.own[a]; ok {
		return Own, true
	}
	if v4, ok := embedded(a); ok {
		if _, ok := h.own[v4]; ok {
			return Own, true
		}
	}
	if h.routed != nil && h.routed(a) {
		return Own, true
	}
	return c, false
}
