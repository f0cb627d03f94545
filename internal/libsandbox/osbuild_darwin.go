package libsandbox

import "golang.org/x/sys/unix"

// osBuild names the macOS build for unsupported errors; bytecode and the
// private interface are tied to it. [inferred sysctl name; confirmed: the
// Rust procage 0.6.0's probe records the OS build]
func osBuild() string {
	v, err := unix.Sysctl("kern.osversion")
	if err != nil || v == "" {
		return "macOS (build unknown)"
	}
	return "macOS " + v
}
