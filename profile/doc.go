// Package profile is procage's policy model: what a caged process may do,
// written once for every OS. It has no build tags and lowers nothing;
// policies can be built, compared and read from JSON on any OS.
//
//	p, err := profile.New(profile.BaseV1,
//		profile.ReadWrite("/Users/me/project"),
//		profile.Network(profile.NetworkLoopback, 8080))
//	if err != nil { ... }
//	fmt.Println(p) // {base v1; fs: read+write subpath /Users/me/project; network loopback [8080]}
//
// What a child gets is decided by the lowering of the OS it runs on:
// package [github.com/procage-go/procage/profile/seatbelt] turns a policy
// into the Seatbelt profile a macOS child applies, and package
// [github.com/procage-go/procage/profile/linux] into the Landlock rules and
// seccomp filter a Linux child applies.
// Package cage resolves the policy's paths into an [Env], lowers with the
// host's backend and spawns the child.
//
// # Policy model
//
// A [Policy] is an immutable value, validated when it is built: a [Base]
// (curated rules every profile starts from, versioned so a base never
// changes once released), filesystem rules ([Read], [ReadWrite], [Exec],
// [FS] with a [Literal] file or a [Subpath] tree; write implies read), the
// network ([NetworkOff] by default, [NetworkLoopback] on named ports or
// [AnyPort], [NetworkOn] to remote hosts with localhost only on named
// ports, [NetworkProxy] to the hosts [AllowHosts] names through a per-run
// proxy), allowed Unix sockets and Mach services, whether the target
// may fork ([Fork]) and which programs it may execute (the base's system
// programs and [Exec] trees, or with [ExecTargetOnly] none but itself),
// waivers of hard-deny classes, and raw Seatbelt-layer rules
// ([Seatbelt]) that are parsed and validated at construction, so a typo
// fails here rather than in a child; only modifiers of known effect are
// accepted, and a broad allow (every Mach service, (allow default)) only
// when the policy names its kind ([AcceptBroad]). A policy may also accept
// Linux gaps by name ([AcceptGaps]) and name the home directory the
// hard-deny classes protect ([Home]), so a saved policy replays exactly.
// Paths must be absolute and normalised, with no control character.
// A policy has a versioned JSON form ([ParseJSON], [Policy.MarshalJSON]).
//
// # Hard-deny classes
//
// Every policy is lowered with the hard-deny [Classes] last, overriding
// its allows, unless it waives a class by name ([Waive]). What the secrets
// and trust-handoff classes protect in the user's directories is one
// table for every OS ([ProtectedTable], placed in an [Env] by
// [Protected.Place]), so the backends cannot drift apart; what only one
// OS has (Mach services, sysctls; system calls) stays with its lowering.
//
// # Limitations
//
//   - Some parts have no meaning off macOS (Seatbelt-layer rules, Mach
//     services) and some cannot be enforced as strictly elsewhere: the
//     Linux lowering refuses such a policy unless the caller accepts each
//     gap by name (docs/linux-backend.md).
//   - Host names ([AllowHosts], [NetworkProxy]) are decided by a proxy,
//     not by the kernel: the lowering only confines the child to the
//     proxy's port (on Linux, refused by the gap [GapProxyDirect] unless
//     accepted, since Landlock's port rules do not name the host).
//   - Paths are taken as written: resolving them to the kernel's spelling
//     (/tmp/x is /private/tmp/x on macOS) is the caller's ([Env.Resolved],
//     package pathresolve).
package profile
