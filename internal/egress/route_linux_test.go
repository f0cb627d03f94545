package egress

import (
	"net"
	"net/netip"
	"testing"
)

// TestRouteLocal: the kernel's route for loopback and for each interface
// address is local; for a documentation address (RFC 5737 TEST-NET-2, routed away or
// not at all) it is not.
func TestRouteLocal(t *testing.T) {
	want := map[netip.Addr]bool{netip.MustParseAddr("127.0.0.1"): true, netip.MustParseAddr("198.51.100.77"): false}
	if ias, err := net.InterfaceAddrs(); err == nil {
		for _, ia := range ias {
			if ipn, ok := ia.(*net.IPNet); ok {
				if a, ok := netip.AddrFromSlice(ipn.IP); ok && !a.Unmap().IsLinkLocalUnicast() {
					want[a.Unmap()] = true
				}
			}
		}
	}
	for a, w := range want {
		got, err := routeLocal(a)
		if err != nil || got != w {
			t.Errorf("routeLocal(%s) = %v, %v; want %v", a, got, err, w)
		}
	}
}

func BenchmarkRouteLocal(b *testing.B) {
	a := netip.MustParseAddr("198.51.100.77")
	for b.Loop() {
		if _, err := routeLocal(a); err != nil {
			b.Fatal(err)
		}
	}
}
