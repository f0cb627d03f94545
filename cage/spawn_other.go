//go:build !darwin

package cage

import "runtime"

// run is a started run; nothing starts off macOS.
type run struct{}

func unsupportedSpawn() error {
	return &UnsupportedError{OSBuild: runtime.GOOS, What: "spawning a caged process needs macOS Seatbelt"}
}

func (cmd *Cmd) start([]grant) error { return unsupportedSpawn() }
func (cmd *Cmd) wait() error         { return unsupportedSpawn() }
func (cmd *Cmd) kill() error         { return unsupportedSpawn() }

func platformSandboxed() (bool, error) { return false, nil }

// hostEnforces: no Seatbelt here, so the host's volumes are only described.
const hostEnforces = false

// platformCompiler: there is no libsandbox off macOS, so New lowers only.
func platformCompiler() (compiler, error) { return nil, nil }

// Probe reports whether caging works on this host; off macOS it never does.
func Probe() ProbeResult {
	return ProbeResult{OSBuild: runtime.GOOS, Apply: unsupportedSpawn(), Marker: unsupportedSpawn()}
}
