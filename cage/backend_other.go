//go:build !darwin && !linux

package cage

import "runtime"

// No sandbox backend on this OS: a cage plans (for macOS by default) and
// Start refuses with an *UnsupportedError.

const (
	hostBackend    = BackendMacOS
	hostHasBackend = false
)

func hostOSBuild() string { return runtime.GOOS }

// hostLandlockABI: no Landlock here; a Linux plan is for the newest ABI.
func hostLandlockABI() int { return 0 }

func hostSandboxed() (bool, error) { return false, nil }

func seatbeltCompiler() (compiler, error) { return nil, nil }

func errNoBackend() error {
	return &UnsupportedError{OSBuild: runtime.GOOS, What: "no sandbox backend for this OS"}
}

// hostEnforce is never called here (hostHasBackend is false).
func hostEnforce(*Cage, planned) (backend, error) { return nil, errNoBackend() }

func hostProbeApply() error { return errNoBackend() }
func hostProbeRuns() error  { return errNoBackend() }

// hostProbeT1: no Linux namespaces here.
func hostProbeT1() error { return errNoBackend() }

// hostProbeProc: no Linux namespaces here.
func hostProbeProc() error { return nil }

// hostAnonInodeSetattr: a Linux plan previewed here is the newest kernel's.
func hostAnonInodeSetattr() bool { return false }

// hostPolicyProbe: nothing to check beyond the apply probe.
func hostPolicyProbe() error { return nil }

// hostNewNames: a Linux plan previewed here shows the trust-handoff gap
// the new-names supervisor would close only on an amd64 host with 5.19.
func hostNewNames() bool { return false }

// hostProbeNewNames: only a Linux host probes the supervisor.
func hostProbeNewNames() error { return nil }
