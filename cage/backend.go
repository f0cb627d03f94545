package cage

// The backend seam.
//
// The portable files hold the whole run lifecycle: New (path resolution,
// backend choice), Command/Start/Wait/Kill, stdio and pipes, context end,
// WaitDelay, the private temporary directory, the environment, grants and
// Start-once. One OS sandbox plugs in below them, in two halves, as os/exec
// splits exec.go from exec_unix.go and cilium/ebpf splits
// platform_{linux,windows,other}.go:
//
//   - planning, portable, so either plan can be previewed from any OS:
//     [planSeatbelt] (seatbelt.go) and [planLinux] (linux.go) lower the
//     resolved policy to a [planned] value whose text is [Cage.Plan];
//   - enforcing, one per build: backend_darwin.go (Seatbelt),
//     backend_linux.go (Landlock and seccomp) and backend_other.go (none)
//     each define hostBackend, hostEnforce, hostSandboxed and hostProbe.
//     hostEnforce turns the host backend's plan into a [backend]: the
//     per-cage state every spawn of the cage reuses.
//
// A cage planned for another OS's backend gets [planOnly]: it plans, and
// Start refuses with an [*UnsupportedError]. Nothing in the lifecycle
// starts a target without a backend's child calls: forkexec refuses an
// Attr without apply and confirm calls on darwin, and the lifecycle never
// builds one on Linux without hostEnforce's backend.

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"github.com/procage-go/procage/internal/forkexec"
)

// Backend names an OS sandbox a cage can plan for and, on its own OS,
// enforce.
type Backend int

const (
	// BackendMacOS is Seatbelt: an SBPL profile compiled by libsandbox and
	// applied by the child.
	BackendMacOS Backend = iota + 1
	// BackendLinux is Landlock and seccomp, applied by the child.
	BackendLinux
)

func (b Backend) String() string {
	switch b {
	case BackendMacOS:
		return "macos"
	case BackendLinux:
		return "linux"
	}
	return fmt.Sprintf("Backend(%d)", int(b))
}

// WithBackend selects the backend a cage plans for. The default is the
// backend this OS enforces ([Cage.Backend] tells which), or [BackendMacOS]
// on an OS with none. A cage for another OS's backend only plans: Start
// returns an [*UnsupportedError] and nothing runs.
func WithBackend(b Backend) Option {
	return optionFunc(func(c *config) error {
		if b != BackendMacOS && b != BackendLinux {
			return fmt.Errorf("cage: unknown backend %d", int(b))
		}
		c.backend = b
		return nil
	})
}

// killRounds is how many search-and-kill rounds ending a run makes before
// giving up (the Rust crate procage 0.3.1, ROUNDS = 64:
// https://docs.rs/crate/procage/0.3.1/source/src/macos/lifetime.rs).
const killRounds = 64

// planned is what New lowered for one backend.
type planned interface {
	// kind is the backend the plan is for.
	kind() Backend
	// text is the plan text [Cage.Plan] returns.
	text() string
	// rules counts the plan's rules, for [Cage.String].
	rules() int
}

// backend is one cage's enforcing state, made once by New (hostEnforce).
// It is safe for concurrent use: every spawn of the cage calls it.
type backend interface {
	// probe checks, once per process (only verdicts are cached), that the
	// host can enforce: the in-child apply, and for a forking policy the
	// way a run's processes are found. nil means spawning may proceed.
	probe(forking bool) error
	// child prepares one spawn's raw calls, issued by the forked child
	// after its session, stdio, directory and limit steps and before exec.
	child(s *spawnSpec) (*childSpec, error)
	// endRun ends the run's processes other than the child (the lifecycle
	// signals and reaps the child itself, and kills its process group
	// while the child is unreaped): a forking run's escaped descendants,
	// in kill rounds (endRounds). reaped says whether the child has been
	// reaped: Wait calls it after reaping; Kill may call it before, or
	// concurrently with Wait. It is not called once Wait has ended the run.
	// An error names what could not be ended or checked.
	endRun(r *run, reaped bool) error
}

// spawnSpec is what one spawn hands its backend.
type spawnSpec struct {
	path   string  // the absolute path the child executes
	target string  // the target's kernel spelling (ExecTargetOnly), else ""
	grants []grant // resolved grants, the private temporary directory included (last)
	temp   string  // the private temporary directory (WithPrivateTemp), else ""
	marker string  // the run's marker, "" unless the policy forks
	tty    TTY     // the child's session mode
	dir    string  // the child's working directory, absolute ("" none)
	// keptFD is the lowest descriptor number the child's descriptor
	// shuffle leaves alone (forkexec.KeptAbove): a descriptor a call
	// names after it must be at least this.
	keptFD int
	// proxyPort is the localhost port of the run's egress proxy (a
	// proxy-mode policy), the only TCP port the child may connect to;
	// 0 for another mode. With the run's own network namespace it is a
	// port of the child's 127.0.0.1, where the child listens for the
	// proxy.
	proxyPort int
	// reopen are the descriptors the child opens again by path (Linux
	// T1: [handedFiles]).
	reopen []reopen
}

// handedFiles is a backend that decides what becomes of the descriptors
// a spawn hands over (Linux, handed_linux.go); any other backend hands
// each as it is.
type handedFiles interface {
	// copyStdio: the stdio file f is copied through a pipe instead, as
	// os/exec does for a writer or reader that is not an *os.File.
	copyStdio(f *os.File) (bool, error)
	// reopenFD: the child opens descriptor i (f; null: the /dev/null the
	// cage gives a nil stdio) again by path; an error refuses the spawn.
	reopenFD(i int, f *os.File, null bool) (*reopen, error)
}

// childSpec is a backend's part of one spawn.
type childSpec struct {
	// calls run in the child at their steps; forkexec sorts them by step.
	calls []forkexec.Call
	// keep holds everything calls point into, alive until the child has
	// executed its target or failed.
	keep any
	// cleanup, if set, runs once the fork is over, whatever its outcome.
	cleanup func()
	// name, if set, names the call a failed step reports (for
	// ApplyError.Call); "" when the step's own action failed.
	name func(*forkexec.StepError) string
	// pidNamespace and mountProc go to forkexec.Attr (Linux tier T1): the
	// run has its own pid namespace, whose pid 1 the cage reaps after the
	// target (run.init), and a fresh /proc.
	pidNamespace bool
	mountProc    bool
	// handoff, if set, returns the listeners the child made in its own
	// network namespace (Linux T1), once the child has executed its
	// target: the egress proxy's, or one per forwarded host port.
	handoff func() ([]net.Listener, error)
}

// grant is a resolved Grant: the path's kernel spelling.
type grant struct {
	path  string
	write bool
	own   bool // procage's own directory: the cage's preset caches
}

// planOnly is the backend of a cage planned for another OS, or made with
// PlanOnly: it refuses, with refused if the plan has gaps not accepted.
type planOnly struct {
	b       Backend
	refused error
}

func (p planOnly) err() error {
	if p.refused != nil {
		return p.refused
	}
	if p.b == hostBackend && hostHasBackend {
		return &UnsupportedError{OSBuild: runtime.GOOS, What: "the cage was made with PlanOnly"}
	}
	return &UnsupportedError{OSBuild: runtime.GOOS, What: "the " + p.b.String() + " backend only plans on this OS"}
}
func (p planOnly) probe(bool) error                     { return p.err() }
func (p planOnly) child(*spawnSpec) (*childSpec, error) { return nil, p.err() }
func (p planOnly) endRun(*run, bool) error              { return nil }
