//go:build linux && (!amd64 || procage_nosupervisor)

package forkexec

// NewSupervisor reports ErrNoSupervisor: the supervisor's call list is
// x86_64's, and a build with the tag procage_nosupervisor leaves it out
// (.ci/run's fuzzing builds: libfuzzer's instrumentation adds a call to
// every comparison, for which the supervisor's nosplit stack has no room).
func NewSupervisor(sock int) (*Supervisor, error) { return nil, ErrNoSupervisor }

// SetExempt reports ErrNoSupervisor.
func (s *Supervisor) SetExempt(roots []string) error { return ErrNoSupervisor }

// SetDenyList reports ErrNoSupervisor.
func (s *Supervisor) SetDenyList(names []DenyName, folds [][2]string, ignore [][2]rune) error {
	return ErrNoSupervisor
}
