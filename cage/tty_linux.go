//go:build linux

package cage

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// terminalName returns the /dev path of the terminal f is open on, where
// the system names it through /proc. Linux spawns make no terminal grant
// (Landlock does not check the inherited descriptor; see Cmd.Start), so
// this serves the tests of terminalGrants.
func terminalName(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var name string
	var tty bool
	_ = rc.Control(func(fd uintptr) {
		_, terr := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		tty = terr == nil
		name, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	})
	if !tty || !strings.HasPrefix(name, "/dev/") {
		return "", false
	}
	return name, true
}
