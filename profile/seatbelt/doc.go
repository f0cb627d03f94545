// Package seatbelt lowers a [profile.Policy] to the Seatbelt profile a
// macOS child applies: what this package writes is what a Mac child gets.
// It has no build tags: plans can be built and inspected on any OS;
// compiling and applying them is package cage's, on macOS.
//
//	p, err := profile.New(profile.BaseV1, profile.Read("/usr/share"), profile.Network(profile.NetworkLoopback, 8080))
//	if err != nil { ... }
//	plan, err := seatbelt.Lower(p, profile.Env{})
//	fmt.Print(plan.Text()) // (version 1) (deny default) ...
//
// [Lower] writes a deterministic profile in layers: header ((version 1),
// (deny default), the default-open operations denied, and what the child
// still does after applying the profile, the MAC calls targets make at
// start-up, the grant extension classes and the tty ioctls of a granted
// terminal), base, the policy's rules, link
// metadata, Seatbelt-layer rules, the hard-deny classes, and for a forking
// policy a run-marker block whose parameters are bound per spawn. In
// Seatbelt a rule naming a specific operation beats one naming a wildcard
// whatever the order, so each hard-deny rule also names every specific
// operation an allow names. Whether an unfiltered rule can override a
// filtered one is not settled (Homebrew's tests rely on it not doing so),
// so no deny relies on it: a hard or Seatbelt-layer deny without filters is
// given one that matches every path or address, and one that cannot be
// ([ErrUnfilteredDeny]) is refused where a filtered allow would compete.
// Which path of a hard link Seatbelt checks is unmeasured too, so while a
// class that protects files is in force no hard link or clone is allowed.
// A profile with more rules than [DefaultLimit] (or the limit given to
// [LowerLimit]) is a [*LimitError] before anything is compiled.
//
// Lowering takes paths already in the kernel's spelling
// ([profile.Env.Resolved], from package pathresolve): a rule on /tmp/x
// never fires, because the kernel sees /private/tmp/x.
//
// # Limitations
//
//   - Base V1 is curated for the macOS release the project measures on; a
//     later release may need a new base version.
//   - Seatbelt cannot filter by host name: the network is off, loopback or
//     on, never a domain allowlist.
//   - The header honours the public app-sandbox extension classes, so a
//     token of those classes that reaches the child from elsewhere widens
//     its access (the hard-deny classes still apply); see
//     docs/threat-model.md, R-44.
//   - Lowering cannot check what libsandbox will accept beyond the
//     validated shapes; compiling (package cage, on macOS) is the final
//     check.
package seatbelt
