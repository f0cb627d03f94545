package seatbelt

// Bases are versioned and frozen: the rules baseV1 returns never change once
// released, except to close an escape (each such change says so where it
// is made). A base that needs other rules (a later macOS, a broader set of
// programs) is a new constant, BaseV2, with its own function here; BaseV1
// keeps lowering to exactly what it lowered to before.

import (
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// baseRules returns the rules of a base, each with a comment saying why it
// is there and where the need is documented.
func baseRules(b profile.Base) []sbpl.Rule {
	if b == profile.BaseV1 {
		return baseV1()
	}
	return nil
}

// Sources cited in the comments (where each lives: docs/sources.md):
// Chromium common.sb (copied from Apple's dyld-support.sb), Apple system.sb
// (macOS 10.15.2), Codex seatbelt_base_policy.sbpl and platform defaults,
// Nix sandbox-defaults.sb, agent-safehouse 10-system-runtime.sb.

// v1DyldRoots hold the system libraries, frameworks and the dyld shared
// cache: read and map executable. On macOS 13 and later the shared cache
// lives in the OS cryptex, reached as /System/Volumes/Preboot/Cryptexes/OS
// and /System/Cryptexes/OS (Chromium common.sb).
var v1DyldRoots = []string{
	"/System/Cryptexes/OS",
	"/System/Library/Frameworks",
	"/System/Library/PrivateFrameworks",
	"/System/Library/SubFrameworks",
	"/System/Volumes/Preboot/Cryptexes/OS",
	"/usr/lib",
}

// v1ProgramRoots are the directories of the system's programs.
var v1ProgramRoots = []string{"/bin", "/sbin", "/usr/bin", "/usr/libexec", "/usr/sbin"}

// v1PerlRoots hold perl's modules, including XS bundles it dlopens.
var v1PerlRoots = []string{"/Library/Perl", "/System/Library/Perl"}

// v1ReadLiterals are single files ordinary programs read.
var v1ReadLiterals = []string{
	"/System/Library/CoreServices/SystemVersion.plist",
	"/private/etc/localtime",
	"/private/etc/zshenv",
	"/private/var/select/sh",
}

// v1Sysctls are the sysctl names libc, the shells and the Go and Rust
// runtimes read (uname(3), sysconf(3), CPU feature detection); the list is
// the intersection of Chromium's and Codex's.
var v1Sysctls = []string{
	"hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cpufamily", "hw.cpusubtype", "hw.cputype",
	"hw.l1dcachesize", "hw.l1icachesize", "hw.l2cachesize", "hw.logicalcpu", "hw.logicalcpu_max",
	"hw.machine", "hw.memsize", "hw.model", "hw.ncpu", "hw.nperflevels", "hw.pagesize",
	"hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency",
	"kern.argmax", "kern.hostname", "kern.osproductversion", "kern.osrelease", "kern.ostype",
	"kern.osvariant_status", "kern.osversion", "kern.usrstack64", "kern.version",
	"sysctl.name2oid", "sysctl.proc_cputype", "sysctl.proc_translated",
}

// v1SysctlPrefixes are sysctl name families read whole: CPU features (Go's
// internal/cpu, Rust's std_detect), performance levels, and the metadata
// MIB sysctl(8) and Go's syscall.Sysctl use to turn names into numbers.
var v1SysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "sysctl.oidfmt."}

