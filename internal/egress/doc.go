// Package egress is a per-run egress proxy in the caller's process: the
// only way out of a cage whose policy names hosts
// (profile.NetworkProxy). It serves HTTP absolute-form requests and
// CONNECT (net/http, hijacking the connection for the tunnel) and SOCKS5
// CONNECT (RFC 1928, its own small server) on one listener, tells them
// apart by the first byte, and decides every request by [hostrule.Rules]
// (with which the policy model checks the same rules without linking a
// proxy):
//
//   - host patterns ("github.com", "*.pythonhosted.org", optionally
//     ":PORT"); deny wins over allow, and a host no allow pattern matches
//     is denied;
//   - after resolution, by address: a name resolving to a loopback,
//     private, link-local, CGNAT, multicast, unspecified, reserved or
//     cloud-metadata address ([hostrule.Classify]; IPv4-mapped and NAT64
//     forms included) is refused unless an address rule allows that
//     address, as Codex's network proxy refuses local and private targets
//     "even if allowlisted" (openai/codex codex-rs/network-proxy/README.md);
//   - a destination on this machine other than loopback, one of its
//     interface addresses (public ones too, and their IPv4-mapped and
//     NAT64 forms) or 0.0.0.0 and ::, is refused unless an address rule
//     names that very address ([hostrule.Host]): a service bound on every
//     address answers there as on loopback, and a rule for a network is
//     written for its other hosts. On Linux so is every address the
//     kernel's route delivers here (a prefix on lo, an AnyIP route),
//     asked per address. The interface addresses are read at most 100ms
//     old (interfaces change); when they cannot be read, every request
//     is refused;
//   - the proxy resolves a name once per request and dials exactly the
//     addresses it checked, never the name (DNS rebinding);
//   - a request naming an address (SOCKS5 IPv4/IPv6, http://10.0.0.1/) is
//     allowed only by an address rule (this machine's, only by one naming
//     it).
//
// A refused HTTP request or CONNECT gets 403 with an X-Proxy-Error header
// and a body naming the host and the flag that would allow it
// ("--allow-host HOST"); a refused SOCKS5 request gets reply 2,
// "connection not allowed by ruleset". Every request is recorded
// ([Request]: host, port, method, verdict and deciding rule, upstream
// address, bytes each way, error); [Proxy.Records] lists them, all of them
// once [Proxy.Stop] has returned, up to [MaxRecords]. A proxy serves at
// most [MaxConns] connections at once and closes the rest unserved;
// [Proxy.Dropped] counts both. [Env] is the environment that points a
// child's clients at the proxy.
//
// One listener rather than one per protocol: a Seatbelt profile then
// allows one port, and a child in its own network namespace hands over one
// listening socket.
//
// # Limitations
//
//   - The proxy decides by the name the client sends. An allowed name is
//     a whole service: github.com also carries anyone's repository, and a
//     CDN name may front other sites (domain fronting), so a broad
//     allowlist still lets data out (anthropic-experimental/sandbox-runtime
//     README, "Security Limitations").
//   - Only TCP: SOCKS5 BIND and UDP ASSOCIATE are refused, and DNS is the
//     proxy's, not the child's.
//   - The proxy forces nothing: a client that ignores the proxy variables
//     connects directly, and only the cage (Seatbelt's network-outbound
//     rules, a Linux network namespace) makes that fail.
//   - An absolute-form request is forwarded over HTTP/1.1; https is
//     tunnelled with CONNECT and not inspected.
package egress
