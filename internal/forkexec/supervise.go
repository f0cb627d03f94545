package forkexec

import "errors"

// ErrNoSupervisor reports a platform without the new-names supervisor
// ([Supervisor]: linux/amd64 only).
var ErrNoSupervisor = errors.New("forkexec: the new-names supervisor needs linux/amd64")

// SuperviseCall returns a Call that starts s at step's position. The
// Attr must have PIDNamespace and MountProc.
func SuperviseCall(step Step, s *Supervisor) Call { return Call{step: step, sup: s} }

// The classes of a deny-list name (profile/linux's NewNameClass).
const (
	DenyAnywhere  = iota + 1 // refused in any directory
	DenyInGitDir             // refused beside any marker
	DenyInGitInfo            // refused where the parent holds a marker
	DenyMarker               // one of exactly three markers, refused where it completes them
)

// DenyName is a name the supervisor refuses to create, and where.
type DenyName struct {
	Name  string
	Class int
}
