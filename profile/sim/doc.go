// Package sim simulates Seatbelt's decisions for a profile, so "why was
// this denied?" can be answered before anything runs, on any OS, and so the
// lowering can be checked against a statement of the policy's intent.
//
//	p, _ := profile.New(profile.BaseV1, profile.Read("/Users/me/src"))
//	d, err := sim.Explain(p, profile.Env{Home: "/Users/me"}, "file-read-data", "/Users/me/.ssh/id_rsa")
//	fmt.Println(d) // denied by rule 33 (hard-deny): (deny file-read* file-write* ... (subpath "/Users/me/.ssh") ...)
//
// [Decide] evaluates an [sbpl.Profile] for one [Access]: an operation with
// its argument (a path, an address or Unix socket, a Mach or sysctl name, a
// target process). The most specific rule whose operation covers the
// access and whose filters match decides; per operation, filtered rules
// rank above unfiltered ones, which decide only when no filtered rule
// matches (Homebrew's sandbox tests rely on it); among equal rules the
// last one wins. [Explain] lowers a policy with [seatbelt.Lower] and
// decides, reading the access from command-line text ([ParseAccess]).
// [Reference] states what a typed [profile.Policy] intends for an access
// without looking at the lowered profile; the package's property test
// checks that the two agree on random policies.
//
// Where public evidence has not settled a rule of Seatbelt, [Variant]
// names the alternatives (how unfiltered rules rank, how operation
// specificity counts, whether same-sandbox covers the process itself,
// which path of a hard link is checked, what (deny default) covers);
// [Default] is the best-supported
// reading and [Variants] lists every combination. The property test and
// the escape canaries hold under all of them, and the darwin test
// TestVariantsOnSeatbelt records which one macOS follows.
//
// Paths match case- and Unicode-normalization-insensitively, as the
// specification measured on macOS 26.6.2. Each semantic rule names its
// source in a comment; the darwin tests compare Decide with Seatbelt
// itself through sandbox-exec.
//
// # Limitations
//
//   - A model, not Seatbelt: rules follow public sources (docs/sources.md), some only
//     reported or inferred, each marked where it is implemented. The
//     unsettled ones are [Variant]s (the order of nested wildcards,
//     file-read* before file*, among them); same-sandbox covering children
//     and the fallback without a default rule are inferred.
//   - Profiles are read by package sbpl: rules, (debug ...), and with
//     [sbpl.ReadProfile] constant defines and conditions on parameters;
//     profiles that import or define procedures (Chromium's, Apple's) must
//     be flattened first. Aliases of Apple's SBPL prelude (process-exec,
//     ipc-posix-shm, iokit-user-client-class, ...) are understood.
//   - Unicode normalization covers precomposed Latin letters only (a table
//     generated from Unicode NFD data); other scripts' compositions,
//     compatibility forms and combining-mark reordering are not modelled.
//     Case folding is simple (ß is not ss).
//   - Regexes are translated to Go's regexp; what cannot be translated
//     faithfully (Perl groups, \d, back-references, backslashes inside
//     brackets, collating elements) makes its rule one the simulator
//     cannot evaluate (below).
//   - A rule the simulator cannot evaluate (an unknown operation or
//     filter, a filter it does not model such as file-mode, process-path
//     or signing-identifier) is treated as neither matching nor not: an
//     access it could decide is reported as undecidable
//     ([ErrUndecidable], the rule named); every other access is decided.
//     An unknown operation is assumed to touch only its own family
//     (file-, network-, ...).
//   - Network filters see one endpoint: remote on network-outbound, local
//     on network-bind and network-inbound. The host is an address (or
//     localhost); Seatbelt never sees host names.
//   - A filter whose argument is an unbound (param "K") never matches;
//     Explain leaves a forking policy's run-marker parameters unbound.
//   - The operations (deny default) leaves open (process-info*, nvram*,
//     iokit-get-properties, file-map-executable) are allowed unless a rule
//     names them ([Variant.DefaultCoversStragglers] is the alternative).
package sim
