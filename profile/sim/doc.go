// Package sim simulates Seatbelt's decisions for a profile, so "why was
// this denied?" can be answered before anything runs, on any OS, and so the
// lowering can be checked against a statement of the policy's intent.
//
//	p, _ := profile.New(profile.BaseV1, profile.Read("/Users/me/src"))
//	d, err := sim.Explain(p, profile.Env{Home: "/Users/me"}, "file-read-data", "/Users/me/.ssh/id_rsa")
//	fmt.Println(d) // denied by rule N (hard-deny): (deny file-read* file-write* ... (subpath "/Users/me/.ssh") ...)
//
// [Decide] evaluates an [sbpl.Profile] for one [Access]: an operation with
// its argument (a path, an address or Unix socket, a Mach or sysctl name, a
// target process). The most specific rule whose operation covers the
// access and whose filters match decides; among equally specific rules the
// last one wins. [Explain] lowers a policy with [profile.Lower] and
// decides, reading the access from command-line text ([ParseAccess]).
// [Reference] states what a typed [profile.Policy] intends for an access
// without looking at the lowered profile; the package's property test
// checks that the two agree on random policies.
//
// Paths match case- and Unicode-normalization-insensitively, as the
// specification measured on macOS 26.6.2. Each semantic rule names its
// source in a comment; the darwin tests compare Decide with Seatbelt
// itself through sandbox-exec.
//
// # Limitations
//
//   - A model, not Seatbelt: rules follow public sources (docs/sources.md), some
//     only reported or inferred, each marked where it is implemented. The
//     order of nested wildcards (file-read* before file*), the target
//     relation (same-sandbox covering self and children) and the fallback
//     without a default rule are inferred.
//   - Unicode normalization covers precomposed Latin letters only (a table
//     generated from Unicode NFD data); other scripts' compositions,
//     compatibility forms and combining-mark reordering are not modelled.
//     Case folding is simple (ß is not ss).
//   - Regexes are translated to Go's regexp; what cannot be translated
//     faithfully (Perl groups, \d, back-references, backslashes inside
//     brackets, collating elements) is an error.
//   - A filter the simulator does not model (file-mode, process-path,
//     signing-identifier, iokit properties, ...) is an error when a rule
//     using it applies to the access; an unknown filter name is always an
//     error. Neither is treated as a match or a non-match.
//   - Network filters see one endpoint: remote on network-outbound, local
//     on network-bind and network-inbound. The host is an address (or
//     localhost); Seatbelt never sees host names.
//   - A filter whose argument is an unbound (param "K") never matches;
//     Explain leaves a forking policy's run-marker parameters unbound.
//   - The operations (deny default) leaves open (process-info*, nvram*,
//     iokit-get-properties, file-map-executable) are allowed unless a rule
//     names them.
package sim
