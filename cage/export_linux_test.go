package cage

import (
	"errors"
	"sync"
	"syscall"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile/linux"
)

// SpellBaseRule is the spelling New would open for a base rule on p,
// resolved through fsys and checked against c's trees.
func SpellBaseRule(c *Cage, fsys pathresolve.FS, p string) (string, error) {
	return c.spellRule(pathresolve.New(fsys), linux.PathRule{Path: p, Access: linux.FSReadFile, Layer: linux.LayerBase})
}

// FakeBackend stands in for a sandbox backend so the portable lifecycle
// runs for real on Linux: its child calls are harmless raw calls (getpid
// at the apply and confirm steps) and its endRun kills the run's process
// group in rounds. It confines nothing; it exists only in tests.
type FakeBackend struct {
	ProbeErr  error // returned by probe
	FailStep  Step  // if set, the child fails this step (close(-1): EBADF)
	NoConfirm bool  // prepare no confirm call (a broken backend)
	EndErr    error // joined to endRun's result
	KeepGroup bool  // endRun leaves the process group alone

	mu     sync.Mutex
	spawns []FakeSpawn
	ends   int
}

// FakeSpawn records what one spawn handed the backend.
type FakeSpawn struct {
	Path, Target, Temp, Marker string
	Grants                     []Grant
	TTY                        TTY
}

// WithFakeBackend makes the cage enforce through f.
func WithFakeBackend(f *FakeBackend) Option {
	return optionFunc(func(c *config) error {
		c.enforce = func(*Cage, planned) (backend, error) { return f, nil }
		return nil
	})
}

func (f *FakeBackend) Spawns() []FakeSpawn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeSpawn(nil), f.spawns...)
}

func (f *FakeBackend) Ends() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ends
}

func (f *FakeBackend) probe(bool) error { return f.ProbeErr }

func (f *FakeBackend) child(s *spawnSpec) (*childSpec, error) {
	sp := FakeSpawn{Path: s.path, Target: s.target, Temp: s.temp, Marker: s.marker, TTY: s.tty}
	for _, g := range s.grants {
		sp.Grants = append(sp.Grants, Grant{Path: g.path, Write: g.write})
	}
	f.mu.Lock()
	f.spawns = append(f.spawns, sp)
	f.mu.Unlock()
	calls := []forkexec.Call{forkexec.RawCall(forkexec.StepApply, syscall.SYS_GETPID)}
	if !f.NoConfirm {
		calls = append(calls, forkexec.RawCall(forkexec.StepConfirm, syscall.SYS_GETPID))
	}
	if f.FailStep != 0 {
		calls = append(calls, forkexec.RawCall(forkexec.Step(f.FailStep), syscall.SYS_CLOSE, ^uintptr(0)))
	}
	return &childSpec{calls: calls, name: func(se *forkexec.StepError) string {
		if Step(se.Step) == f.FailStep {
			return "close(-1)"
		}
		return ""
	}}, nil
}

func (f *FakeBackend) endRun(r *run, reaped bool) error {
	f.mu.Lock()
	f.ends++
	f.mu.Unlock()
	var err error
	// Before the child is reaped its zombie keeps the group alive; the
	// lifecycle has already killed the group, so only Wait's call searches.
	if !f.KeepGroup && reaped {
		err = endGroup(r.pid)
	}
	return errors.Join(err, f.EndErr)
}

// SetPIDNamespace turns the per-run pid namespace on or off (T1's run
// lifetime, off by default) and returns a function that restores it.
func SetPIDNamespace(on bool) (restore func()) {
	old := pidNamespace
	pidNamespace = on
	return func() { pidNamespace = old }
}
