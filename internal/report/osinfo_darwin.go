package report

import "golang.org/x/sys/unix"

// osInfo returns the build (kern.osversion) and product version
// (kern.osproductversion) of the running macOS.
func osInfo() (build, version string) {
	build, _ = unix.Sysctl("kern.osversion")
	version, _ = unix.Sysctl("kern.osproductversion")
	return build, version
}
