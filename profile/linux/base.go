package linux

// The Linux Base V1, frozen like profile.BaseV1: what system programs and
// the Go and Python runtimes need to start and run, and nothing of the home
// directory, temporary files or the network.
//
// Not in it, on purpose:
//   - /proc. A rule on /proc would cover every process's directory: other
//     processes' cmdline files are world-readable (proc(5)), and a rule
//     cannot name the child's own /proc/<pid> before it exists (a rule on
//     /proc/self would bind the parent's). environ and mem are
//     ptrace-guarded, and Landlock denies ptrace outside the domain, but
//     cmdline is not. Programs that need /proc (ps, some Python modules)
//     fail there; os.Executable's readlink of /proc/self/exe is not a
//     Landlock access and works.
//   - /sys but for CPU topology (sysconf(_SC_NPROCESSORS_ONLN) reads
//     /sys/devices/system/cpu/online) and transparent huge page sizes,
//     which the Go runtime reads at start-up (runtime/os_linux.go).
//   - /dev/pts: another terminal of the same user could be opened and
//     written. An inherited terminal is already open, so it keeps working;
//     /dev/tty (the controlling terminal) is allowed.
//   - /tmp, /var/tmp, /run (but systemd-resolved's directory when the
//     network is on), the home directory.

// Paths are grouped by what they get.
var (
	v1ExecTrees = []string{
		"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
		"/usr/local/bin", "/usr/local/sbin", "/usr/local/lib",
	}
	v1ReadTrees = []string{
		"/usr/share", "/usr/local/share",
		"/sys/devices/system/cpu", "/sys/kernel/mm/transparent_hugepage",
	}
	// Not /etc whole: root in a cage keeps uid 0, so DAC would let it read
	// root-owned secrets there (/etc/shadow, /etc/gshadow, SSH host keys,
	// sudoers, TLS private keys under /etc/ssl/private), and Landlock
	// cannot deny inside an allowed tree. These are what libc, the shells,
	// the dynamic loader, perl, Python and TLS clients read.
	v1EtcFiles = []string{
		"/etc/bash.bashrc", "/etc/debian_version", "/etc/environment", "/etc/gai.conf",
		"/etc/gitconfig", "/etc/group", "/etc/host.conf", "/etc/hostname", "/etc/hosts",
		"/etc/inputrc", "/etc/issue", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.preload",
		"/etc/locale.alias", "/etc/locale.conf", "/etc/localtime", "/etc/lsb-release",
		"/etc/magic", "/etc/magic.mime", "/etc/mime.types", "/etc/networks", "/etc/nsswitch.conf",
		"/etc/os-release", "/etc/passwd", "/etc/profile", "/etc/protocols", "/etc/resolv.conf",
		"/etc/services", "/etc/shells", "/etc/timezone", "/etc/zshenv",
	}
	v1EtcTrees = []string{
		"/etc/alternatives", "/etc/ca-certificates", "/etc/default", "/etc/ld.so.conf.d",
		"/etc/perl", "/etc/pki/ca-trust", "/etc/pki/tls/certs", "/etc/profile.d", "/etc/python3",
		"/etc/ssl/certs", "/etc/terminfo",
	}
	v1RWDevices   = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
	v1ReadDevices = []string{"/dev/random", "/dev/urandom"}
)

func baseV1Rules() []PathRule {
	var rs []PathRule
	for _, p := range v1ExecTrees {
		rs = append(rs, PathRule{Path: p, Access: fsRead | fsExec, Layer: LayerBase,
			Why: "system programs and libraries, including the ELF interpreter"})
	}
	for _, p := range v1ReadTrees {
		rs = append(rs, PathRule{Path: p, Access: fsRead, Layer: LayerBase,
			Why: "locales, time zones, terminfo, CPU topology, the Go runtime's huge page size"})
	}
	for _, p := range v1EtcFiles {
		rs = append(rs, PathRule{Path: p, Access: FSReadFile, Layer: LayerBase,
			Why: "system configuration programs read (users and groups, the loader cache, hosts, locale, time zone, shells)"})
	}
	for _, p := range v1EtcTrees {
		rs = append(rs, PathRule{Path: p, Access: fsRead, Layer: LayerBase,
			Why: "alternatives, loader, perl and Python configuration, CA certificates, terminfo"})
	}
	for _, p := range v1RWDevices {
		rs = append(rs, PathRule{Path: p, Access: FSReadFile | FSWriteFile | FSTruncate | FSIoctlDev, Layer: LayerBase,
			Why: "null, zero, full and the controlling terminal: O_TRUNC opens (shell redirections) and isatty's ioctl"})
	}
	for _, p := range v1ReadDevices {
		rs = append(rs, PathRule{Path: p, Access: FSReadFile, Layer: LayerBase, Why: "entropy"})
	}
	return rs
}
