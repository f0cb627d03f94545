package profile

// Env is what a lowering needs besides the policy, in the kernel's
// spelling: where the policy's paths resolved, the links lookups pass
// through, and the user's directories the hard-deny table is placed in.
type Env struct {
	// Resolved maps a policy path as written to its kernel spelling.
	// Paths not in the map are used as written.
	Resolved map[string]string
	// Links are the symbolic links path lookups pass through, in kernel
	// spelling; a lowering that matches paths by name (Seatbelt) lets the
	// child stat each link itself.
	Links []string
	// Home is the kernel spelling of the caging user's home directory,
	// used by the hard-deny classes. Empty lowers no home rules.
	Home string
	// ZDotDir is the kernel spelling of zsh's $ZDOTDIR, whose startup
	// files the trust-handoff class protects; empty when unset.
	ZDotDir string
	// XDGConfigHome is the kernel spelling of $XDG_CONFIG_HOME, where git
	// and shells read configuration the trust-handoff class protects; empty
	// when unset (~/.config is always protected).
	XDGConfigHome string
	// ProtectedAt maps a hard-deny table path (as placed under Home,
	// ZDotDir or XDGConfigHome) that is a link to its kernel spelling, which
	// the class protects too.
	ProtectedAt map[string]string
	// PrivateTemp says each run has its own temporary directory, bound per
	// spawn, which the run may read, write and execute in (a build runs
	// what it linked there) on every backend.
	PrivateTemp bool
	// ProxyPort is the localhost port of the run's egress proxy, for a
	// [NetworkProxy] policy: the proxy starts with the run, so such a
	// policy is lowered (on macOS) once the port is known. 0 for every
	// other mode.
	ProxyPort int
}