func baseV1() []sbpl.Rule {
	subpaths := func(paths ...[]string) []*sbpl.Filter {
		var fs []*sbpl.Filter
		for _, ps := range paths {
			for _, p := range ps {
				fs = append(fs, sbpl.Subpath(p))
			}
		}
		return fs
	}
	literals := func(paths ...string) []*sbpl.Filter {
		var fs []*sbpl.Filter
		for _, p := range paths {
			fs = append(fs, sbpl.Literal(p))
		}
		return fs
	}
	var sysctls []*sbpl.Filter
	for _, n := range v1Sysctls {
		sysctls = append(sysctls, sbpl.F("sysctl-name", n))
	}
	for _, n := range v1SysctlPrefixes {
		sysctls = append(sysctls, sbpl.F("sysctl-name-prefix", n))
	}
	// self is named besides same-sandbox: whether same-sandbox covers the
	// process itself is not documented [inferred] (Chromium: target self).
	sameSandbox := []*sbpl.Filter{sbpl.F("target", sbpl.Sym("self")), sbpl.F("target", sbpl.Sym("same-sandbox"))}

	rules := []sbpl.Rule{
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-map-executable"}, Filters: subpaths(v1DyldRoots),
			Comment: "dyld: system libraries, frameworks and the shared cache in the OS cryptex (Chromium common.sb; /bin/sh cannot exec without the cache, code-buddy PR #88)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "process-exec*"}, Filters: subpaths(v1ProgramRoots),
			Comment: "the system's programs: read and exec (process-exec* includes the #! interpreter check; Codex platform defaults)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: subpaths([]string{"/usr/share", "/private/var/db/timezone"}),
			Comment: "locale, terminfo, zsh functions, zoneinfo (/usr/share/zoneinfo and /etc/localtime lead into /private/var/db/timezone; Chromium common.sb)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-map-executable"}, Filters: subpaths(v1PerlRoots),
			Comment: "perl's modules and the XS bundles it dlopens (perl -V @INC on macOS)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: literals(v1ReadLiterals...),
			Comment: "/bin/sh reads the /private/var/select/sh link (Nix sandbox-defaults.sb); date reads /etc/localtime; zsh reads /etc/zshenv; version checks read SystemVersion.plist (Apple system.sb)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read-metadata"}, Filters: literals(v1Ancestors()...),
			Comment: "stat of each ancestor of the paths above, so realpath() and path lookups work; deliberately not (subpath \"/\"), which would reveal what exists anywhere"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-write-data", "file-ioctl"}, Filters: literals("/dev/null", "/dev/zero"),
			Comment: "/dev/null and /dev/zero read-write; ioctl so isatty() answers ENOTTY (Apple system.sb)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: literals("/dev/random", "/dev/urandom"),
			Comment: "entropy devices (Apple system.sb)"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-write-data"}, Filters: append(literals("/dev/stdin", "/dev/stdout", "/dev/stderr"), sbpl.Subpath("/dev/fd")),
			Comment: "descriptors the child already holds, reopened by name (bash process substitution, cat /dev/stdin; Apple system.sb)"},
		// Security fix after release (issue 12): this rule named every
		// /dev/ttys[0-9]+, so a child could read and type into other
		// terminals. The child's own terminal is now granted per spawn
		// (the header's tty rule); /dev/tty is its controlling terminal.
		{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-write-data", "file-ioctl"}, Filters: []*sbpl.Filter{sbpl.Literal("/dev/tty")},
			Comment: "the controlling terminal, whichever it is: tty ioctls (tcgetattr, TIOCGWINSZ) need file-ioctl (agent-safehouse); other terminals are not named"},
		{Effect: sbpl.Allow, Ops: []string{"sysctl-read"}, Filters: sysctls,
			Comment: "sysctl-read of the names uname(3), sysconf(3) and the Go and Rust runtimes need, never all (Chromium common.sb, Codex base)"},
		{Effect: sbpl.Allow, Ops: []string{"mach-lookup"}, Filters: []*sbpl.Filter{
			sbpl.F("global-name", "com.apple.system.notification_center"),
			sbpl.F("global-name", "com.apple.system.opendirectoryd.libinfo"),
			sbpl.F("global-name", "com.apple.system.opendirectoryd.membership"),
		}, Comment: "the libinfo Mach services: getpwuid/getgrouplist for id, ls -l and ~ expansion; notifyd for libinfo's cache invalidation (Chromium common.sb, crbug 792228)"},
		{Effect: sbpl.Allow, Ops: []string{"ipc-posix-shm-read-data"}, Filters: []*sbpl.Filter{sbpl.F("ipc-posix-name", "apple.shm.notification_center")},
			Comment: "notifyd's shared state page, read by notify_check (Chromium common.sb)"},
		{Effect: sbpl.Allow, Ops: []string{"signal"}, Filters: sameSandbox,
			Comment: "signals within the run: SIGPIPE to itself (crbug 20370), kill and job control in shells (Codex base)"},
		{Effect: sbpl.Allow, Ops: []string{"process-info*"}, Filters: sameSandbox,
			Comment: "the run's own processes stay readable (the Rust procage's R-25); others stay denied by the header and the process-access class"},
	}
	return rules
}

// v1Ancestors returns the proper ancestors of every path Base V1 names,
// and /dev, sorted.
func v1Ancestors() []string {
	set := map[string]bool{"/dev": true}
	var all []string
	all = append(all, v1DyldRoots...)
	all = append(all, v1ProgramRoots...)
	all = append(all, v1PerlRoots...)
	all = append(all, v1ReadLiterals...)
	all = append(all, "/usr/share", "/private/var/db/timezone")
	for _, p := range all {
		for _, a := range ancestorsOf(p) {
			set[a] = true
		}
	}
	return sortedKeys(set)
}
