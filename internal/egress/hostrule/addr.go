package hostrule

import "net/netip"

// AddrClass says why an address is special: a name resolving only to
// special addresses is refused unless an address rule allows them.
type AddrClass string

const (
	Public      AddrClass = "public"
	Unspecified AddrClass = "unspecified"
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
// address; an IPv6 address that embeds an IPv4 one, NAT64 64:ff9b::/96,
// 6to4 2002::/16 and IPv4-compatible ::/96, is [Embedded] when the IPv4
// address is not public).
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
	if a.Is6() {
		b := a.As16()
		var v4 [4]byte
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a), netip.MustParsePrefix("::/96").Contains(a):
			copy(v4[:], b[12:])
		case netip.MustParsePrefix("2002::/16").Contains(a):
			copy(v4[:], b[2:6])
		default:
			return Public
		}
		if Classify(netip.AddrFrom4(v4)) != Public {
			return Embedded
		}
	}
	return Public
}
