//go:build !darwin

package report

import "runtime"

// osInfo names the OS: reports are only made on macOS.
func osInfo() (build, version string) { return runtime.GOOS, "" }
