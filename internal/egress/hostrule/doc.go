// Package hostrule reads and applies the host rules of a proxy network
// policy: host patterns, address rules and the address classes a name may
// not resolve to unless allowed. It has no network code, so the policy
// model can validate its rules without linking a proxy.
//
// # Limitations
//
//   - Names are ASCII: an internationalised name is written in its xn--
//     form, which this package does not compute.
package hostrule
