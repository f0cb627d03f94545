package profile

import (
	"fmt"
	"slices"
	"strings"
)

// Gap names a part of a policy a backend cannot enforce. Only the Linux
// lowering (package profile/linux) has gaps today: Landlock rules only add
// access, and seccomp sees numbers, not paths. A plan containing one is
// refused with a *GapError unless the caller or the policy ([AcceptGaps])
// accepts the gap by name; an accepted gap is listed in the plan and not
// enforced.
type Gap string

const (
	// GapSecrets: a secrets path (~/.ssh, ~/.aws, ...) lies inside a tree
	// the policy allows. Landlock rules only add access: a rule on a
	// directory covers everything beneath it, so no deny inside it
	// (include/uapi/linux/landlock.h).
	GapSecrets Gap = "secrets-inside-allowed-tree"
	// GapTrustHandoff: the policy allows writing a tree, and git hooks and
	// config (in any tree) or shell startup files inside it cannot be
	// denied.
	GapTrustHandoff Gap = "trust-handoff-inside-writable-tree"
	// GapLoopback: network loopback mode. Landlock filters TCP by port,
	// not by address (ABI 4), so any host is reachable on an allowed port;
	// UDP is then refused altogether. listen() on an unbound socket binds
	// an ephemeral port itself, with no bind for Landlock to check
	// (landlock-lsm/linux#15), so the child can also listen on an unlisted
	// port on every interface. Linux tier T1 closes it with the run's own
	// network namespace (except with AnyPort).
	GapLoopback Gap = "network-loopback"
	// GapLocalServices: network on, without opting in to every localhost
	// port ([AnyPort]) and listening on every interface
	// ([ListenAnyInterface]). Landlock cannot tell localhost from a remote
	// host, nor a localhost bind from a wildcard one, so local services (a
	// debugger inspector, Docker over TCP, an IDE server) stay reachable
	// on every port and the child may listen on every interface.
	GapLocalServices Gap = "network-on-local-services"
	// GapUnixSocketPath: allowing one Unix socket by path. Before Landlock
	// ABI 9 connect() to a path-named socket is not restricted, so
	// allowing socket(AF_UNIX) allows every such socket the process can
	// reach (navikt/cplt#240, Zouuup/landrun#43).
	GapUnixSocketPath Gap = "unix-socket-path"
	// GapMach: Mach service names mean nothing on Linux.
	GapMach Gap = "mach-services"
	// GapSeatbelt: raw Seatbelt rules cannot be translated.
	GapSeatbelt Gap = "seatbelt-rules"
	// GapExecTargetOnly: Landlock checks the execute right at execve only;
	// ld.so runs any readable binary and memfd_create + fexecve any
	// readable bytes (landlock-lsm/linux#37), so "only the target" is
	// not enforceable. Accepted, the base's and policy's Exec trees stay
	// executable.
	GapExecTargetOnly Gap = "exec-target-only"
	// GapProxyDirect: network proxy mode without the run's own network
	// namespace (Linux tier T2; T1 has one). Landlock's TCP rules are per port, not per address
	// (LANDLOCK_ACCESS_NET_CONNECT_TCP, ABI 4), so a remote host listening
	// on the proxy's port is reachable directly, around the proxy and its
	// host rules. And listen() on a socket never bound binds an ephemeral
	// port itself, with no bind for Landlock to check
	// (landlock-lsm/linux#15): the child can listen on every interface,
	// and any host that reaches the machine connects in, around the proxy.
	// Accepted, the child may connect to that port only, on any host, and
	// bind no port; UDP is refused.
	GapProxyDirect Gap = "network-proxy-direct"
)

// Gaps returns every Gap, in report order.
func Gaps() []Gap {
	return []Gap{GapSecrets, GapTrustHandoff, GapLoopback, GapLocalServices, GapUnixSocketPath, GapMach, GapSeatbelt, GapExecTargetOnly, GapProxyDirect}
}

// ParseGap returns the Gap named s (a Gap's string form).
func ParseGap(s string) (Gap, error) {
	for _, g := range Gaps() {
		if string(g) == s {
			return g, nil
		}
	}
	return "", fmt.Errorf("unknown gap %q", s)
}

// gapNames lists the gaps' names for an error.
func gapNames() string {
	var names []string
	for _, g := range Gaps() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}

// GapPart is one occurrence of a gap in a plan: the Gap and what exactly.
type GapPart struct {
	// Gap is the part's gap.
	Gap Gap
	// Class is the hard-deny class whose protected paths the part is
	// about ("" for the other gaps).
	Class Class
	// Path is the rule, grant or socket the part is about ("" where the
	// gap is the policy's as a whole).
	Path string
	// Protected lists the class's protected paths inside Path.
	Protected []string
	// Detail says what exactly cannot be enforced, for people.
	Detail string
}

// String returns the gap's name and the detail.
func (p GapPart) String() string { return string(p.Gap) + ": " + p.Detail }

// GapError lists the parts of a policy Linux cannot enforce that the
// caller did not accept. Accept them by name (cage.AcceptGaps) or change
// the policy (waive the class, drop the rule).
type GapError struct {
	// Parts are the refused parts, in report order.
	Parts []GapPart
}

// Error names each part with its detail.
func (e *GapError) Error() string {
	parts := make([]string, len(e.Parts))
	for i, p := range e.Parts {
		parts[i] = string(p.Gap) + " (" + p.Detail + ")"
	}
	return "linux cannot enforce: " + strings.Join(parts, "; ")
}

// Has reports whether the error lists gap g.
func (e *GapError) Has(g Gap) bool {
	return slices.ContainsFunc(e.Parts, func(p GapPart) bool { return p.Gap == g })
}
