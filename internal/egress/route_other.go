//go:build !linux

package egress

import "net/netip"

// routesHere is nil where the proxy knows this machine's own addresses
// from its interfaces only (macOS: an address a route sends to lo0 is
// not taken there unless lo0 has it [inferred]).
var routesHere func(netip.Addr) bool
