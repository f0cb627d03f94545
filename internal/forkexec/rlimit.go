//go:build darwin || linux

package forkexec

import "syscall"

// Go raises its own soft RLIMIT_NOFILE at start-up and restores the original
// only in children it starts itself; the saved value
// (syscall.origRlimitNofile) is unexported and the linker refuses a pull of
// it [confirmed: Go 1.26 syscall/rlimit.go, cmd/link checkLinkname]. Our
// init runs after syscall's, so it sees the raised value, never the
// original. The sound approximation: if the limit still has the shape Go
// gives it (see goRaisedNofile) and nobody changed it since start-up, the
// child lowers the soft limit to the OS default (defaultNofile, capped at
// the hard limit). An explicit RLIMIT_NOFILE in Attr.Rlimits replaces this.
var (
	startNofile   syscall.Rlimit
	startNofileOK bool
)

func init() {
	startNofileOK = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &startNofile) == nil
}

// nofileRestore returns the RLIMIT_NOFILE the child should set, if any.
func nofileRestore() (syscall.Rlimit, bool) {
	if !startNofileOK || !goRaisedNofile(startNofile) {
		return syscall.Rlimit{}, false
	}
	var cur syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur) != nil || cur != startNofile {
		// Changed since start-up (syscall.Setrlimit also stops Go's own
		// restore): the caller chose this limit, let the child inherit it.
		return syscall.Rlimit{}, false
	}
	lim := cur
	lim.Cur = min(defaultNofile, cur.Max)
	return lim, true
}
