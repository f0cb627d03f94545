package cage

// The Linux backend: Landlock and seccomp, applied by the child through
// internal/forkexec's calls. Until it lands, a Linux cage plans (with a
// placeholder plan) and Start refuses with an *UnsupportedError.

const (
	hostBackend    = BackendLinux
	hostHasBackend = true
)

func hostOSBuild() string { return "linux" }

// hostSandboxed: Landlock domains and seccomp filters stack, so an outer
// sandbox does not stop a cage from being built.
func hostSandboxed() (bool, error) { return false, nil }

// seatbeltCompiler: there is no libsandbox on Linux; a macOS plan is
// lowered only.
func seatbeltCompiler() (compiler, error) { return nil, nil }

func errLinuxNotYet() error {
	return &UnsupportedError{OSBuild: hostOSBuild(), What: "Linux backend not yet implemented"}
}

// hostEnforce makes the Linux backend of a Linux-backend cage.
func hostEnforce(*Cage, planned) (backend, error) { return notYet{}, nil }

// notYet refuses every spawn.
type notYet struct{}

func (notYet) probe(bool) error                     { return errLinuxNotYet() }
func (notYet) child(*spawnSpec) (*childSpec, error) { return nil, errLinuxNotYet() }
func (notYet) endRun(*run, bool) error              { return nil }

func hostProbeApply() error { return errLinuxNotYet() }
func hostProbeRuns() error  { return errLinuxNotYet() }
