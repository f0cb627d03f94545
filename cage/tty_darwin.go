package cage

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// terminalName returns the /dev path of the pseudo-terminal f is open on.
// xnu names a pty's slave "ttys%03d" after its minor number
// (bsd/kern/tty_ptmx.c, PTSD_TEMPLATE); the name is confirmed by
// comparing device numbers, so a console or serial line yields false.
func terminalName(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return "", false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return "", false
	}
	name := fmt.Sprintf("/dev/ttys%03d", unix.Minor(uint64(st.Rdev)))
	var ns unix.Stat_t
	if err := unix.Stat(name, &ns); err != nil || ns.Rdev != st.Rdev || ns.Mode&unix.S_IFMT != unix.S_IFCHR {
		return "", false
	}
	return name, true
}
