package cage

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/profile/linux"
)

// The descriptors a T1 spawn hands over. A descriptor keeps the mount it
// was opened on, and /proc/self/fd/N reaches its file by path: a file
// the caller hands over sits on the host's mount, outside the run's
// read-only view. At T1 the child opens /dev/null (a nil stdio) itself
// through that view. For root, whose mode, owner and xattr changes
// seccomp lets through at T1 (linux.Plan.RootMetadata), the child also
// reopens each terminal there, and any other file or device is copied
// through a pipe as stdio and refused as an ExtraFiles entry. (A caller
// that is not root may be unable to open its terminal again, one su or
// sudo left owned by another user; what it could change through the
// descriptor is its own.) Pipes and sockets are handed as they are: their
// inodes are on pipefs and sockfs, which no mount shows by path.

// reopen is one descriptor the child opens again by path, over the one
// handed: its access mode, and the file system and device number the
// new one must have.
type reopen struct {
	fd        int
	path      string
	flags     int
	dev, rdev uint64
}

// handedKind is what a handed descriptor is open on.
type handedKind int

const (
	handedPipe     handedKind = iota + 1 // a pipe or socket
	handedTerminal                       // a terminal, by its /dev path
	handedOther                          // a file, directory or other device
	handedCtty                           // /dev/tty: no path the run's session can reopen
)

// classifyHanded says what f is open on, with its stat and, for a
// terminal, its path.
func classifyHanded(f *os.File) (handedKind, unix.Stat_t, string, error) {
	var st unix.Stat_t
	var sfs unix.Statfs_t
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, st, "", err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if serr = unix.Fstat(int(fd), &st); serr == nil {
			serr = unix.Fstatfs(int(fd), &sfs)
		}
	}); err != nil {
		return 0, st, "", err
	}
	if serr != nil {
		return 0, st, "", serr
	}
	switch {
	case sfs.Type == unix.PIPEFS_MAGIC || sfs.Type == unix.SOCKFS_MAGIC:
		return handedPipe, st, "", nil
	case st.Mode&unix.S_IFMT != unix.S_IFCHR:
		return handedOther, st, "", nil
	}
	p, ok := terminalName(f)
	switch {
	case !ok:
		return handedOther, st, "", nil
	case p == "/dev/tty":
		return handedCtty, st, p, nil
	}
	return handedTerminal, st, p, nil
}

// copyStdio reports whether stdio f must be copied through a pipe: at T1
// for root, anything but a pipe, a socket or a terminal.
func (b *linuxBackend) copyStdio(f *os.File) (bool, error) {
	if !b.plan.RootMetadata() {
		return false, nil
	}
	k, _, _, err := classifyHanded(f)
	if err != nil {
		return false, fmt.Errorf("cage: a standard descriptor: %w", err)
	}
	return k == handedOther, nil
}

// reopenFD says whether the T1 child opens descriptor i (f; null: the
// /dev/null of a nil stdio) again by path, and refuses for root what no
// path in the run's view can replace.
func (b *linuxBackend) reopenFD(i int, f *os.File, null bool) (*reopen, error) {
	if b.plan.Tier != linux.TierT1 {
		return nil, nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fl int
	var ferr error
	if err := rc.Control(func(fd uintptr) { fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return nil, err
	}
	if ferr != nil {
		return nil, fmt.Errorf("cage: descriptor %d: %w", i, ferr)
	}
	if null {
		var st unix.Stat_t
		if err := unix.Lstat(os.DevNull, &st); err != nil {
			return nil, fmt.Errorf("cage: %w", err)
		}
		return &reopen{fd: i, path: os.DevNull, flags: fl & unix.O_ACCMODE, dev: st.Dev, rdev: st.Rdev}, nil
	}
	k, st, p, err := classifyHanded(f)
	if err != nil {
		return nil, fmt.Errorf("cage: descriptor %d: %w", i, err)
	}
	switch {
	case !b.plan.RootMetadata() || k == handedPipe:
		return nil, nil
	case k == handedTerminal:
		return &reopen{fd: i, path: p, flags: fl & unix.O_ACCMODE, dev: st.Dev, rdev: st.Rdev}, nil
	case k == handedCtty:
		return nil, fmt.Errorf("cage: %s is /dev/tty, which a run in its own session cannot open again (the cage reopens a terminal through its read-only view so root cannot change the host's device): hand the terminal by its own path (tty(1)), or use tier T2", handedName(i, f))
	case i < 3:
		return nil, fmt.Errorf("cage: BUG: stdio %d (%s) neither copied nor reopened", i, f.Name())
	}
	return nil, fmt.Errorf("cage: %s is a file or device on the host's mount, where root in a T1 run could change its mode, owner or extended attributes through /proc/self/fd (seccomp lets root's metadata calls through at T1): hand a pipe or a socket instead, or use tier T2", handedName(i, f))
}

// handedName names descriptor i as the caller gave it.
func handedName(i int, f *os.File) string {
	if i < 3 {
		return fmt.Sprintf("%s (%s)", [...]string{"Stdin", "Stdout", "Stderr"}[i], f.Name())
	}
	return fmt.Sprintf("ExtraFiles[%d] (%s)", i-3, f.Name())
}
